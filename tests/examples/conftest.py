"""Every tutorial runs twice: in the interpreter and compiled for this machine's CPU."""

import pytest

from naiad import knobs


@pytest.fixture(autouse=True, params=["interpreter", "cpu"])
def backend(request):
    with knobs.override(NAIAD_BACKEND=request.param):
        yield request.param
