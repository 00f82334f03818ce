"""Scans: cumsum, cumprod and tl.associative_scan (tuples, reverse, user combine functions) along
either axis of 2-D blocks, with Triton's result dtypes (Triton's test_scan2d / test_scan_1d)."""

import numpy as np
import pytest
from memory_helpers import assert_exact, kernel_error, poisoned, random_array, rng

import naiad
import naiad.language as tl
from naiad.testing import check


@naiad.jit
def _first(a, b):
    return a


@naiad.jit
def _linear_recurrence(a1, b1, a2, b2):
    return a1 * a2, b1 * a2 + b2


@naiad.jit
def _cummax(v1, i1, v2, i2):
    gt = (v2 > v1) | ((v2 == v1) & (i2 > i1))
    return tl.where(gt, v2, v1), tl.where(gt, i2, i1)


@naiad.jit
def _scan_2d(
    src,
    src2,
    dst,
    dst2,
    M: tl.constexpr,
    N: tl.constexpr,
    OP: tl.constexpr,
    AXIS: tl.constexpr,
    REVERSE: tl.constexpr,
):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(src + offs)
    if OP == "cumsum":
        z = tl.cumsum(x, axis=AXIS, reverse=REVERSE)
    elif OP == "cumprod":
        z = x.cumprod(AXIS, reverse=REVERSE)
    elif OP == "first":
        z = tl.associative_scan(x, AXIS, _first, reverse=REVERSE)
    elif OP == "linear_recurrence":
        y = tl.load(src2 + offs)
        _, z = tl.associative_scan((x, y), AXIS, _linear_recurrence, reverse=REVERSE)
    else:
        index = tl.broadcast_to(
            tl.arange(0, N)[None, :] if AXIS == 1 else tl.arange(0, M)[:, None], (M, N)
        )
        z, i = tl.associative_scan((x, index), AXIS, _cummax, reverse=REVERSE)
        tl.store(dst2 + offs, i)
    tl.store(dst + offs, z)


def _reference(op, x, y, axis, reverse):
    if reverse:
        x, y = np.flip(x, axis), np.flip(y, axis)
    x64 = x.astype(np.float64) if x.dtype.kind == "f" else x.astype(np.int64)
    index = None
    if op == "cumsum":
        z = np.cumsum(x64, axis=axis)
    elif op == "cumprod":
        z = np.cumprod(x64, axis=axis)
    elif op == "first":
        z = np.broadcast_to(np.take(x, [0], axis=axis), x.shape).astype(x.dtype)
    elif op == "linear_recurrence":
        xm, ym = (
            np.moveaxis(x.astype(np.float64), axis, -1),
            np.moveaxis(y.astype(np.float64), axis, -1),
        )
        h = np.zeros(xm.shape)
        acc = np.zeros(xm.shape[:-1])
        for t in range(xm.shape[-1]):
            acc = acc * xm[..., t] + ym[..., t]
            h[..., t] = acc
        z = np.moveaxis(h, -1, axis)
    else:
        # One element at a time in scan order, with the kernel's combine on original indices.
        n = x.shape[axis]
        xm = np.moveaxis(x, axis, -1)
        original = np.arange(n)[::-1] if reverse else np.arange(n)
        zm, im = np.empty_like(xm), np.empty(xm.shape, np.int64)
        for row in np.ndindex(*xm.shape[:-1]):
            v, i = xm[row + (0,)], original[0]
            for t in range(n):
                v2, i2 = xm[row + (t,)], original[t]
                if v2 > v or (v2 == v and i2 > i):
                    v, i = v2, i2
                zm[row + (t,)], im[row + (t,)] = v, i
        z, index = np.moveaxis(zm, -1, axis), np.moveaxis(im, -1, axis)
    if reverse:
        z = np.flip(z, axis)
        if index is not None:
            index = np.flip(index, axis)
    return z, index


def _check_scan(op, dtype, axis, reverse, seed, shape=(8, 32)):
    gen = rng(seed)
    if op == "cumprod":
        x = (
            random_array(shape, dtype, gen, 0.9, 1.1)
            if np.dtype(dtype).kind == "f"
            else random_array(shape, dtype, gen, -2, 2)
        )
    elif op == "linear_recurrence":
        x = random_array(shape, dtype, gen, -1, 1)
    elif op == "cummax":
        x = random_array(shape, dtype, gen, -4, 4)  # few values: many ties
        if np.dtype(dtype).kind == "f":
            x = (np.round(x) + 0.5).astype(dtype)  # ties, and never zero
    else:
        x = random_array(shape, dtype, gen)
    y = random_array(shape, dtype, gen)
    dst = poisoned(
        shape,
        dtype
        if op in ("first", "cummax")
        else (np.float64 if np.dtype(dtype).kind == "f" else np.int64),
    )
    dst2 = poisoned(shape, np.int32)
    _scan_2d[(1,)](x, y, dst, dst2, *shape, op, axis, reverse)
    expected, index = _reference(op, x, y, axis, reverse)
    if op in ("first", "cummax"):
        assert_exact(dst, expected)
        if index is not None:
            assert_exact(dst2, index.astype(np.int32))
    elif np.dtype(dtype).kind == "f":
        # Scanned in the input's own type (fp32 here), stored widened.
        k = shape[axis]
        tol_op = "cumsum" if op in ("cumsum", "linear_recurrence") else "sum"
        check(tol_op, dst.astype(dtype), expected, "interpreter", dtype, k=k * 4)
    else:
        assert_exact(dst, expected.astype(np.int64))


