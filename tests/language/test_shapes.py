"""Creation and shape manipulation: arange, full, zeros, reshape/view, permute/trans, expand_dims,
broadcast, ravel, join/split/interleave, cat, flip, `None` indexing, item, squeeze/unsqueeze."""

import numpy as np
import pytest
from memory_helpers import (
    ALL_DTYPES,
    NP_DTYPES,
    assert_exact,
    kernel_error,
    poisoned,
    random_array,
    rng,
)

import naiad
import naiad.language as tl


def _grid(*shape):
    """NumPy offsets of a row-major block of `shape` (what the kernels compute with arange)."""
    return np.arange(int(np.prod(shape))).reshape(shape)


# -------------------------------------------------------------------------------------------------
# arange / full / zeros
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _arange(dst, START: tl.constexpr, END: tl.constexpr):
    r = tl.arange(START, END)
    tl.static_assert(r.dtype == tl.int32)
    tl.store(dst + tl.arange(0, END - START), r)


@pytest.mark.parametrize("start,end", [(0, 1), (0, 64), (8, 24), (1000, 1128)])
def test_arange(start, end):
    dst = poisoned(end - start, np.int32)
    _arange[(1,)](dst, start, end)
    assert_exact(dst, np.arange(start, end, dtype=np.int32))


@pytest.mark.parametrize(
    "start,end,match",
    [
        (0, 12, "power of 2"),
        (4, 4, "greater than"),
        (8, 0, "greater than"),
        (-4, 4, "int32"),
        (0, 2**21, "numel"),
    ],
)
def test_arange_errors(start, end, match):
    with kernel_error(match):
        _arange[(1,)](np.zeros(1, np.int32), start, end)


@naiad.jit
def _full(dst, value, M: tl.constexpr, N: tl.constexpr, DTYPE: tl.constexpr):
    x = tl.full((M, N), value, DTYPE)
    tl.static_assert(x.dtype == DTYPE)
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(dst + offs, x)
    z = tl.zeros([M, N], dtype=DTYPE)
    tl.store(dst + M * N + offs, z + tl.zeros_like(x))


_TL = {name: getattr(tl, name) for name in ALL_DTYPES}


def _check_full(dtype):
    value = 3 if dtype.startswith(("int", "uint")) else -1.25
    dst = poisoned(2 * 4 * 8, dtype)
    _full[(1,)](dst, value, 4, 8, _TL[dtype])
    expected = np.concatenate([np.full(32, value), np.zeros(32)]).astype(NP_DTYPES[dtype])
    assert_exact(dst, expected)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int8", "uint64"])
def test_full_zeros_zeros_like(dtype):
    _check_full(dtype)


@pytest.mark.full
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_full_all_dtypes(dtype):
    _check_full(dtype)


@naiad.jit
def _full_from_scalar_tensor(src, dst):
    v = tl.load(src)  # a runtime scalar, converted to the requested dtype
    tl.store(dst + tl.arange(0, 8), tl.full((8,), v, tl.int16))


def test_full_of_a_runtime_scalar():
    dst = poisoned(8, np.int16)
    _full_from_scalar_tensor[(1,)](np.array([7.75], np.float32), dst)
    assert_exact(dst, np.full(8, 7, np.int16))


# -------------------------------------------------------------------------------------------------
# reshape / view / ravel
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _reshape(src, dst, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, D: tl.constexpr):
    x = tl.load(src + tl.arange(0, A)[:, None] * B + tl.arange(0, B)[None, :])
    y = tl.reshape(x, C, D)
    z = x.reshape((C, D))
    tl.store(dst + tl.arange(0, C)[:, None] * D + tl.arange(0, D)[None, :], y + z)
    r = tl.ravel(y)
    tl.store(dst + A * B + tl.arange(0, A * B), r)


def test_reshape_and_ravel_keep_row_major_order():
    gen = rng(1)
    x = random_array((4, 16), np.int32, gen)
    dst = poisoned(128, np.int32)
    _reshape[(1,)](x, dst, 4, 16, 8, 8)
    assert_exact(dst, np.concatenate([(x * 2).reshape(-1), x.reshape(-1)]))


