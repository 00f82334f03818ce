"""Integer casts and narrow arithmetic in masks and offsets (issue 13, item 3).

The pointer analysis used to look through every integer cast and read its operand signed: a
bool flag in a mask read -1 for True (nothing stored), `v.to(tl.uint8)` of -1 read -1 instead of
255, `v.to(tl.int8)` of 260 read 260 instead of 4 (a store past its mask) and
`x + v.to(tl.int8)` of 256 read x[256:] instead of x[0:]; `tl.int8` sums that wrap were read
unwrapped. Each kernel runs compiled for this CPU, in the interpreter and in the reference
evaluator on the same random data; the interpreter's result is checked against NumPy.
"""

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad.testing.differential import run_differential

EXECUTORS = ("interpreter", "evaluator", "cpu")
BLOCK = 16
NP = {
    tl.int1: np.bool_,
    tl.int8: np.int8,
    tl.uint8: np.uint8,
    tl.int16: np.int16,
    tl.uint16: np.uint16,
    tl.int32: np.int32,
    tl.uint32: np.uint32,
}


def _cast(v: int, dtype) -> int:
    """`v.to(dtype)` of an integer, as the kernel computes it (wrapping; a bool is v != 0)."""
    if dtype is tl.int1:
        return int(v != 0)
    return int(np.array(v, np.int64).astype(NP[dtype]))


def _run(kernel, n_x, n_out, **scalars):
    """`x_ptr` (random, `n_x` elements) and `out_ptr` after `kernel` ran, every executor
    agreeing."""

    def make(rng):
        x = rng.standard_normal(n_x).astype(np.float32)
        return dict(x_ptr=x, out_ptr=np.empty(n_out, np.float32), BLOCK=BLOCK, **scalars)

    arrays = run_differential(kernel, make, (1,), EXECUTORS, {"out_ptr": "store"}, seed=n_x)
    return arrays["x_ptr"], arrays["out_ptr"]


@naiad.jit
def flag_mask(x_ptr, out_ptr, flag, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + flag + r)
    tl.store(out_ptr + r, x, mask=r < flag)
    tl.store(out_ptr + BLOCK + r, x, mask=flag <= r)


@pytest.mark.parametrize("flag", [True, False])
def test_bool_flag_in_mask_and_offset(flag):
    x, out = _run(flag_mask, BLOCK + 1, 2 * BLOCK, flag=flag)
    f, r = int(flag), np.arange(BLOCK)
    expected = np.full(2 * BLOCK, np.nan, np.float32)
    expected[:BLOCK][r < f] = x[f : f + BLOCK][r < f]
    expected[BLOCK:][r >= f] = x[f : f + BLOCK][r >= f]
    np.testing.assert_array_equal(out, expected)


