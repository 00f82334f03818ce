"""Kernels reading and writing blocks of one head of (heads, rows, columns) host descriptors, in
blocks [1, rows, columns] reshaped to 2-D (frontend/tensor_maps.py: one `.3d` tensor copy each
on sm_90a, whose map bounds every dimension, so a block past a head's last row reads zeros
there and writes nothing), shared by the ptxas checks without a GPU
(tests/backends/nvidia/test_head_blocks_ptxas.py) and the GPU tests that run them
(tests/gpu/test_tensor_copies_gpu.py)."""

import naiad
import naiad.language as tl


@naiad.jit
def head_products(a, b, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """c[h]'s block of BM rows = a[h]'s rows @ b[h]'s first BN columns, K in steps of BK (the
    loads feed a dot, so a pipelined loop fills its rings by copies); heads along axis 1."""
    pm = tl.program_id(0)
    h = tl.program_id(1)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        x = a.load([h, pm * BM, k]).reshape(BM, BK)
        y = b.load([h, k, 0]).reshape(BK, BN)
        acc = tl.dot(x, y, acc)
    c.store([h, pm * BM, 0], acc.to(c.dtype).reshape(1, BM, BN))


@naiad.jit
def head_row_sums(src, out_ptr, K, BM: tl.constexpr, BK: tl.constexpr):
    """The f32 sums of src[h]'s rows pm * BM .. + BM, K in steps of BK, into out_ptr's row of
    program (pm, h) (loads in a loop that feed no dot: pointer loads)."""
    pm = tl.program_id(0)
    h = tl.program_id(1)
    acc = tl.zeros((BM, BK), tl.float32)
    for k in range(0, K, BK):
        acc += src.load([h, pm * BM, k]).reshape(BM, BK).to(tl.float32)
    row = h * tl.num_programs(0) + pm
    tl.store(out_ptr + row * BM + tl.arange(0, BM), tl.sum(acc, 1))
