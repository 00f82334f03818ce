"""tl.sort, tl.topk, tl.bitonic_merge and tl.swizzle2d (Triton's test_standard)."""

import numpy as np
import pytest
from memory_helpers import NP_DTYPES, assert_exact, kernel_error, poisoned, random_array, rng

import naiad
import naiad.language as tl


@naiad.jit
def _sort_kernel(
    X,
    stride_xm,
    Z,
    stride_zm,
    M: tl.constexpr,
    N: tl.constexpr,
    k: tl.constexpr,
    descending: tl.constexpr,
):
    offs_m = tl.arange(0, M)
    offs_x_n = tl.arange(0, N)
    offs_z_n = offs_x_n if k is None else tl.arange(0, k)
    offs_x = offs_m[:, None] * stride_xm + offs_x_n[None, :]
    x = tl.load(X + offs_x)
    if k is None:
        z = tl.sort(x, descending=descending)
    else:
        z = tl.topk(x, k)
    offs_z = offs_m[:, None] * stride_zm + offs_z_n[None, :]
    tl.store(Z + offs_z, z)


def _check_sort(m, n, k, descending, dtype, seed):
    gen = rng(seed)
    np_dtype = NP_DTYPES[dtype]
    if np_dtype.kind in "iu":
        x = random_array((m, n), np_dtype, gen, -50 if np_dtype.kind == "i" else 1, 50)
    else:
        x = random_array((m, n), np_dtype, gen, -100, 100)
    x[:, ::7] = x[:, :1]  # duplicates in every row
    z = poisoned((m, k if k else n), np_dtype)
    _sort_kernel[(1,)](x, n, z, z.shape[1], m, n, k, descending)
    ordered = np.sort(
        x.astype(np.float64) if np_dtype.kind == "f" or dtype == "bfloat16" else x, axis=1
    ).astype(np_dtype)
    if k:
        expected = ordered[:, ::-1][:, :k]
    else:
        expected = ordered[:, ::-1] if descending else ordered
    assert_exact(z, np.ascontiguousarray(expected))


# The CPU runs the network as run-time loops (language/sorting.py), so a long row compiles
# as fast as a short one (1 x 512 took a minute unrolled: issue 18).
_SHAPES = [(8, 64), (256, 16), (1, 512)]


@pytest.mark.parametrize("m,n", _SHAPES)
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dtype", ["int32", "float16", "float32"])
def test_sort(m, n, descending, dtype):
    _check_sort(m, n, None, descending, dtype, seed=1)


@pytest.mark.parametrize("m,n", _SHAPES)
@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_topk(m, n, dtype):
    _check_sort(m, n, 8, True, dtype, seed=2)


_FULL_SHAPES = _SHAPES + [(1, 1024), (512, 8), (2, 2), (4, 1)]
# topk is always descending and needs k <= n
_FULL_MODES = [(m, n, None, d) for m, n in _FULL_SHAPES for d in (False, True)] + [
    (m, n, 8, True) for m, n in _FULL_SHAPES if n >= 8
]


@pytest.mark.full
@pytest.mark.parametrize("m,n,k,descending", _FULL_MODES)
@pytest.mark.parametrize(
    "dtype",
    [
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
    ],
)
def test_sort_full(m, n, k, descending, dtype):
    _check_sort(m, n, k, descending, dtype, seed=3)


@naiad.jit
def _topk_sizes(X, Z, N: tl.constexpr, K: tl.constexpr, DESCENDING: tl.constexpr):
    x = tl.load(X + tl.arange(0, N))
    tl.store(Z + tl.arange(0, K), tl.topk(x, K, descending=DESCENDING))


@pytest.mark.parametrize("k", [1, 2, 16, 64])
@pytest.mark.parametrize("descending", [True, False])
def test_topk_sizes(k, descending):
    gen = rng(4)
    x = random_array(64, np.float32, gen, -10, 10)
    z = poisoned(k, np.float32)
    _topk_sizes[(1,)](x, z, 64, k, descending)
    ordered = np.sort(x)
    assert_exact(z, ordered[::-1][:k].copy() if descending else ordered[:k])