@naiad.jit
def narrowed_mask(x_ptr, out_ptr, v, DTYPE: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    limit = v.to(DTYPE)
    x = tl.load(x_ptr + r, mask=r < limit, other=-1.5)
    tl.store(out_ptr + r, x)
    tl.store(out_ptr + BLOCK + r, x, mask=limit <= r.to(tl.int64))


NARROWED_LIMITS = [
    (tl.uint8, -1),  # 255: every lane
    (tl.int8, 260),  # 4
    (tl.uint8, 260),  # 4
    (tl.int8, -250),  # 6
    (tl.uint16, -65531),  # 5
    (tl.uint16, -1),  # 65535
    (tl.int16, 65541),  # 5
    (tl.int16, 98307),  # -32765: no lane
    (tl.uint32, -1),  # 4294967295, compared unsigned with an int32, signed with an int64
    (tl.uint32, 2**32 + 5),  # an int64 argument: 5
    (tl.int32, 2**32 + 3),  # 3
    (tl.int1, 7),  # True: 1
]


@pytest.mark.parametrize(("dtype", "v"), NARROWED_LIMITS, ids=str)
def test_narrowed_scalar_in_mask(dtype, v):
    x, out = _run(narrowed_mask, BLOCK, 2 * BLOCK, v=v, DTYPE=dtype)
    limit, r = _cast(v, dtype), np.arange(BLOCK)
    expected = np.full(2 * BLOCK, np.nan, np.float32)
    expected[:BLOCK] = np.where(r < limit, x, np.float32(-1.5))
    expected[BLOCK:][limit <= r] = expected[:BLOCK][limit <= r]
    np.testing.assert_array_equal(out, expected)


@naiad.jit
def narrowed_offset(x_ptr, out_ptr, v, DTYPE: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + v.to(DTYPE) + r)
    tl.store(out_ptr + v.to(DTYPE) + r, x * 2.0)


NARROWED_OFFSETS = [
    (tl.int8, 256),  # 0
    (tl.int8, -250),  # 6
    (tl.uint8, -1),  # 255
    (tl.uint8, 300),  # 44
    (tl.uint16, 65536 + 5),  # 5
    (tl.uint16, -1),  # 65535
    (tl.int16, 65536 + 7),  # 7
    (tl.int16, -65536 + 100),  # 100
    (tl.uint32, 2**32 + 9),  # 9
    (tl.int32, 2**32 + 11),  # 11
    (tl.int1, 5),  # 1
]


@pytest.mark.parametrize(("dtype", "v"), NARROWED_OFFSETS, ids=str)
def test_narrowed_scalar_in_offsets(dtype, v):
    start = _cast(v, dtype)
    n = start + BLOCK + 3
    x, out = _run(narrowed_offset, n, n, v=v, DTYPE=dtype)
    expected = np.full(n, np.nan, np.float32)
    expected[start : start + BLOCK] = x[start : start + BLOCK] * np.float32(2.0)
    np.testing.assert_array_equal(out, expected)


@naiad.jit
def wrapped_block(x_ptr, out_ptr, v, BIAS, DTYPE: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    cast = (r + v).to(DTYPE)  # a block that wraps inside itself
    tl.store(out_ptr + r, tl.load(x_ptr + BIAS + cast), mask=cast < 4)
    narrow = r.to(DTYPE) + v.to(DTYPE)  # the same values, by arithmetic in DTYPE
    tl.store(out_ptr + BLOCK + r, tl.load(x_ptr + BIAS + narrow), mask=narrow < 4)


WRAPPED_BLOCKS = [
    (tl.int8, 120, 128),  # 120 .. 127, then -128 .. -121
    (tl.uint8, 250, 0),  # 250 .. 255, 0 .. 9
    (tl.int16, 32760, 32768),
    (tl.uint16, 65530, 0),
]


@pytest.mark.parametrize(("dtype", "v", "bias"), WRAPPED_BLOCKS, ids=str)
def test_block_cast_wraps_inside_the_block(dtype, v, bias):
    n = 1 << (8 * np.dtype(NP[dtype]).itemsize)  # BIAS + every value of DTYPE
    x, out = _run(wrapped_block, n, 2 * BLOCK, v=v, BIAS=bias, DTYPE=dtype)
    offsets = (np.arange(BLOCK) + v).astype(NP[dtype]).astype(np.int64)
    kept = np.where(offsets < 4, x[bias + offsets], np.float32(np.nan))
    np.testing.assert_array_equal(out, np.concatenate([kept, kept]))


@naiad.jit
def exact_casts(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    lanes = tl.arange(0, BLOCK).to(tl.int16)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.5)
    y = tl.load(x_ptr + pid * BLOCK + lanes.to(tl.uint16))
    tl.store(out_ptr + offs, x + y, mask=offs < n)


def test_exact_casts_stay_strided_views():
    """Casts that keep every value (a sign extension, a narrowing or a zero extension of a
    range that fits) still give strided views, not element-by-element accesses."""
    x = np.random.default_rng(3).standard_normal(4 * BLOCK).astype(np.float32)
    out = np.full(4 * BLOCK, np.nan, np.float32)
    compiled = exact_casts.warmup(x, out, 4 * BLOCK - 3, BLOCK=BLOCK, grid=(4,), target="cpu")
    assert "memref.load" not in compiled.asm["linalg"]
    exact_casts[(4,)](x, out, 4 * BLOCK - 3, BLOCK=BLOCK)
    expected = x + x
    expected[-3:] = np.nan
    np.testing.assert_array_equal(out, expected)
