"""Host descriptors compiled for tensor copies on sm_90a (frontend/tensor_maps.py,
lowering/tma.py, the pipeliner's rings), assembled by ptxas: which accesses become
`cp.async.bulk.tensor` (one per box), the tensor map parameters, a matmul's K loop filling its
rings by copies, and the accesses that keep pointers (sm_80, misaligned rows, loads in loops
that feed no dot, debug mode). The values on a GPU: tests/gpu/test_tensor_copies_gpu.py."""

import re

import numpy as np
import pytest
from fixture_kernels.descriptors import (
    matmul_tiles,
    running_products,
    shift_tiles,
    tile_read_twice,
)
from test_lowering import assemble
from test_toolchain import needs_ptxas

import naiad
import naiad.language as tl
from naiad.tools.tensor_descriptor import TensorDescriptor


@naiad.jit
def row_block_sums(src, out_ptr, K, BM: tl.constexpr, BK: tl.constexpr):
    acc = tl.zeros((BM, BK), tl.float32)
    for k in range(0, K, BK):
        acc += src.load([tl.program_id(0) * BM, k]).to(tl.float32)
    tl.store(out_ptr + tl.arange(0, BM), tl.sum(acc, 1))


def _compile(kernel, args, target="cuda:sm_90a", **kwargs):
    return kernel.warmup(*args, grid=(1, 1), target=target, **kwargs)


def _loads_and_stores(ptx: str) -> tuple[int, int]:
    return (
        len(re.findall(r"cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global", ptx)),
        len(re.findall(r"cp\.async\.bulk\.tensor\.2d\.global\.shared::cta", ptx)),
    )


@needs_ptxas
@pytest.mark.parametrize(
    "dtype, block, boxes",
    [
        (np.float16, (64, 64), 1),
        (np.float16, (32, 128), 2),
        (np.float32, (8, 8), 1),
        (np.int8, (32, 64), 1),
        (np.float32, (512, 32), 2),
    ],
)
def test_aligned_blocks_move_by_tensor_copies(dtype, block, boxes, tmp_path):
    """One copy per box each way (a box: rows of at most 128 bytes, at most 256 of them),
    completing on an mbarrier; the tensor maps are 128-byte parameters ahead of each
    descriptor's parts; nothing spills."""
    x = np.random.default_rng(0).standard_normal((1024, 256)).astype(dtype)
    descs = [TensorDescriptor.from_tensor(a, list(block)) for a in (x, np.empty_like(x))]
    ptx = _compile(shift_tiles, descs, BM=block[0], BN=block[1]).asm["ptx"]
    report = assemble(ptx, "sm_90a", tmp_path)
    assert _loads_and_stores(ptx) == (boxes, boxes)
    assert "mbarrier.try_wait.parity" in ptx and "fence.proxy.async.shared::cta" in ptx
    assert len(re.findall(r"\.param \.align 64 \.b8 \w+\[128\]", ptx)) == 2
    assert "ld.global" not in ptx and "st.global" not in ptx
    assert " 0 bytes spill stores" in report


@needs_ptxas
def test_other_accesses_keep_pointers(tmp_path):
    x = np.random.default_rng(1).standard_normal((128, 80)).astype(np.float16)
    aligned = [TensorDescriptor.from_tensor(a, [64, 64]) for a in (x, np.empty_like(x))]
    assert _loads_and_stores(
        _compile(shift_tiles, aligned, "cuda:sm_80", BM=64, BN=64).asm["ptx"]
    ) == (0, 0)
    rows_of_72 = np.empty((128, 72), np.float16)  # 144-byte rows: not 16 elements apart
    descs = [TensorDescriptor(rows_of_72, [128, 70], [72, 1], [64, 64]) for _ in range(2)]
    ptx = _compile(shift_tiles, descs, BM=64, BN=64).asm["ptx"]
    assert _loads_and_stores(ptx) == (0, 0)
    debug = _compile(shift_tiles, aligned, BM=64, BN=64, debug=True).asm["ptx"]
    assert _loads_and_stores(debug) == (0, 0)
    in_loop = _compile(row_block_sums, [aligned[0], np.empty(64, np.float32), 80], BM=64, BK=64)
    assemble(in_loop.asm["ptx"], "sm_90a", tmp_path)
    assert _loads_and_stores(in_loop.asm["ptx"]) == (0, 0)


