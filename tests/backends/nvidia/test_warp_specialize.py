"""Warp specialization on sm_90a, without a GPU (passes/warp_specialize.py,
lowering/partitions.py): what the NVIDIA back end makes of loops marked
`tl.range(..., warp_specialize=True)` (fixture_kernels/warp_specialized.py).

A persistent tile loop and a K loop over tensor copies split into the consumers (the kernel's
warps: the dots, handing each slot back) and a producer warpgroup (the copies): the metadata's
warps count both, and the barriers inside the regions are named ones of each region's threads.
As Triton's Hopper rule, only a kernel of 4 warps splits; a loop of pointer loads keeps one
partition. Each kernel assembles without spills."""

import numpy as np
import pytest
from fixture_kernels.warp_specialized import (
    counted_k_loop,
    k_loop,
    persistent_tiles,
    pointer_k_loop,
    two_k_loops,
)
from test_lowering import assemble
from test_toolchain import needs_ptxas

from naiad.tools.tensor_descriptor import TensorDescriptor

TARGET = "cuda:sm_90a"


def _persistent(num_warps, block_n=128, subtile=False, block_k=64):
    return persistent_tiles.warmup(
        "*fp16", "*fp16", "*fp16", 4096, 4096, 4096, PROGRAMS=132, BLOCK_M=128,
        BLOCK_N=block_n, BLOCK_K=block_k, SUBTILE=subtile, num_warps=num_warps, num_stages=3,
        grid=(1,), target=TARGET,
    )  # fmt: skip


def _regions(ttgir: str) -> tuple[str, str]:
    """The default (consumers') and the partition (producer's) region of the one
    `ttg.warp_specialize`."""
    start = ttgir.index("ttg.warp_specialize(")
    split = ttgir.index("ttg.warp_yield", start)
    return ttgir[start:split], ttgir[split : ttgir.index("ttg.warp_return", split)]


@needs_ptxas
@pytest.mark.parametrize(
    "block_n, block_k, subtile, slots",
    [(128, 64, False, 4), (128, 64, True, 4), (128, 128, False, 3)],
)
def test_a_persistent_tile_loop_splits_into_producer_and_consumers(
    block_n, block_k, subtile, slots, tmp_path
):
    """`slots`: num_stages (3) and one for the dot in flight, which then runs on asynchronously,
    but where four slots of 128 x 128 x 128 would not fit in shared memory beside the
    epilogue's tile: then the dot is synchronous."""
    num_warps = 4
    compiled = _persistent(num_warps, block_n, subtile, block_k)
    ttgir, ptx = compiled.asm["ttgir"], compiled.asm["ptx"]
    assert f"memdesc<{slots}x{block_n}x{block_k}xf16" in ttgir
    assert ttgir.count("ttg.warp_specialize(") == 1
    consumers, producer = _regions(ttgir)
    assert consumers.count("ttng.warp_group_dot ") == 1 and "async_tma_copy" not in consumers
    asynchronous = slots == 4  # a slot more than the 3 stages: the dot runs on
    assert ("isAsync = true" in consumers) == asynchronous
    assert ("{pendings = 1 : i32}" in consumers) == asynchronous
    # asynchronous: the slot of the step before, handed back in the loop, the last step's
    # after it; synchronous: each step's own, after its dot
    assert consumers.count("ttng.wait_barrier") == 1
    assert consumers.count("arrive_barrier") == (2 if asynchronous else 1)
    assert producer.count("ttng.async_tma_copy_global_to_local") == 2
    assert producer.count("ttng.barrier_expect") == 1 and "warp_group_dot" not in producer
    assert "tt.descriptor_load" not in ttgir
    assert compiled.metadata.num_warps == num_warps + 4
    assert f".reqntid {32 * (num_warps + 4)}" in ptx
    assert f"bar.sync 1, {32 * num_warps};" in ptx  # the consumers' named barrier
    assert "setmaxnreg" not in ptx  # 256 threads: the fair share holds the tile
    assert "0 bytes spill" in assemble(ptx, "sm_90a", tmp_path)


