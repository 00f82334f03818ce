"""Kernels taking host tensor descriptors, shared by the ptxas checks without a GPU
(tests/backends/nvidia/test_descriptor_ptxas.py, test_tensor_copies_ptxas.py) and the GPU tests
that run them (tests/gpu/test_descriptor_gpu.py, test_tensor_copies_gpu.py): what the launcher
packs and what the code is made of are checked on one side and the values on the other, for the
same kernels."""

import naiad
import naiad.language as tl


@naiad.jit
def scale_into(src, dst, factor, BM: tl.constexpr, BN: tl.constexpr):
    """dst's block = src's block * factor, for the block of this program."""
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    block = src.load([pm * BM, pn * BN])
    dst.store([pm * BM, pn * BN], (block * factor).to(dst.dtype))


@naiad.jit
def row_sums_3d(src, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    """The row sums of block [pid, :, :] of a 3-D descriptor, in f32."""
    pid = tl.program_id(0)
    block = src.load([pid, 0, 0]).reshape(BM, BN)
    tl.store(out_ptr + pid * BM + tl.arange(0, BM), tl.sum(block.to(tl.float32), axis=1))


@naiad.jit
def shift_tiles(src, dst, BM: tl.constexpr, BN: tl.constexpr):
    """Each program reads one block of `src` and writes it plus one into `dst`."""
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    block = src.load([pm * BM, pn * BN])
    dst.store([pm * BM, pn * BN], block + 1)


@naiad.jit
def matmul_tiles(a, b, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """c's block = a's row of blocks @ b's column of blocks, K in steps of BK (a dot's operands
    loaded in a loop: what the pipeliner fills by tensor copies)."""
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a.load([tl.program_id(0) * BM, k]), b.load([k, tl.program_id(1) * BN]), acc)
    c.store([tl.program_id(0) * BM, tl.program_id(1) * BN], acc.to(c.dtype))


@naiad.jit
def tile_read_twice(a, x, y, out1, out2, K, BK: tl.constexpr, BN: tl.constexpr):
    """out1 = sum over k of x @ a[k], out2 = sum over k of y @ a[k]^T: each tile of `a` is read by
    two dots, as it is and transposed (attention backward's Q and dO tiles), so one buffer
    holds it and the pipeliner fills that buffer by copies."""
    rows = tl.arange(0, BK)
    cols = tl.arange(0, BN)
    xt = tl.load(x + rows[:, None] * BK + rows[None, :])
    yt = tl.load(y + rows[:, None] * BN + cols[None, :])
    acc1 = tl.zeros((BK, BN), tl.float32)
    acc2 = tl.zeros((BK, BK), tl.float32)
    for k in range(0, K, BK):
        tile = a.load([k, 0])
        acc1 = tl.dot(xt, tile, acc1)
        acc2 = tl.dot(yt, tl.trans(tile), acc2)
    tl.store(out1 + rows[:, None] * BN + cols[None, :], acc1)
    tl.store(out2 + rows[:, None] * BK + rows[None, :], acc2)


@naiad.jit
def running_products(a, b, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """c's k-th block column = a's first k + 1 blocks of K @ b's: a store through a tensor map
    in every K step, to another tensor than the loads read (as a fused persistent matmul's
    epilogue stores C)."""
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a.load([0, k]), b.load([k, 0]), acc)
        c.store([0, k // BK * BN], acc.to(c.dtype))


@naiad.jit
def add_into(src, dst, BM: tl.constexpr, BN: tl.constexpr):
    """Program (m, n, r) adds (r + 1) times src's block (m, n) into dst's by a block atomic:
    the programs of one (m, n) all add into the same block."""
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    times = (tl.program_id(2) + 1).to(tl.float32)
    block = src.load([pm * BM, pn * BN]).to(tl.float32)
    dst.atomic_add([pm * BM, pn * BN], block * times)


@naiad.jit
def products_added(x, b, out, K, BK: tl.constexpr, BN: tl.constexpr):
    """out's rows [k, k + BK) += x_p @ b's rows [k, k + BK) for every k, x_p being program p's
    [BK, BK] block of x: a loop whose dot reads tiles by tensor copies and whose product is
    added by a block atomic each step (attention backward's dQ, summed in the dK/dV walk)."""
    xp = x.load([tl.program_id(0) * BK, 0])
    for k in range(0, K, BK):
        out.atomic_add([k, 0], tl.dot(xp, b.load([k, 0])))
