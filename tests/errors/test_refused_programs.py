"""Programs Triton refuses at compile time, refused by Naiad too: each is a `CompilationError`
at the user's own file:line:col, in the interpreter, compiled for the CPU and compiled for a GPU,
before anything runs. Messages keep the words Triton programs and tests look for."""

import numpy as np
import pytest
from diagnostic_checks import assert_located

import naiad
import naiad.language as tl
from naiad import knobs


def _interpret(kernel, *args, **kwargs):
    with knobs.override(NAIAD_BACKEND="auto", NAIAD_INTERPRET=1):
        kernel[(1,)](*args, **kwargs)


def _compiled(kernel, *args, **kwargs):
    with knobs.override(NAIAD_BACKEND="cpu"):
        kernel[(1,)](*args, **kwargs)


def _warmup_cuda(kernel, *args, **kwargs):
    kernel.warmup(*args, grid=(1,), target="cuda:sm_90a", **kwargs)


MODES = {"interpreter": _interpret, "cpu": _compiled, "warmup cuda": _warmup_cuda}


def _hides(mode: str) -> bool:
    """Whether the mode's traceback hides Naiad's frames (`warmup()` shows the compiler's: see
    test_unsupported_constructs.py)."""
    return not mode.startswith("warmup")


@naiad.jit
def histogram_of(x_ptr, z_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 8))
    tl.store(z_ptr + tl.arange(0, N), tl.histogram(x, N))  # MARK


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int64, np.uint8])
def test_histogram_of_other_than_32_bit_integers(dtype, mode):
    x = np.random.default_rng(16).integers(0, 4, 8).astype(dtype)
    z = np.full(4, -1, np.int32)
    with pytest.raises(naiad.CompilationError) as info:
        MODES[mode](histogram_of, x, z, N=4)
    message = assert_located(
        info.value, histogram_of, "# MARK", at="tl.histogram", frames_hidden=_hides(mode)
    )
    assert "histogram only supports 32-bit integer input" in message
    assert np.dtype(dtype).name in message
    assert (z == -1).all()