@needs_ptxas
def test_a_matmul_loop_fills_its_rings_by_tensor_copies(tmp_path):
    """3 stages: the prologue copies 2 iterations' A and B tiles (B's rows of 256 bytes are
    two boxes), the loop one iteration's, each stage on its slot's mbarrier; the loop waits
    for the phase of the slot it reads; no pointer loads remain and nothing spills."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((256, 512)).astype(np.float16)
    b = rng.standard_normal((512, 256)).astype(np.float16)
    descs = [
        TensorDescriptor.from_tensor(a, [128, 64]),
        TensorDescriptor.from_tensor(b, [64, 128]),
        TensorDescriptor.from_tensor(np.empty((256, 256), np.float16), [128, 128]),
    ]
    compiled = _compile(matmul_tiles, [*descs, 512], BM=128, BN=128, BK=64, num_stages=3)
    ptx = compiled.asm["ptx"]
    report = assemble(ptx, "sm_90a", tmp_path)
    assert "ttng.async_tma_copy_global_to_local" in compiled.asm["ttgir"]
    assert _loads_and_stores(ptx) == (3 * 3, 2)
    assert ptx.count("mbarrier.arrive.expect_tx") == 3
    assert "mbarrier.try_wait.parity" in ptx and "ld.global" not in ptx
    assert " 0 bytes spill stores" in report


@needs_ptxas
def test_a_tile_two_dots_read_fills_one_ring_by_tensor_copies(tmp_path):
    """A loaded tile read as it is by one dot and transposed by another is one buffer: one
    ring, filled by copies (3 stages: 2 in the prologue, 1 a step), viewed transposed by the
    second wgmma."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((512, 64)).astype(np.float16)
    x, y = (rng.standard_normal((64, 64)).astype(np.float16) for _ in "xy")
    out1, out2 = (np.empty((64, 64), np.float32) for _ in "12")
    args = [TensorDescriptor.from_tensor(a, [64, 64]), x, y, out1, out2, 512]
    compiled = _compile(tile_read_twice, args, BK=64, BN=64, num_stages=3)
    ttgir, ptx = compiled.asm["ttgir"], compiled.asm["ptx"]
    report = assemble(ptx, "sm_90a", tmp_path)
    assert ttgir.count("ttng.async_tma_copy_global_to_local") == 3
    assert "ttg.memdesc_trans" in ttgir
    assert _loads_and_stores(ptx) == (3, 0)
    assert " 0 bytes spill stores" in report


@needs_ptxas
def test_a_loop_storing_through_a_tensor_map_fills_its_rings_by_copies(tmp_path):
    """The store writes elsewhere than the loads read: the loop is pipelined (2 stages in the
    prologue, 1 a step; a step's store is two boxes of rows of 256 bytes)."""
    a = np.empty((128, 512), np.float16)
    b = np.empty((512, 128), np.float16)
    c = np.empty((128, 1024), np.float16)
    descs = [
        TensorDescriptor.from_tensor(a, [128, 64]),
        TensorDescriptor.from_tensor(b, [64, 128]),
        TensorDescriptor.from_tensor(c, [128, 128]),
    ]
    compiled = _compile(running_products, [*descs, 512], BM=128, BN=128, BK=64, num_stages=3)
    assert "ttng.async_tma_copy_global_to_local" in compiled.asm["ttgir"]
    report = assemble(compiled.asm["ptx"], "sm_90a", tmp_path)
    assert _loads_and_stores(compiled.asm["ptx"]) == (3 * 3, 2)
    assert " 0 bytes spill stores" in report