@naiad.jit
def _merge(X, Z, M: tl.constexpr, N: tl.constexpr, DESCENDING: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(Z + offs, tl.bitonic_merge(tl.load(X + offs), descending=DESCENDING))


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("n", [2, 16, 128])
def test_bitonic_merge_of_a_bitonic_input(descending, n):
    gen = rng(5)
    m = 4
    x = random_array((m, n), np.int32, gen, -1000, 1000)
    half = n // 2
    # Each row rises then falls: a bitonic sequence.
    x = np.concatenate([np.sort(x[:, :half], 1), np.sort(x[:, half:], 1)[:, ::-1]], axis=1)
    x = np.ascontiguousarray(x)
    z = poisoned((m, n), np.int32)
    _merge[(1,)](x, z, m, n, descending)
    ordered = np.sort(x, axis=1)
    assert_exact(z, np.ascontiguousarray(ordered[:, ::-1] if descending else ordered))


@naiad.jit
def _sort_dim(X, DIM: tl.constexpr):
    x = tl.load(X + tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :])
    tl.sort(x, dim=DIM)


def test_sort_only_along_the_last_dimension():
    with kernel_error("dim"):
        _sort_dim[(1,)](np.ones(32, np.float32), 0)


def test_sort_accepts_the_last_dimension_by_number():
    _sort_dim[(1,)](np.ones(32, np.float32), 1)
    _sort_dim[(1,)](np.ones(32, np.float32), -1)


# -------------------------------------------------------------------------------------------------
# swizzle2d
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _swizzle2d_kernel(output, size_i, size_j, size_g):
    for i in tl.range(0, size_i, 1):
        for j in tl.range(0, size_j, 1):
            new_i, new_j = tl.swizzle2d(i, j, size_i, size_j, size_g)
            tl.store(output + new_i * size_j + new_j, i * size_j + j)


def _swizzle_reference(size_i, size_j, size_g):
    """Row-major ids laid out column-major within groups of `size_g` rows (the last group may be
    shorter): the order in which a grouped matmul visits its tiles."""
    out = np.zeros((size_i, size_j), np.int64)
    ij = 0
    for start in range(0, size_i, size_g):
        rows = min(size_g, size_i - start)
        for col in range(size_j):
            for r in range(rows):
                out[start + r, col] = ij
                ij += 1
    return out


def test_swizzle2d_5x7_group_3():
    out = poisoned((5, 7), np.int32)
    _swizzle2d_kernel[(1,)](out, 5, 7, 3)
    expected = np.array(
        [
            [0, 3, 6, 9, 12, 15, 18],
            [1, 4, 7, 10, 13, 16, 19],
            [2, 5, 8, 11, 14, 17, 20],
            [21, 23, 25, 27, 29, 31, 33],
            [22, 24, 26, 28, 30, 32, 34],
        ],
        np.int32,
    )
    assert_exact(out, expected)
    assert_exact(out, _swizzle_reference(5, 7, 3).astype(np.int32))


@pytest.mark.parametrize("size_i,size_j,size_g", [(4, 4, 2), (8, 3, 8), (7, 5, 1), (9, 2, 4)])
def test_swizzle2d_against_python(size_i, size_j, size_g):
    out = poisoned((size_i, size_j), np.int32)
    _swizzle2d_kernel[(1,)](out, size_i, size_j, size_g)
    assert_exact(out, _swizzle_reference(size_i, size_j, size_g).astype(np.int32))


@naiad.jit
def _swizzle_block(out, size_i: tl.constexpr, size_j: tl.constexpr, size_g):
    i = tl.arange(0, size_i)[:, None]
    j = tl.arange(0, size_j)[None, :]
    new_i, new_j = tl.swizzle2d(i, j, size_i, size_j, size_g)
    tl.store(out + new_i * size_j + new_j, i * size_j + j)


def test_swizzle2d_on_blocks():
    out = poisoned((8, 4), np.int32)
    _swizzle_block[(1,)](out, 8, 4, 3)
    assert_exact(out, _swizzle_reference(8, 4, 3).astype(np.int32))


@naiad.jit
def _bool_kernel(src, sorted_ptr, flipped_ptr, top_ptr, N: tl.constexpr, K: tl.constexpr):
    x = tl.load(src + tl.arange(0, N)) > 0
    tl.store(sorted_ptr + tl.arange(0, N), tl.sort(x, descending=True))
    tl.store(flipped_ptr + tl.arange(0, N), tl.flip(x))
    tl.store(top_ptr + tl.arange(0, K), tl.topk(x, K))


def test_sort_flip_topk_of_booleans():
    gen = rng(6)
    x = random_array(32, np.float32, gen)
    outs = poisoned(32, bool), poisoned(32, bool), poisoned(4, bool)
    _bool_kernel[(1,)](x, *outs, 32, 4)
    b = x > 0
    assert_exact(outs[0], np.sort(b)[::-1].copy())
    assert_exact(outs[1], b[::-1].copy())
    assert_exact(outs[2], np.sort(b)[::-1][:4].copy())