@naiad.jit
def _view(src, dst):
    x = tl.load(src + tl.arange(0, 64))
    v = tl.view(x, 8, 8)
    tl.static_assert(v.shape[0] == 8 and v.shape[1] == 8)
    tl.store(dst + tl.arange(0, 8)[:, None] * 8 + tl.arange(0, 8)[None, :], v)


def test_view_keeps_the_elements():
    gen = rng(2)
    x = random_array(64, np.float32, gen)
    dst = poisoned((8, 8), np.float32)
    _view[(1,)](x, dst)
    assert_exact(np.sort(dst.reshape(-1)), np.sort(x))  # view may reorder


@naiad.jit
def _bad_reshape(src, A: tl.constexpr, B: tl.constexpr):
    x = tl.load(src + tl.arange(0, 16))
    tl.reshape(x, A, B)


@pytest.mark.parametrize(
    "a,b,match", [(4, 8, "total number of elements"), (2, 6, "power of 2"), (3, 4, "power of 2")]
)
def test_reshape_errors(a, b, match):
    with kernel_error(match):
        _bad_reshape[(1,)](np.ones(16, np.float32), a, b)


# -------------------------------------------------------------------------------------------------
# permute / trans
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _trans_2d(src, dst, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(src + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    out = dst + tl.arange(0, N)[:, None] * M + tl.arange(0, M)[None, :]
    tl.store(out, tl.trans(x))
    tl.store(out + M * N, x.T)
    tl.store(out + 2 * M * N, tl.permute(x, 1, 0))
    tl.store(out + 3 * M * N, tl.trans(x, (1, 0)))


def test_trans_2d():
    gen = rng(3)
    x = random_array((8, 32), np.float16, gen)
    dst = poisoned((4, 32, 8), np.float16)
    _trans_2d[(1,)](x, dst, 8, 32)
    assert_exact(dst, np.broadcast_to(x.T, (4, 32, 8)))


@naiad.jit
def _permute_3d(
    src,
    dst,
    A: tl.constexpr,
    B: tl.constexpr,
    C: tl.constexpr,
    P0: tl.constexpr,
    P1: tl.constexpr,
    P2: tl.constexpr,
    USE_TRANS: tl.constexpr,
):
    offs = (
        tl.arange(0, A)[:, None, None] * B * C
        + tl.arange(0, B)[None, :, None] * C
        + tl.arange(0, C)[None, None, :]
    )
    x = tl.load(src + offs)
    if USE_TRANS:
        y = tl.trans(x, P0, P1, P2)
    else:
        y = x.permute((P0, P1, P2))
    d0: tl.constexpr = y.shape[0]
    d1: tl.constexpr = y.shape[1]
    d2: tl.constexpr = y.shape[2]
    out = (
        tl.arange(0, d0)[:, None, None] * d1 * d2
        + tl.arange(0, d1)[None, :, None] * d2
        + tl.arange(0, d2)[None, None, :]
    )
    tl.store(dst + out, y)


@pytest.mark.parametrize("perm", [(0, 2, 1), (2, 0, 1), (1, 2, 0), (2, 1, 0), (0, 1, 2)])
@pytest.mark.parametrize("use_trans", [False, True])
def test_permute_3d(perm, use_trans):
    gen = rng(4)
    x = random_array((2, 4, 8), np.int32, gen)
    expected = np.transpose(x, perm)
    dst = poisoned(expected.shape, np.int32)
    _permute_3d[(1,)](x, dst, 2, 4, 8, *perm, use_trans)
    assert_exact(dst, expected)


@naiad.jit
def _bad_permute(src, WHICH: tl.constexpr):
    x = tl.load(
        src
        + tl.arange(0, 2)[:, None, None] * 16
        + tl.arange(0, 2)[None, :, None] * 8
        + tl.arange(0, 8)[None, None, :]
    )
    if WHICH == 0:
        tl.trans(tl.arange(0, 8))  # the default swaps the last two dims: a 1-D tensor has one
    elif WHICH == 1:
        tl.permute(x, 0, 1)
    else:
        tl.permute(x, 0, 0, 1)


@naiad.jit
def _batched_trans(src, dst):
    x = tl.load(
        src
        + tl.arange(0, 2)[:, None, None] * 32
        + tl.arange(0, 4)[None, :, None] * 8
        + tl.arange(0, 8)[None, None, :]
    )
    y = tl.trans(x)  # the last two dimensions swapped: [2, 8, 4]
    tl.store(
        dst
        + tl.arange(0, 2)[:, None, None] * 32
        + tl.arange(0, 8)[None, :, None] * 4
        + tl.arange(0, 4)[None, None, :],
        y,
    )


def test_trans_without_dims_swaps_the_last_two(gen):
    x = gen.standard_normal((2, 4, 8)).astype(np.float32)
    out = np.full((2, 8, 4), np.nan, np.float32)
    _batched_trans[(1,)](x, out)
    np.testing.assert_array_equal(out, x.transpose(0, 2, 1))


@pytest.mark.parametrize(
    "which,match", [(0, "last two dimensions"), (1, "same length"), (2, "permutation")]
)
def test_permute_errors(which, match):
    with kernel_error(match):
        _bad_permute[(1,)](np.ones(32, np.float32), which)


# -------------------------------------------------------------------------------------------------
# expand_dims / None indexing / broadcast
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _expand(src, dst, N: tl.constexpr):
    x = tl.load(src + tl.arange(0, N))
    a = tl.expand_dims(x, 0)  # [1, N]
    b = tl.expand_dims(x, -1)  # [N, 1]
    c = tl.expand_dims(x, (0, 2))  # [1, N, 1]
    d = x.expand_dims((-1, 0))  # [1, N, 1]
    e = x[None, :]  # [1, N]
    f = x[:, None]  # [N, 1]
    g = x[None, :, None]  # [1, N, 1]
    tl.static_assert(a.shape[0] == 1 and a.shape[1] == N)
    tl.static_assert(b.shape[0] == N and b.shape[1] == 1)
    tl.static_assert(len(c.shape) == 3 and c.shape[0] == 1 and c.shape[2] == 1)
    tl.static_assert(len(d.shape) == 3 and d.shape[0] == 1 and d.shape[2] == 1)
    tl.static_assert(len(g.shape) == 3 and g.shape[1] == N)
    rows = tl.arange(0, N)[:, None]
    cols = tl.arange(0, N)[None, :]
    tl.store(dst + rows * N + cols, a + b)  # broadcast [1, N] + [N, 1]
    tl.store(dst + N * N + rows * N + cols, e * f)
    tl.store(dst + 2 * N * N + tl.arange(0, N)[None, :, None], c + d + g)


def test_expand_dims_and_none_indexing():
    gen = rng(5)
    n = 8
    x = random_array(n, np.int32, gen)
    dst = poisoned(2 * n * n + n, np.int32)
    _expand[(1,)](x, dst, n)
    expected = np.concatenate(
        [(x[None, :] + x[:, None]).reshape(-1), (x[None, :] * x[:, None]).reshape(-1), 3 * x]
    )
    assert_exact(dst, expected)


@naiad.jit
def _bad_index(src, WHICH: tl.constexpr):
    x = tl.load(src + tl.arange(0, 8))
    if WHICH == 0:
        x[0]
    elif WHICH == 1:
        x[1:3]
    else:
        tl.expand_dims(x, (0, 0))


@pytest.mark.parametrize(
    "which,match",
    [(0, "unsupported tensor index"), (1, "unsupported tensor index"), (2, "duplicate")],
)
def test_invalid_indexing_raises(which, match):
    with kernel_error(match):
        _bad_index[(1,)](np.ones(8, np.float32), which)


@naiad.jit
def _expand_out_of_range(src, AXIS: tl.constexpr):
    tl.expand_dims(tl.load(src + tl.arange(0, 8)), AXIS)


@pytest.mark.parametrize("axis,bad", [(2, 2), (-3, -3), ((0, 3), 3), ((-4, 0), -4)])
def test_expand_dims_axis_out_of_range_raises(axis, bad):
    """An axis names a dimension of the result: a negative one below -rank is refused, not
    wrapped onto a valid one (-3 on a rank-1 block made a [8, 1] block)."""
    with kernel_error(f"invalid axis {bad}"):
        _expand_out_of_range[(1,)](np.ones(8, np.float32), axis)


@naiad.jit
def _broadcasts(src_row, src_col, dst, M: tl.constexpr, N: tl.constexpr):
    row = tl.load(src_row + tl.arange(0, N))[None, :]
    col = tl.load(src_col + tl.arange(0, M))[:, None]
    a, b = tl.broadcast(row, col)
    tl.static_assert(a.shape[0] == M and a.shape[1] == N and b.shape[0] == M)
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(dst + offs, a - b)
    tl.store(dst + M * N + offs, tl.broadcast_to(row, M, N))
    tl.store(dst + 2 * M * N + offs, col.broadcast_to((M, N)))
    s = tl.load(src_row)  # a scalar broadcasts to any shape
    tl.store(dst + 3 * M * N + offs, tl.broadcast_to(s, (M, N)))


def test_broadcast_and_broadcast_to():
    gen = rng(6)
    m, n = 4, 16
    row, col = random_array(n, np.float32, gen), random_array(m, np.float32, gen)
    dst = poisoned((4, m, n), np.float32)
    _broadcasts[(1,)](row, col, dst, m, n)
    expected = np.stack(
        [
            row[None, :] - col[:, None],
            np.broadcast_to(row, (m, n)),
            np.broadcast_to(col[:, None], (m, n)),
            np.full((m, n), row[0]),
        ]
    )
    assert_exact(dst, expected)


@naiad.jit
def _bad_broadcast(src):
    x = tl.load(src + tl.arange(0, 8))
    tl.broadcast_to(x, (4, 16))


def test_incompatible_broadcast_raises():
    with kernel_error("broadcast"):
        _bad_broadcast[(1,)](np.ones(8, np.float32))


# -------------------------------------------------------------------------------------------------
# join / split / interleave / cat
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _join_split(a_ptr, b_ptr, dst, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    j = tl.join(a, b)  # [M, N, 2]
    tl.static_assert(j.shape[2] == 2)
    tl.store(dst + offs[:, :, None] * 2 + tl.arange(0, 2)[None, None, :], j)
    lo, hi = tl.split(j)
    tl.store(dst + 2 * M * N + offs, hi - lo)
    lo2, hi2 = j.split()
    tl.store(dst + 3 * M * N + offs, lo2 + hi2)
    i = tl.interleave(a, b)  # [M, 2N]
    tl.store(dst + 4 * M * N + tl.arange(0, M)[:, None] * 2 * N + tl.arange(0, 2 * N)[None, :], i)


def test_join_split_interleave():
    gen = rng(7)
    m, n = 4, 8
    a, b = random_array((m, n), np.int32, gen), random_array((m, n), np.int32, gen)
    dst = poisoned(6 * m * n, np.int32)
    _join_split[(1,)](a, b, dst, m, n)
    joined = np.stack([a, b], axis=-1)
    expected = np.concatenate(
        [
            joined.reshape(-1),
            (b - a).reshape(-1),
            (a + b).reshape(-1),
            joined.reshape(m, 2 * n).reshape(-1),
        ]
    )
    assert_exact(dst, expected)


@naiad.jit
def _join_scalars(a_ptr, b_ptr, dst):
    a = tl.load(a_ptr)
    b = tl.load(b_ptr)
    j = tl.join(a, b)  # two scalars -> shape [2]
    tl.static_assert(len(j.shape) == 1 and j.shape[0] == 2)
    tl.store(dst + tl.arange(0, 2), j)
    x, y = tl.split(j)  # shape [2] -> two scalars
    tl.static_assert(len(x.shape) == 0)
    tl.store(dst + 2, y)
    tl.store(dst + 3, x)
    tl.store(dst + 4 + tl.arange(0, 2), tl.interleave(a, b))


def test_join_and_split_of_scalars():
    a, b = np.array([1.5], np.float32), np.array([-2.5], np.float32)
    dst = poisoned(6, np.float32)
    _join_scalars[(1,)](a, b, dst)
    assert_exact(dst, np.array([1.5, -2.5, -2.5, 1.5, 1.5, -2.5], np.float32))


@naiad.jit
def _join_broadcasts(a_ptr, b_ptr, dst, N: tl.constexpr):
    a = tl.load(a_ptr + tl.arange(0, N))
    b = tl.load(b_ptr)  # a scalar joins each element
    j = tl.join(a, b)
    tl.store(dst + tl.arange(0, N)[:, None] * 2 + tl.arange(0, 2)[None, :], j)


def test_join_broadcasts_its_operands():
    gen = rng(8)
    a, b = random_array(8, np.float32, gen), random_array(1, np.float32, gen)
    dst = poisoned((8, 2), np.float32)
    _join_broadcasts[(1,)](a, b, dst, 8)
    assert_exact(dst, np.stack([a, np.full(8, b[0], np.float32)], axis=-1))


@naiad.jit
def _bad_split(src):
    tl.split(tl.load(src + tl.arange(0, 4)))


def test_split_needs_a_last_dimension_of_two():
    with kernel_error("size 2"):
        _bad_split[(1,)](np.ones(4, np.float32))


@naiad.jit
def _cat_1d(a_ptr, b_ptr, dst, N: tl.constexpr, REORDER: tl.constexpr):
    a = tl.load(a_ptr + tl.arange(0, N))
    b = tl.load(b_ptr + tl.arange(0, N))
    tl.store(dst + tl.arange(0, 2 * N), tl.cat(a, b, can_reorder=REORDER))


def test_cat_1d():
    gen = rng(9)
    a, b = random_array(16, np.float32, gen), random_array(16, np.float32, gen)
    dst = poisoned(32, np.float32)
    _cat_1d[(1,)](a, b, dst, 16, False)
    assert_exact(dst, np.concatenate([a, b]))
    dst = poisoned(32, np.float32)
    _cat_1d[(1,)](a, b, dst, 16, True)  # the order is unspecified with can_reorder
    assert_exact(np.sort(dst), np.sort(np.concatenate([a, b])))


@naiad.jit
def _cat_2d(a_ptr, b_ptr, dst, M: tl.constexpr, N: tl.constexpr, DIM: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    c = tl.cat(tl.load(a_ptr + offs), tl.load(b_ptr + offs), dim=DIM)
    r: tl.constexpr = c.shape[0]
    k: tl.constexpr = c.shape[1]
    tl.store(dst + tl.arange(0, r)[:, None] * k + tl.arange(0, k)[None, :], c)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_2d(dim):
    gen = rng(10)
    a, b = random_array((4, 8), np.int16, gen), random_array((4, 8), np.int16, gen)
    expected = np.concatenate([a, b], axis=dim)
    dst = poisoned(expected.shape, np.int16)
    _cat_2d[(1,)](a, b, dst, 4, 8, dim)
    assert_exact(dst, expected)


@naiad.jit
def _cat_mismatched(a_ptr, b_ptr, M: tl.constexpr, N: tl.constexpr, B_DTYPE: tl.constexpr):
    a = tl.load(a_ptr + tl.arange(0, M))
    b = tl.load(b_ptr + tl.arange(0, N)).to(B_DTYPE)
    tl.store(a_ptr + tl.arange(0, 1), tl.sum(tl.cat(a, b)))


@pytest.mark.parametrize(
    "m,n,b_dtype,match",
    [
        (16, 8, tl.float32, r"same shape, got \[16\] and \[8\]"),
        (1, 8, tl.float32, r"same shape, got \[1\] and \[8\]"),  # never broadcast
        (8, 8, tl.float16, "one type"),
    ],
)
def test_cat_of_two_shapes_or_types_is_refused(m, n, b_dtype, match):
    with kernel_error(match):
        _cat_mismatched[(1,)](np.ones(m, np.float32), np.ones(n, np.float32), m, n, b_dtype)


# -------------------------------------------------------------------------------------------------
# flip
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _flip_3d(src, dst, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, DIM: tl.constexpr):
    offs = (
        tl.arange(0, A)[:, None, None] * B * C
        + tl.arange(0, B)[None, :, None] * C
        + tl.arange(0, C)[None, None, :]
    )
    x = tl.load(src + offs)
    if DIM is None:
        y = tl.flip(x)
    else:
        y = tl.flip(x, DIM)
    tl.store(dst + offs, y)


@pytest.mark.parametrize("dim", [None, 0, 1, 2, -1, -3])
@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_flip_each_dimension(dim, dtype):
    gen = rng(11)
    x = random_array((4, 2, 16), dtype, gen)
    dst = poisoned(x.shape, dtype)
    _flip_3d[(1,)](x, dst, 4, 2, 16, dim)
    assert_exact(dst, np.flip(x, -1 if dim is None else dim))


@pytest.mark.full
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_flip_all_dtypes(dtype):
    gen = rng(12)
    x = random_array((2, 4, 8), dtype, gen)
    x.reshape(-1)[3] = np.array(
        np.nan if x.dtype.kind == "f" or dtype == "bfloat16" else 5,
    ).astype(x.dtype)
    dst = poisoned(x.shape, dtype)
    _flip_3d[(1,)](x, dst, 2, 4, 8, 1)
    assert_exact(dst, np.flip(x, 1))


# -------------------------------------------------------------------------------------------------
# item / squeeze / unsqueeze / reshape to a scalar
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _scalars(src, dst):
    one = tl.load(src + tl.arange(0, 1))  # [1]
    s = one.item()
    tl.static_assert(len(s.shape) == 0)
    tl.store(dst, s * 2)
    two_d = tl.load(src + tl.arange(0, 1)[:, None] + tl.arange(0, 1)[None, :])  # [1, 1]
    tl.store(dst + 1, tl.item(two_d) * 3)
    r = tl.load(src + tl.arange(0, 8))[None, :]  # [1, 8]
    q = tl.squeeze(r, 0)
    tl.static_assert(len(q.shape) == 1 and q.shape[0] == 8)
    u = tl.unsqueeze(q, 1)
    tl.static_assert(u.shape[0] == 8 and u.shape[1] == 1)
    tl.store(dst + 2 + tl.arange(0, 8)[:, None], u + 1)


def test_item_squeeze_unsqueeze():
    gen = rng(13)
    x = random_array(8, np.int32, gen)
    dst = poisoned(10, np.int32)
    _scalars[(1,)](x, dst)
    assert_exact(dst, np.concatenate([[x[0] * 2, x[0] * 3], x + 1]).astype(np.int32))


@naiad.jit
def _bad_item(src, WHICH: tl.constexpr):
    x = tl.load(src + tl.arange(0, 4))[None, :]
    if WHICH == 0:
        x.item()
    else:
        tl.squeeze(x, 1)


@pytest.mark.parametrize("which,match", [(0, "single-element"), (1, "not 1")])
def test_item_and_squeeze_errors(which, match):
    with kernel_error(match):
        _bad_item[(1,)](np.ones(4, np.float32), which)


@naiad.jit
def _reshape_to_scalar(src, dst):
    one = tl.load(src + tl.arange(0, 1)[:, None] + tl.arange(0, 1)[None, :])  # [1, 1]
    s = tl.reshape(one, ())  # an empty shape is a scalar, as in Triton
    tl.static_assert(len(s.shape) == 0)
    tl.store(dst, s + 1)


def test_reshape_to_an_empty_shape_gives_a_scalar():
    dst = poisoned(1, np.float32)
    _reshape_to_scalar[(1,)](np.array([2.5], np.float32), dst)
    assert_exact(dst, np.array([3.5], np.float32))
