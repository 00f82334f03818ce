"""`cpu-widen-dot-operands` on a compiled kernel of attention's shape (widen_dot_operands.py).

The query tile is loaded before the loop, the scores are rounded to the value type in the loop
and multiplied by the value tile: every dot operand is a 16-bit float that the pass widens to
f32 where it is made (on a CPU with AVX512-BF16, bf16 operands stay bf16 for `vdpbf16ps`). The
output matches a float64 NumPy reference of the same steps, and the kernel compiled without the
pass bit for bit.
"""

import ml_dtypes
import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.backends.cpu import compiler as cpu_compiler
from naiad.backends.cpu import widen_dot_operands
from naiad.backends.cpu.codegen import lower_matmul_bf16
from naiad.runtime import compiler
from naiad.testing import check

DTYPES = {"bfloat16": np.dtype(ml_dtypes.bfloat16), "float16": np.dtype(np.float16)}
M, D, BLOCK, S = 32, 32, 16, 64


@naiad.jit
def _scores_times_values(q_ptr, k_ptr, v_ptr, o_ptr, S, M: tl.constexpr, D: tl.constexpr,
                         BLOCK: tl.constexpr):  # fmt: skip
    rows, dims, cols = tl.arange(0, M), tl.arange(0, D), tl.arange(0, BLOCK)
    q = tl.load(q_ptr + rows[:, None] * D + dims[None, :])
    acc = tl.zeros([M, D], tl.float32)
    for start in range(0, S, BLOCK):
        at = (start + cols)[:, None] * D + dims[None, :]
        k = tl.load(k_ptr + at)
        v = tl.load(v_ptr + at)
        s = tl.dot(q, tl.trans(k))
        acc = tl.dot(s.to(v.dtype), v, acc)
    tl.store(o_ptr + rows[:, None] * D + dims[None, :], acc)


@pytest.fixture(autouse=True)
def compiled(cpu_fresh_cache):
    _forget_compiled()
    yield
    _forget_compiled()


def _forget_compiled():
    compiler._cache = None
    _scores_times_values.forget_compiled()


def _quarters(shape, dtype, gen):
    """Never zero: +-[0.25, 2] in quarters, so that each score (a sum of D products) is exact
    in f32 and only its rounding to `dtype` is inexact."""
    magnitude = gen.integers(1, 8, size=shape, endpoint=True) / 4
    return (magnitude * gen.choice([-1.0, 1.0], shape)).astype(dtype)


def _run(dtype):
    gen = np.random.default_rng(5)
    q, k, v = (
        _quarters((M, D), dtype, gen),
        _quarters((S, D), dtype, gen),
        _quarters((S, D), dtype, gen),
    )
    out = np.full((M, D), np.nan, np.float32)
    _scores_times_values[(1,)](q, k, v, out, S, M, D, BLOCK)
    scores = (q.astype(np.float64) @ k.astype(np.float64).T).astype(dtype)  # exact, then rounded
    reference = scores.astype(np.float64) @ v.astype(np.float64)
    check("dot", out, reference, "cpu", np.float32, k=S)
    return out


@pytest.mark.parametrize("name", list(DTYPES))
def test_widened_operands_give_the_same_bits(monkeypatch, tmp_path, name):
    widened = []
    count = widen_dot_operands.widen_dot_operands

    def spy(module):
        widened.append(count(module))
        return widened[-1]

    monkeypatch.setattr(widen_dot_operands, "widen_dot_operands", spy)
    with_pass = _run(DTYPES[name])
    # q, k.T, the rounded scores, v; none where vdpbf16ps reads bf16 as it is
    expected = 0 if name == "bfloat16" and lower_matmul_bf16.has_bf16_pairs() else 4
    assert widened == [expected]
    _forget_compiled()
    pipeline = tuple(
        p
        for p in cpu_compiler.CPU_PIPELINE
        if not isinstance(p, widen_dot_operands.WidenDotOperands)
    )
    monkeypatch.setattr(cpu_compiler, "CPU_PIPELINE", pipeline)
    with knobs.override(NAIAD_CACHE_DIR=str(tmp_path / "without")):
        without = _run(DTYPES[name])
    assert widened == [expected]
    np.testing.assert_array_equal(with_pass.view(np.uint32), without.view(np.uint32))
