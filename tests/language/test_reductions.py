"""Reductions: sum, max, min, argmax, argmin (first index on ties), xor_sum, reduce_or, and
tl.reduce with user combine functions (tuples, Welford, scalar control flow); axes, keep_dims,
result dtypes (Triton's promotions), 1-D to 3-D."""

import numpy as np
import pytest
from memory_helpers import NP_DTYPES, assert_exact, kernel_error, poisoned, random_array, rng

import naiad
import naiad.language as tl
from naiad.testing import check


def _offsets3(A, B, C):
    return (
        tl.arange(0, A)[:, None, None] * B * C
        + tl.arange(0, B)[None, :, None] * C
        + tl.arange(0, C)[None, None, :]
    )


@naiad.jit
def _reduce_3d(
    src,
    dst,
    dst_idx,
    A: tl.constexpr,
    B: tl.constexpr,
    C: tl.constexpr,
    OP: tl.constexpr,
    AXIS: tl.constexpr,
    KEEP: tl.constexpr,
):
    offs = (
        tl.arange(0, A)[:, None, None] * B * C
        + tl.arange(0, B)[None, :, None] * C
        + tl.arange(0, C)[None, None, :]
    )
    x = tl.load(src + offs)
    if OP == "sum":
        y = tl.sum(x, axis=AXIS, keep_dims=KEEP)
    elif OP == "max":
        y = tl.max(x, axis=AXIS, keep_dims=KEEP)
    elif OP == "min":
        y = x.min(axis=AXIS, keep_dims=KEEP)
    elif OP == "xor_sum":
        y = tl.xor_sum(x, axis=AXIS, keep_dims=KEEP)
    elif OP == "reduce_or":
        y = tl.reduce_or(x, axis=AXIS, keep_dims=KEEP)
    elif OP == "argmax":
        y = tl.argmax(x, axis=AXIS, keep_dims=KEEP)
    elif OP == "argmin":
        y = x.argmin(axis=AXIS, keep_dims=KEEP)
    elif OP == "max_idx":
        y, i = tl.max(x, axis=AXIS, return_indices=True, keep_dims=KEEP)
        tl.store(dst_idx + tl.arange(0, y.numel), tl.reshape(i, y.numel))
    else:
        y, i = tl.min(x, axis=AXIS, return_indices=True, keep_dims=KEEP)
        tl.store(dst_idx + tl.arange(0, y.numel), tl.reshape(i, y.numel))
    if len(y.shape) == 0:
        tl.store(dst, y)
    else:
        tl.store(dst + tl.arange(0, y.numel), tl.reshape(y, y.numel))


def _numpy_reduce(op, x, axis):
    if op == "sum":
        return (
            x.astype(np.float64).sum(axis=axis)
            if x.dtype.kind == "f" or x.dtype == NP_DTYPES["bfloat16"]
            else x.astype(np.int64).sum(axis=axis)
        )
    if op in ("max", "max_idx"):
        return x.max(axis=axis)
    if op in ("min", "min_idx"):
        return x.min(axis=axis)
    if op == "xor_sum":
        return (
            np.bitwise_xor.reduce(x, axis=axis if axis is not None else None)
            if axis is not None
            else np.bitwise_xor.reduce(x.reshape(-1))
        )
    if op == "reduce_or":
        return np.bitwise_or.reduce(x, axis=axis)
    if op == "argmax":
        return np.argmax(x, axis=axis)
    return np.argmin(x, axis=axis)


