"""Fixtures of the language tests: a seeded random generator per test, and the back end.

Every test gets its own stream, seeded from its node id, so adding a test never changes another
one's inputs. (Hypothesis' settings are per test: `helpers.hypothesis_settings`.)
"""

import zlib

import numpy as np
import pytest
from cuda_transfer import cuda_available, launch_on_cuda
from helpers import set_backend

from naiad import knobs
from naiad.runtime.jit import JITFunction


@pytest.fixture
def gen(request) -> np.random.Generator:
    """A NumPy generator seeded from the test's node id."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


# Tests that cannot run on the GPU by their nature, by name: why.
CUDA_EXCLUDED = {
    "test_rand_is_uniform": "one program of 2**17 elements (1024 registers a thread): the "
    "statistics need no GPU, and ptxas takes minutes over it",
    "test_randn_is_normal": "one program of 2**17 elements, as test_rand_is_uniform",
}


# The settings of the executors that are not NAIAD_BACKEND's own values: "auto" compiles, and a
# launch on CUDA tensors goes to their GPU; "tiered" is the default mode, a first launch
# interpreted under the CPU's rules while it compiles.
_SETTINGS = {
    "cuda": {"NAIAD_BACKEND": "auto"},
    "tiered": {"NAIAD_BACKEND": "auto", "NAIAD_CPU_TIERING": "auto"},
}


@pytest.fixture(
    autouse=True,
    params=[
        "interpreter",
        "cpu",
        pytest.param("tiered", marks=pytest.mark.full),
        pytest.param("cuda", marks=pytest.mark.gpu),
    ],
)
def backend(request, monkeypatch):
    """Every language test runs in the interpreter and compiled for this machine's CPU (the
    same kernel, the same reference), and with `-m gpu` on a machine with CUDA compiled for its
    GPU: the NumPy arrays a launch gets travel to the device as torch CUDA tensors and back
    (cuda_transfer.py). `@pytest.mark.interpreter_only(reason)` keeps a test to the
    interpreter: behaviour only it has (every access checked without debug mode) or the CUDA
    target's rules it enforces; `CUDA_EXCLUDED` names the tests the GPU cannot run by nature."""
    marker = request.node.get_closest_marker("interpreter_only")
    if request.param != "interpreter" and marker is not None:
        pytest.skip(marker.args[0] if marker.args else "interpreter only")
    if request.param == "cuda":
        if not cuda_available():
            pytest.skip("no CUDA device")
        reason = CUDA_EXCLUDED.get(request.node.originalname)
        if reason is not None:
            pytest.skip(reason)
        monkeypatch.setattr(JITFunction, "run", launch_on_cuda(JITFunction.run))
    set_backend(request.param)
    with knobs.override(**_SETTINGS.get(request.param, {"NAIAD_BACKEND": request.param})):
        yield request.param
