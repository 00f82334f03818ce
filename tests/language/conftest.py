"""Fixtures of the language tests: a seeded random generator per test, and the back end.

Every test gets its own stream, seeded from its node id, so adding a test never changes another
one's inputs. (Hypothesis' settings are per test: `helpers.hypothesis_settings`.)
"""

import zlib

import numpy as np
import pytest

from naiad import knobs


@pytest.fixture
def gen(request) -> np.random.Generator:
    """A NumPy generator seeded from the test's node id."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


@pytest.fixture(autouse=True, params=["interpreter", "cpu"])
def backend(request):
    """Every language test runs in the interpreter and compiled for this machine's CPU (the
    same kernel, the same reference). `@pytest.mark.interpreter_only(reason)` keeps a test to
    the interpreter: behaviour only it has (every access checked without debug mode) or the CUDA
    target's rules it enforces."""
    marker = request.node.get_closest_marker("interpreter_only")
    if request.param == "cpu" and marker is not None:
        pytest.skip(marker.args[0] if marker.args else "interpreter only")
    with knobs.override(NAIAD_BACKEND=request.param):
        yield request.param
