"""Kernels that make their tensor descriptors (`tl.make_tensor_descriptor`), shared by the checks
without a GPU (tests/backends/nvidia/test_in_kernel_tensor_maps_ptxas.py: which descriptors get
tensor maps, what the maps hold; tests/runtime/test_cuda_descriptors.py: the launch's global
scratch) and the GPU tests that run them (tests/gpu/test_tensor_copies_gpu.py)."""

import naiad
import naiad.language as tl


@naiad.jit
def scale_made_tiles(
    src_ptr, dst_ptr, M, N, factor, BM: tl.constexpr, BN: tl.constexpr, PADDING: tl.constexpr
):
    """dst's block = src's block * factor, through descriptors over [M, N] row-major tensors
    (src's padding `PADDING`): blocks over the edges read the padding and write nothing."""
    src = tl.make_tensor_descriptor(
        src_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN], padding_option=PADDING
    )
    dst = tl.make_tensor_descriptor(dst_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    dst.store([pm * BM, pn * BN], (src.load([pm * BM, pn * BN]) * factor).to(dst.dtype))


@naiad.jit
def made_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """c = a @ b^T (a [M, K], b [N, K], c [M, N], row-major), one [BM, BN] block per program,
    K in steps of BK through descriptors made in the kernel (what the pipeliner fills its
    rings from)."""
    a = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        acc = tl.dot(a.load([pm * BM, k * BK]), b.load([pn * BN, k * BK]).T, acc)
    c.store([pm * BM, pn * BN], acc.to(c.dtype))


@naiad.jit
def shifted_made_tiles(src_ptr, dst_ptr, M, N, SHIFT: tl.constexpr, BM: tl.constexpr):
    """dst's rows = src's rows + 1, the descriptor's base `SHIFT` elements into src (an
    address the kernel cannot prove 16-byte aligned unless SHIFT says so)."""
    src = tl.make_tensor_descriptor(
        src_ptr + SHIFT, shape=[M, N], strides=[N, 1], block_shape=[BM, 32]
    )
    dst = tl.make_tensor_descriptor(dst_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, 32])
    dst.store([tl.program_id(0) * BM, 0], src.load([tl.program_id(0) * BM, 0]) + 1)


@naiad.jit
def made_in_a_loop(src_ptr, dst_ptr, M, N, BM: tl.constexpr):
    """The row blocks of a [M, N] tensor plus one, through a descriptor made anew in each
    iteration (which keeps pointers: see frontend/tensor_maps.py)."""
    for i in range(0, tl.cdiv(M, BM)):
        src = tl.make_tensor_descriptor(src_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, 32])
        dst = tl.make_tensor_descriptor(dst_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, 32])
        dst.store([i * BM, 0], src.load([i * BM, 0]) + 1)


@naiad.jit
def _made_in_a_helper(ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """A descriptor a helper makes: its tensor map is returned with it (frontend/values.py)."""
    return tl.make_tensor_descriptor(ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])


@naiad.jit
def scale_helper_tiles(src_ptr, dst_ptr, M, N, factor, BM: tl.constexpr, BN: tl.constexpr):
    """scale_made_tiles with its descriptors made by a jit helper."""
    src = _made_in_a_helper(src_ptr, M, N, BM, BN)
    dst = _made_in_a_helper(dst_ptr, M, N, BM, BN)
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    dst.store([pm * BM, pn * BN], (src.load([pm * BM, pn * BN]) * factor).to(dst.dtype))


@naiad.jit
def _k_loop(a, b, pm, pn, K, BK: tl.constexpr, acc):
    """A helper reading its caller's descriptors in a loop, as tutorial 06's inner loop does."""
    for k in range(0, tl.cdiv(K, BK)):
        a_block = a.load([pm * acc.shape[0], k * BK])
        acc = tl.dot(a_block, b.load([pn * acc.shape[1], k * BK]).T, acc)
    return acc


@naiad.jit
def helper_made_matmul(
    a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    """made_matmul with its descriptors made by one helper and its K loop in another."""
    a = _made_in_a_helper(a_ptr, M, K, BM, BK)
    b = _made_in_a_helper(b_ptr, N, K, BN, BK)
    c = _made_in_a_helper(c_ptr, M, N, BM, BN)
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    acc = _k_loop(a, b, pm, pn, K, BK, tl.zeros((BM, BN), tl.float32))
    c.store([pm * BM, pn * BN], acc.to(c.dtype))


@naiad.jit
def helper_made_in_a_loop(src_ptr, dst_ptr, M, N, BM: tl.constexpr):
    """made_in_a_loop with the descriptors made by a helper called in the loop: inlined there,
    their maps go back to pointers (tensor_map_proofs.py)."""
    for i in range(0, tl.cdiv(M, BM)):
        src = _made_in_a_helper(src_ptr, M, N, BM, 32)
        dst = _made_in_a_helper(dst_ptr, M, N, BM, 32)
        dst.store([i * BM, 0], src.load([i * BM, 0]) + 1)


@naiad.jit
def merged_made_tiles(src_ptr, dst_ptr, M, N, BM: tl.constexpr):
    """dst's rows = src's rows + 1, where src's descriptor is chosen at a runtime `if` (two
    made descriptors merged: the merged one reads through pointers, dst's keeps its map)."""
    src = tl.make_tensor_descriptor(src_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, 32])
    if M > BM:
        src = tl.make_tensor_descriptor(src_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, 32])
    dst = tl.make_tensor_descriptor(dst_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, 32])
    dst.store([tl.program_id(0) * BM, 0], src.load([tl.program_id(0) * BM, 0]) + 1)


@naiad.jit(noinline=True)
def _add_one_rows(src, dst, row):
    dst.store([row, 0], src.load([row, 0]) + 1)


@naiad.jit
def noinline_made_tiles(src_ptr, dst_ptr, M, N, BM: tl.constexpr):
    """dst's rows = src's rows + 1 through a `noinline` helper given made descriptors (which
    it reads through pointers: no map crosses into a call that stays one)."""
    src = tl.make_tensor_descriptor(src_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, 32])
    dst = tl.make_tensor_descriptor(dst_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, 32])
    _add_one_rows(src, dst, tl.program_id(0) * BM)


@naiad.jit
def carried_made_tiles(src_ptr, dst_ptr, M, N, BM: tl.constexpr):
    """dst's rows = src's rows + 1, src read through a descriptor the loop carries (reassigned
    in each iteration: it reads through pointers), dst through its own map."""
    first = tl.make_tensor_descriptor(src_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, 32])
    again = tl.make_tensor_descriptor(src_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, 32])
    dst = tl.make_tensor_descriptor(dst_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, 32])
    current = first
    for i in range(0, tl.cdiv(M, BM)):
        dst.store([i * BM, 0], current.load([i * BM, 0]) + 1)
        current = again