def _with_ties(x, gen):
    """Copy a few values over others so that ties exist along every axis."""
    flat = x.reshape(-1)
    for _ in range(flat.size // 3):
        i, j = gen.integers(0, flat.size, 2)
        flat[j] = flat[i]
    # The global max/min also appear several times.
    flat[gen.integers(0, flat.size, 4)] = flat.max()
    flat[gen.integers(0, flat.size, 4)] = flat.min()
    return x


def _run_reduce(op, dtype, shape, axis, keep, seed):
    gen = rng(seed)
    x = random_array(shape, dtype, gen)
    if op in ("argmax", "argmin", "max_idx", "min_idx", "max", "min"):
        x = _with_ties(x, gen)
    expected = np.asarray(_numpy_reduce(op, x, axis))
    is_float = x.dtype.kind == "f" or x.dtype == NP_DTYPES["bfloat16"]
    out_dtype = {"argmax": np.int32, "argmin": np.int32}.get(
        op, np.float64 if is_float else np.int64
    )
    dst = poisoned(max(1, expected.size), out_dtype)
    dst_idx = poisoned(max(1, expected.size), np.int32)
    _reduce_3d[(1,)](x, dst, dst_idx, *shape, op, axis, keep)
    if op == "sum":
        k = x.size if axis is None else shape[axis]
        ref = expected.reshape(-1)
        if x.dtype.kind == "f" or x.dtype == NP_DTYPES["bfloat16"]:
            # Summed in the input's own type (Triton does not widen floats), then stored as fp64.
            check("sum", dst.astype(x.dtype), ref, "interpreter", x.dtype, k=k)
        else:
            assert_exact(dst, ref.astype(np.int64))
    elif op in ("argmax", "argmin"):
        assert_exact(dst, expected.reshape(-1).astype(np.int32))
    elif op in ("max_idx", "min_idx"):
        assert_exact(dst, expected.reshape(-1).astype(out_dtype))
        index = np.argmax(x, axis=axis) if op == "max_idx" else np.argmin(x, axis=axis)
        assert_exact(dst_idx, np.asarray(index).reshape(-1).astype(np.int32))
    else:
        assert_exact(dst, expected.reshape(-1).astype(out_dtype))


_SHAPE = (2, 4, 16)


@pytest.mark.parametrize("op", ["sum", "max", "min", "argmax", "argmin", "max_idx", "min_idx"])
@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_reductions_3d_float32(op, axis):
    _run_reduce(op, np.float32, _SHAPE, axis, False, seed=1)


@pytest.mark.parametrize("op", ["sum", "max", "min", "argmax", "argmin", "xor_sum", "reduce_or"])
@pytest.mark.parametrize("axis", [0, 2, -2])
def test_reductions_3d_int32(op, axis):
    _run_reduce(op, np.int32, _SHAPE, axis, False, seed=2)


@pytest.mark.parametrize("op", ["sum", "max", "min", "xor_sum"])
def test_reductions_over_all_axes(op):
    dtype = np.int32 if op == "xor_sum" else np.float32
    _run_reduce(op, dtype, _SHAPE, None, False, seed=3)


@pytest.mark.parametrize("op", ["sum", "max", "argmin", "max_idx"])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_reductions_keep_dims(op, axis):
    _run_reduce(op, np.float32, _SHAPE, axis, True, seed=4)


_ALL = [
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
]
_FULL_CASES = (
    [(op, dt, ax) for op in ("sum", "max", "min") for dt in _ALL for ax in (0, 1, 2, None)]
    + [
        (op, dt, ax)
        for op in ("argmax", "argmin", "max_idx", "min_idx")
        for dt in _ALL
        for ax in (0, 1, 2)
    ]  # Triton's argmax needs an axis
    + [
        (op, dt, ax) for op in ("xor_sum", "reduce_or") for dt in _ALL[:8] for ax in (0, 1, 2, None)
    ]  # integers only
)


@pytest.mark.full
@pytest.mark.parametrize("op,dtype,axis", _FULL_CASES)
def test_reductions_all_dtypes(op, dtype, axis):
    _run_reduce(op, NP_DTYPES[dtype], (2, 8, 32), axis, False, seed=5)


# -------------------------------------------------------------------------------------------------
# ties: the first index wins
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _arg_1d(src, dst, N: tl.constexpr, TIE_LEFT: tl.constexpr):
    x = tl.load(src + tl.arange(0, N))
    tl.store(dst, tl.argmax(x, 0, tie_break_left=TIE_LEFT))
    tl.store(dst + 1, tl.argmin(x, 0, tie_break_left=TIE_LEFT))


@pytest.mark.parametrize("positions", [(5, 9), (0, 63), (62, 63), (1, 2, 40), (17, 16)])
@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.uint16])
def test_ties_pick_the_first_index(positions, dtype):
    gen = rng(6)
    x = (
        random_array(64, dtype, gen, 2, 50)
        if np.dtype(dtype).kind in "iu"
        else random_array(64, dtype, gen, -50, 50)
    )
    hi, lo = x.max() + dtype(1), x.min() - dtype(1)
    x[list(positions)] = hi
    x[[63 - p for p in positions]] = lo
    dst = poisoned(2, np.int32)
    _arg_1d[(1,)](x, dst, 64, True)
    assert_exact(dst, np.array([np.argmax(x), np.argmin(x)], np.int32))