@needs_ptxas
def test_a_kernel_of_eight_warps_keeps_one_partition(tmp_path):
    """Triton's Hopper rule: 8 warps leave the marked loop as written, its tensor copies
    pipelined (measured faster than the split there: passes/warp_specialize.py)."""
    compiled = _persistent(8, 256, True)
    ttgir = compiled.asm["ttgir"]
    assert "ttg.warp_specialize(" not in ttgir
    assert "ttng.async_tma_copy_global_to_local" in ttgir and "memdesc<4x256x64xf16" in ttgir
    assert compiled.metadata.num_warps == 8
    assert "0 bytes spill" in assemble(compiled.asm["ptx"], "sm_90a", tmp_path)


@needs_ptxas
def test_a_k_loop_over_host_descriptors_splits_too(tmp_path):
    a, b, c = (np.empty((512, 512), np.float16) for _ in range(3))
    blocks = ([128, 64], [64, 128], [128, 128])
    descriptors = [TensorDescriptor.from_tensor(x, block) for x, block in zip((a, b, c), blocks)]
    compiled = k_loop.warmup(
        *descriptors, 512, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=4, num_stages=4,
        grid=(1,), target=TARGET,
    )  # fmt: skip
    consumers, producer = _regions(compiled.asm["ttgir"])
    assert "tt.descriptor_store" in consumers  # the epilogue after the loop: the consumers'
    # num_stages slots, and one for the dot still in flight
    assert "5x128x64xf16" in compiled.asm["ttgir"]
    assert producer.count("ttng.async_tma_copy_global_to_local") == 2
    assert compiled.metadata.num_warps == 8
    assert "0 bytes spill" in assemble(compiled.asm["ptx"], "sm_90a", tmp_path)


def test_a_loop_of_pointer_loads_keeps_one_partition():
    compiled = pointer_k_loop.warmup(
        "*fp16", "*fp16", "*fp16", 4096, 4096, 4096, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64,
        num_warps=4, num_stages=3, grid=(1,), target=TARGET,
    )  # fmt: skip
    assert "ttg.warp_specialize(" not in compiled.asm["ttgir"]
    assert "ttg.async_copy_global_to_local" in compiled.asm["ttgir"]  # pipelined as before
    assert compiled.metadata.num_warps == 4


@needs_ptxas
def test_only_the_first_marked_loop_splits(tmp_path):
    """A second marked loop lies in the consumers' region once the first splits: it runs there
    as written (its loads through tensor copies of their own)."""
    a, b, c, d = (np.empty((512, 512), np.float16) for _ in range(4))
    blocks = ([128, 64], [64, 128], [128, 128], [128, 128])
    descriptors = [TensorDescriptor.from_tensor(x, blk) for x, blk in zip((a, b, c, d), blocks)]
    compiled = two_k_loops.warmup(
        *descriptors, 512, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=4, num_stages=3,
        grid=(1,), target=TARGET,
    )  # fmt: skip
    ttgir = compiled.asm["ttgir"]
    assert ttgir.count("ttg.warp_specialize(") == 1
    consumers, producer = _regions(ttgir)
    assert producer.count("ttng.async_tma_copy_global_to_local") == 2
    assert consumers.count("ttng.async_tma_copy_global_to_local") == 6  # pipelined: 2 x (2 + 1)
    assert "0 bytes spill" in assemble(compiled.asm["ptx"], "sm_90a", tmp_path)


def test_an_atomic_before_the_loop_keeps_one_partition():
    """Every warp runs what precedes the loop, the producer's too: an atomic there would count
    twice, so the loop is left as written."""
    a, b, c = (np.empty((512, 512), np.float16) for _ in range(3))
    blocks = ([128, 64], [64, 128], [128, 128])
    descriptors = [TensorDescriptor.from_tensor(x, blk) for x, blk in zip((a, b, c), blocks)]
    compiled = counted_k_loop.warmup(
        *descriptors, "*i32", 512, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=4,
        num_stages=3, grid=(1,), target=TARGET,
    )  # fmt: skip
    assert "ttg.warp_specialize(" not in compiled.asm["ttgir"]
    assert compiled.metadata.num_warps == 4
