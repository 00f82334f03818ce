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


@naiad.jit
def scaled_by_unequal_blocks(out_ptr, LHS_SCALES: tl.constexpr, RHS_SCALES: tl.constexpr):
    rows = tl.arange(0, 32)
    a = tl.full((32, 64), 0x38, tl.uint8)
    b = tl.full((64, 32), 0x38, tl.uint8)
    a_scale = tl.full((32, LHS_SCALES), 127, tl.uint8)
    b_scale = tl.full((32, RHS_SCALES), 127, tl.uint8)
    c = tl.dot_scaled(a, a_scale, "e5m2", b, b_scale, "e5m2")  # MARK
    tl.store(out_ptr + rows[:, None] * 32 + rows[None, :], c)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_dot_scaled_operands_scaled_by_blocks_of_different_lengths(mode):
    """lhs_scale [32, 4] scales blocks of 16 of K = 64, rhs_scale [32, 2] blocks of 32."""
    out = np.full((32, 32), -1, np.float32)
    with pytest.raises(naiad.CompilationError) as info:
        MODES[mode](scaled_by_unequal_blocks, out, LHS_SCALES=4, RHS_SCALES=2)
    message = assert_located(
        info.value,
        scaled_by_unequal_blocks,
        "# MARK",
        at="tl.dot_scaled",
        frames_hidden=_hides(mode),
    )
    assert "same scale factor" in message and "16" in message and "32" in message
    assert (out == -1).all()


def test_dot_scaled_with_more_scales_than_k_elements():
    out = np.full((32, 32), -1, np.float32)
    with pytest.raises(naiad.CompilationError) as info:
        _interpret(scaled_by_unequal_blocks, out, LHS_SCALES=128, RHS_SCALES=128)
    message = assert_located(info.value, scaled_by_unequal_blocks, "# MARK", at="tl.dot_scaled")
    assert "lhs_scale must be shaped [32, K / s]" in message and "K = 64" in message


def test_dot_scaled_with_equal_blocks_runs():
    """The same kernel with both scales over blocks of 32 (the refusals above are of shapes
    only): e5m2 0x38 is 0.5 and e8m0 127 is 2^0, so every element is 64 products of 0.25."""
    out = np.full((32, 32), -1, np.float32)
    _interpret(scaled_by_unequal_blocks, out, LHS_SCALES=2, RHS_SCALES=2)
    assert (out == 0.5 * 0.5 * 64).all()


@naiad.jit(do_not_specialize=["N"])
def constexpr_not_specialized(out_ptr, N: tl.constexpr):  # MARK
    tl.store(out_ptr + tl.arange(0, 16), tl.full((16,), N, tl.int32))


@naiad.jit(do_not_specialize=[1])
def constexpr_not_specialized_by_index(out_ptr, N: tl.constexpr):  # MARK
    tl.store(out_ptr + tl.arange(0, 16), tl.full((16,), N, tl.int32))


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("kernel", [constexpr_not_specialized, constexpr_not_specialized_by_index])
def test_constexpr_listed_in_do_not_specialize(kernel, mode):
    out = np.full(16, -1, np.int32)
    with pytest.raises(naiad.CompilationError) as info:
        MODES[mode](kernel, out, 5)
    message = assert_located(info.value, kernel, "# MARK", at="N: tl", frames_hidden=_hides(mode))
    assert "N marked as constexpr and listed in do_not_specialize" in message
    assert "do_not_specialize" in info.value.help
    assert (out == -1).all()


def test_compile_of_a_constexpr_listed_in_do_not_specialize():
    """Triton's compile API (the active driver's target: the CPU here) refuses it too."""
    from naiad.triton.compiler import ASTSource, compile

    source = ASTSource(constexpr_not_specialized, {"out_ptr": "*i32"}, {"N": 5})
    with pytest.raises(naiad.CompilationError, match="N marked as constexpr"):
        compile(source)