def test_fast_tie_break_returns_some_extreme_index():
    x = np.array([3, 7, 1, 7, 1, 7, 2, 1], np.int32)
    dst = poisoned(2, np.int32)
    _arg_1d[(1,)](x, dst, 8, False)
    assert x[dst[0]] == 7 and x[dst[1]] == 1


@naiad.jit
def _arg_2d(src, dst, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(src + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    tl.store(dst + tl.arange(0, M), tl.argmax(x, 1))
    tl.store(dst + M + tl.arange(0, N), tl.argmin(x, 0))


def test_ties_along_each_axis_of_a_2d_block():
    gen = rng(7)
    x = random_array((16, 32), np.int8, gen, -3, 3)  # few distinct values: ties everywhere
    dst = poisoned(48, np.int32)
    _arg_2d[(1,)](x, dst, 16, 32)
    assert_exact(dst, np.concatenate([np.argmax(x, 1), np.argmin(x, 0)]).astype(np.int32))


# -------------------------------------------------------------------------------------------------
# result dtypes
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _result_dtypes(
    src,
    dst,
    IN: tl.constexpr,
    SUM: tl.constexpr,
    MAX: tl.constexpr,
    SUM_AS: tl.constexpr,
    N: tl.constexpr,
):
    x = tl.load(src + tl.arange(0, N)).to(IN)
    s = tl.sum(x)
    tl.static_assert(s.dtype == SUM, "sum dtype")
    tl.static_assert(tl.max(x).dtype == MAX, "max dtype")
    tl.static_assert(tl.min(x, 0).dtype == MAX, "min dtype")
    tl.static_assert(tl.argmax(x, 0).dtype == tl.int32, "argmax dtype")
    if SUM_AS is not None:
        tl.static_assert(tl.sum(x, dtype=SUM_AS).dtype == SUM_AS, "sum dtype= dtype")
    tl.store(dst, s.to(tl.float64))


@pytest.mark.parametrize(
    "dtype,sum_dtype,max_dtype",
    [
        (tl.int1, tl.uint32, tl.int32),
        (tl.int8, tl.int32, tl.int32),
        (tl.int16, tl.int32, tl.int32),
        (tl.int64, tl.int64, tl.int64),
        (tl.uint8, tl.uint32, tl.int32),
        (tl.uint16, tl.uint32, tl.int32),
        (tl.uint32, tl.uint32, tl.uint32),
        # Triton widens narrow floats for max/min but not for sum (only with dtype=...).
        (tl.float16, tl.float16, tl.float32),
        (tl.bfloat16, tl.bfloat16, tl.float32),
        (tl.float32, tl.float32, tl.float32),
        (tl.float64, tl.float64, tl.float64),
    ],
)
def test_result_dtypes(dtype, sum_dtype, max_dtype):
    x = np.ones(8, np.float32)
    dst = poisoned(1, np.float64)
    _result_dtypes[(1,)](x, dst, dtype, sum_dtype, max_dtype, tl.float32, 8)
    assert dst[0] == 8


@naiad.jit
def _narrow_sums(src, dst, N: tl.constexpr):
    x = tl.load(src + tl.arange(0, N))
    tl.store(dst, tl.sum(x).to(tl.int64))  # int8 accumulates in int32: no wrap at 127
    tl.store(dst + 1, tl.sum(x, dtype=tl.int8).to(tl.int64))  # explicitly int8: wraps


def test_int8_sums_accumulate_in_int32():
    x = np.full(64, 100, np.int8)
    dst = poisoned(2, np.int64)
    _narrow_sums[(1,)](x, dst, 64)
    assert_exact(dst, np.array([6400, np.int64(6400) % 256 - 256 * (6400 % 256 >= 128)]))


@naiad.jit
def _uint8_sum(src, dst, N: tl.constexpr):
    tl.store(dst, tl.sum(tl.load(src + tl.arange(0, N))))


def test_uint8_sum_is_uint32():
    x = np.full(256, 255, np.uint8)
    dst = poisoned(1, np.uint32)
    _uint8_sum[(1,)](x, dst, 256)
    assert dst[0] == 255 * 256


@naiad.jit
def _fp16_sums(src, dst, N: tl.constexpr):
    x = tl.load(src + tl.arange(0, N))
    tl.store(dst, tl.sum(x).to(tl.float32))  # fp16 additions
    tl.store(dst + 1, tl.sum(x, dtype=tl.float32))  # fp32 additions
    tl.store(dst + 2, tl.max(x))


def test_fp16_sum_adds_in_fp16_unless_asked():
    """Triton's tl.sum keeps fp16 (only narrow integers widen; PR #10893 fixed the docstring
    that said otherwise): 2048 + 7 * 0.5 = 2051.5 has no fp16 value (the ulp at 2048 is 2)."""
    x = np.full(8, 0.5, np.float16)
    x[0] = 2048.0
    dst = poisoned(3, np.float32)
    _fp16_sums[(1,)](x, dst, 8)
    assert dst[1] == 2051.5  # dtype=tl.float32: every partial sum is exact
    assert dst[0] != 2051.5 and abs(dst[0] - 2051.5) <= 4  # added in fp16, order unspecified
    assert np.float32(np.float16(dst[0])) == dst[0]
    assert dst[2] == 2048.0


# -------------------------------------------------------------------------------------------------
# axis errors
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _bad_axis(src, OP: tl.constexpr, AXIS: tl.constexpr):
    x = tl.load(src + tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :])
    if OP == "sum":
        tl.sum(x, AXIS)
    elif OP == "argmax":
        tl.argmax(x, AXIS)
    else:
        tl.xor_sum(x, AXIS)


@pytest.mark.parametrize(
    "op,axis,match",
    [
        ("sum", 2, "invalid axis 2"),
        ("sum", -3, "invalid axis -3"),
        ("argmax", 2, "invalid axis 2"),
        ("xor_sum", 0, "only supported for integers"),
    ],
)
def test_reduction_errors(op, axis, match):
    with kernel_error(match):
        _bad_axis[(1,)](np.ones(32, np.float32), op, axis)


# -------------------------------------------------------------------------------------------------
# tl.reduce with user combine functions
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _welford_combine(mean_1, m2_1, weight_1, mean_2, m2_2, weight_2):
    delta = mean_2 - mean_1
    new_weight = weight_1 + weight_2
    w2_over_w = weight_2 / new_weight
    return (
        mean_1 + delta * w2_over_w,
        m2_1 + m2_2 + delta * delta * weight_1 * w2_over_w,
        new_weight,
    )


@naiad.jit
def _var_mean(src, out_mean, out_var, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(src + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    mean = x
    m2 = tl.zeros_like(x)
    weight = tl.full(x.shape, 1, x.dtype)
    mean, m2, weight = tl.reduce((mean, m2, weight), 1, _welford_combine)
    tl.store(out_mean + tl.arange(0, M), mean)
    tl.store(out_var + tl.arange(0, M), m2 / weight)


def test_welford_tuple_reduction():
    """Triton's test_generic_reduction: a three-operand reduction."""
    gen = rng(8)
    x = random_array((4, 64), np.float32, gen, -3, 5)
    mean, var = poisoned(4, np.float32), poisoned(4, np.float32)
    _var_mean[(1,)](x, mean, var, 4, 64)
    np.testing.assert_allclose(mean, x.astype(np.float64).mean(1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(var, x.astype(np.float64).var(1), rtol=1e-5, atol=1e-6)


@naiad.jit
def _pick_larger_magnitude(a, b):
    if tl.abs(a) >= tl.abs(b):  # control flow on a scalar: the interpreter goes one by one
        return a
    return b


@naiad.jit
def _max_magnitude(src, dst, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr):
    x = tl.load(src + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    y = tl.reduce(x, AXIS, _pick_larger_magnitude)
    tl.store(dst + tl.arange(0, y.numel), y)


@pytest.mark.parametrize("axis", [0, 1])
def test_combine_with_scalar_control_flow(axis):
    gen = rng(9)
    x = random_array((4, 16), np.float32, gen, -10, 10)
    expected = np.take_along_axis(
        x,
        np.argmax(np.abs(x), axis=axis)[None if axis == 0 else slice(None)].reshape(
            (1, -1) if axis == 0 else (-1, 1)
        ),
        axis,
    ).reshape(-1)
    dst = poisoned(expected.size, np.float32)
    _max_magnitude[(1,)](x, dst, 4, 16, axis)
    assert_exact(dst, expected)


@naiad.jit
def _argmax_combine(v1, i1, v2, i2):
    keep = (v1 > v2) | ((v1 == v2) & (i1 < i2))
    return tl.where(keep, v1, v2), tl.where(keep, i1, i2)


@naiad.jit
def _user_argmax(src, dst, N: tl.constexpr):
    x = tl.load(src + tl.arange(0, N))
    _, i = tl.reduce((x, tl.arange(0, N)), 0, _argmax_combine)
    tl.store(dst, i)
    _, j = tl.reduce((x, tl.arange(0, N)), axis=None, combine_fn=_argmax_combine)
    tl.store(dst + 1, j)


def test_user_argmax_with_ties():
    x = np.array([1, 5, 2, 5, 0, 5, 3, 4], np.int32)
    dst = poisoned(2, np.int32)
    _user_argmax[(1,)](x, dst, 8)
    assert_exact(dst, np.array([1, 1], np.int32))


@naiad.jit
def _keep_dims_all(src, dst, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(src + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    s = tl.sum(x, axis=None, keep_dims=True)
    tl.static_assert(len(s.shape) == 2 and s.shape[0] == 1 and s.shape[1] == 1)
    m = tl.reduce(x, None, _pick_larger_magnitude, keep_dims=True)
    tl.static_assert(len(m.shape) == 2)
    tl.store(dst + tl.arange(0, 1)[:, None] + tl.arange(0, 1)[None, :], s)
    tl.store(dst + 1 + tl.arange(0, 1)[:, None] + tl.arange(0, 1)[None, :], m)


def test_keep_dims_over_all_axes_keeps_the_rank():
    gen = rng(10)
    x = random_array((4, 8), np.int32, gen)
    dst = poisoned(2, np.int32)
    _keep_dims_all[(1,)](x, dst, 4, 8)
    flat = x.reshape(-1)
    assert_exact(dst, np.array([x.sum(), flat[np.argmax(np.abs(flat))]], np.int32))


@naiad.jit
def _bad_combine(src):
    x = tl.load(src + tl.arange(0, 8))
    tl.reduce((x, x), 0, _pick_larger_magnitude)


def test_combine_with_wrong_arity_raises():
    with pytest.raises(TypeError):
        _bad_combine[(1,)](np.ones(8, np.float32))


@naiad.jit
def _reduce_1d_sizes(src, dst, N: tl.constexpr):
    x = tl.load(src + tl.arange(0, N))
    tl.store(dst, tl.sum(x))
    tl.store(dst + 1, tl.max(x))
    tl.store(dst + 2, tl.min(x))


@pytest.mark.parametrize("n", [1, 2, 32, 512])
def test_1d_sizes(n):
    gen = rng(11)
    x = random_array(n, np.float64, gen)
    dst = poisoned(3, np.float64)
    _reduce_1d_sizes[(1,)](x, dst, n)
    check("sum", dst[:1], np.array([x.sum()]), "interpreter", np.float64, k=n)
    assert_exact(dst[1:], np.array([x.max(), x.min()]))