@pytest.mark.parametrize("op", ["cumsum", "cumprod", "first", "linear_recurrence", "cummax"])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("reverse", [False, True])
def test_scan_2d(op, axis, reverse):
    _check_scan(op, np.float32, axis, reverse, seed=1)


@pytest.mark.parametrize("op", ["cumsum", "cumprod", "cummax"])
@pytest.mark.parametrize("reverse", [False, True])
def test_scan_2d_int32(op, reverse):
    _check_scan(op, np.int32, 1, reverse, seed=2)


_FULL_OPS = [
    (op, dt)
    for op in ("cumsum", "cumprod", "first", "cummax")
    for dt in (np.float32, np.float64, np.int32, np.int64)
] + [("linear_recurrence", dt) for dt in (np.float32, np.float64)]


@pytest.mark.full
@pytest.mark.parametrize("op,dtype", _FULL_OPS)
@pytest.mark.parametrize("shape", [(1, 1), (2, 64), (16, 16), (32, 2)])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("reverse", [False, True])
def test_scan_2d_full(op, dtype, shape, axis, reverse):
    _check_scan(op, dtype, axis, reverse, seed=3, shape=shape)


@naiad.jit
def _scan_1d(src, dst, N: tl.constexpr, REVERSE: tl.constexpr):
    x = tl.load(src + tl.arange(0, N))
    tl.store(dst + tl.arange(0, N), tl.cumsum(x, 0, reverse=REVERSE))


@pytest.mark.parametrize("n", [1, 2, 128])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum_1d(n, reverse):
    gen = rng(4)
    x = random_array(n, np.int64, gen)
    dst = poisoned(n, np.int64)
    _scan_1d[(1,)](x, dst, n, reverse)
    expected = np.flip(np.cumsum(np.flip(x))) if reverse else np.cumsum(x)
    assert_exact(dst, expected)


# -------------------------------------------------------------------------------------------------
# result dtypes
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _scan_dtypes(src, dst, IN: tl.constexpr, CUMSUM: tl.constexpr, CUMPROD: tl.constexpr):
    x = tl.load(src + tl.arange(0, 8)).to(IN)
    s = tl.cumsum(x, 0)
    tl.static_assert(s.dtype == CUMSUM, "cumsum dtype")
    tl.static_assert(tl.cumprod(x, 0).dtype == CUMPROD, "cumprod dtype")
    tl.static_assert(tl.cumsum(x, 0, dtype=tl.int64).dtype == tl.int64, "cumsum dtype=")
    tl.store(dst + tl.arange(0, 8), s.to(tl.float64))


@pytest.mark.parametrize(
    "dtype,cumsum_dtype,cumprod_dtype",
    [
        (tl.int8, tl.int32, tl.int8),
        (tl.uint16, tl.uint32, tl.uint16),
        (tl.int64, tl.int64, tl.int64),
        (tl.float16, tl.float16, tl.float16),
        (tl.bfloat16, tl.float32, tl.float32),
        (tl.float32, tl.float32, tl.float32),
    ],
)
def test_scan_result_dtypes(dtype, cumsum_dtype, cumprod_dtype):
    dst = poisoned(8, np.float64)
    _scan_dtypes[(1,)](np.ones(8, np.float32), dst, dtype, cumsum_dtype, cumprod_dtype)
    assert_exact(dst, np.arange(1, 9, dtype=np.float64))


@naiad.jit
def _int8_cumsum(src, dst, N: tl.constexpr):
    tl.store(dst + tl.arange(0, N), tl.cumsum(tl.load(src + tl.arange(0, N)), 0))


def test_int8_cumsum_does_not_wrap():
    x = np.full(16, 100, np.int8)
    dst = poisoned(16, np.int32)
    _int8_cumsum[(1,)](x, dst, 16)
    assert_exact(dst, np.cumsum(np.full(16, 100, np.int32)).astype(np.int32))


# -------------------------------------------------------------------------------------------------
# user combine functions with scalar control flow; errors
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _saturating_add(a, b):
    s = a + b
    if s > 10:
        s = 10
    return s


@naiad.jit
def _saturating_scan(src, dst, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(src + offs)
    tl.store(dst + offs, tl.associative_scan(x, AXIS, _saturating_add))


@pytest.mark.parametrize("axis", [0, 1])
def test_scan_combine_with_scalar_control_flow(axis):
    gen = rng(5)
    x = random_array((4, 16), np.int32, gen, 1, 4)
    dst = poisoned((4, 16), np.int32)
    _saturating_scan[(1,)](x, dst, 4, 16, axis)
    expected = np.moveaxis(x, axis, -1).copy()
    for j in range(1, expected.shape[-1]):
        expected[..., j] = np.minimum(expected[..., j - 1] + expected[..., j], 10)
    assert_exact(dst, np.moveaxis(expected, -1, axis))


@naiad.jit
def _bad_scan_axis(src, AXIS: tl.constexpr):
    x = tl.load(src + tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :])
    tl.cumsum(x, AXIS)


@pytest.mark.parametrize("axis", [2, -3])
def test_scan_invalid_axis_raises(axis):
    with kernel_error("invalid axis"):
        _bad_scan_axis[(1,)](np.ones(32, np.float32), axis)
