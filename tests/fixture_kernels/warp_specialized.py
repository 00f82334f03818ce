"""Matmuls whose loops ask for warp specialization (`tl.range(..., warp_specialize=True)`),
shared by the CPU checks of what the NVIDIA back end makes of them
(tests/backends/nvidia/test_warp_specialize.py), their values on the CPU
(tests/language/test_warp_specialize_hint.py) and on the GPU
(tests/gpu/test_warp_specialize_gpu.py). C = A @ B in fp16 with fp32 accumulation."""

import naiad
import naiad.language as tl


@naiad.jit
def persistent_tiles(
    a,
    b_t,
    c,
    M,
    N,
    K,
    PROGRAMS: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    SUBTILE: tl.constexpr,
):
    """A persistent tile loop over descriptors the kernel makes, B given transposed (N x K), as
    Hopper's warp-specialized persistent matmul; with SUBTILE the epilogue stores C's tile as
    two halves."""
    a_desc = tl.make_tensor_descriptor(a, [M, K], [K, 1], [BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_t, [N, K], [K, 1], [BLOCK_N, BLOCK_K])
    c_desc = tl.make_tensor_descriptor(
        c, [M, N], [N, 1], [BLOCK_M, BLOCK_N // 2 if SUBTILE else BLOCK_N]
    )
    tiles_n = tl.cdiv(N, BLOCK_N)
    for tile in tl.range(
        tl.program_id(0), tl.cdiv(M, BLOCK_M) * tiles_n, PROGRAMS, warp_specialize=True
    ):
        row = (tile // tiles_n) * BLOCK_M
        col = (tile % tiles_n) * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, K, BLOCK_K):
            acc = tl.dot(a_desc.load([row, k]), b_desc.load([col, k]).T, acc)
        if SUBTILE:
            halves = tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1))
            left, right = tl.split(halves)
            c_desc.store([row, col], left.to(tl.float16))
            c_desc.store([row, col + BLOCK_N // 2], right.to(tl.float16))
        else:
            c_desc.store([row, col], acc.to(tl.float16))


@naiad.jit
def _marked_tile(
    a_desc, b_desc, c_desc, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr
):
    """This program's tile of C = A @ B by a marked K loop, stored (inlined into its caller's
    body, where the back end looks for the loop)."""
    row = tl.program_id(0) * BLOCK_M
    col = tl.program_id(1) * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, K, BLOCK_K, warp_specialize=True):
        acc = tl.dot(a_desc.load([row, k]), b_desc.load([k, col]), acc)
    c_desc.store([row, col], acc.to(tl.float16))


@naiad.jit
def k_loop(
    a_desc, b_desc, c_desc, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr
):
    """One program per tile of C over host descriptors, its K loop marked."""
    _marked_tile(a_desc, b_desc, c_desc, K, BLOCK_M, BLOCK_N, BLOCK_K)


@naiad.jit
def pointer_k_loop(
    a, b, c, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr
):
    """The same through pointers: no tensor copies, so nothing for a producer to issue."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, K, BLOCK_K, warp_specialize=True):
        ks = k + tl.arange(0, BLOCK_K)
        x = tl.load(
            a + rows[:, None] * K + ks[None, :],
            mask=(rows[:, None] < M) & (ks[None, :] < K),
            other=0.0,
        )
        y = tl.load(
            b + ks[:, None] * N + cols[None, :],
            mask=(ks[:, None] < K) & (cols[None, :] < N),
            other=0.0,
        )
        acc = tl.dot(x, y, acc)
    tl.store(
        c + rows[:, None] * N + cols[None, :],
        acc.to(tl.float16),
        mask=(rows[:, None] < M) & (cols[None, :] < N),
    )


@naiad.jit
def two_k_loops(
    a_desc,
    b_desc,
    c_desc,
    d_desc,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    """C = A @ B, then D = A @ B again by a second marked K loop (which the consumers run)."""
    _marked_tile(a_desc, b_desc, c_desc, K, BLOCK_M, BLOCK_N, BLOCK_K)
    _marked_tile(a_desc, b_desc, d_desc, K, BLOCK_M, BLOCK_N, BLOCK_K)


@naiad.jit
def counted_k_loop(
    a_desc,
    b_desc,
    c_desc,
    counter,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    """`k_loop` that first counts its programs by an atomic add, before the marked loop."""
    tl.atomic_add(counter, 1)
    _marked_tile(a_desc, b_desc, c_desc, K, BLOCK_M, BLOCK_N, BLOCK_K)
