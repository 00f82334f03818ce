"""Warp specialization on sm_90a, without a GPU (passes/warp_specialize.py,
lowering/partitions.py): what the NVIDIA back end makes of loops marked
`tl.range(..., warp_specialize=True)` (fixture_kernels/warp_specialized.py).

A persistent tile loop and a K loop over tensor copies split into the consumers (the kernel's
warps: the dots, handing each slot back) and a producer warpgroup (the copies): the metadata's
warps count both, the barriers inside the regions are named ones of each region's threads, and
past 256 threads the producer gives registers to the consumers. A loop of pointer loads keeps
one partition. Each kernel assembles without spills."""

import re

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


def _persistent(num_warps, block_n=128, subtile=False):
    return persistent_tiles.warmup(
        "*fp16", "*fp16", "*fp16", 4096, 4096, 4096, PROGRAMS=132, BLOCK_M=128,
        BLOCK_N=block_n, BLOCK_K=64, SUBTILE=subtile, num_warps=num_warps, num_stages=3,
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
    "num_warps, block_n, subtile, slots",
    [(4, 128, False, 4), (8, 256, True, 4), (8, 256, False, 3)],
)
def test_a_persistent_tile_loop_splits_into_producer_and_consumers(
    num_warps, block_n, subtile, slots, tmp_path
):
    """`slots`: num_stages (3) and one for the dot in flight, which then runs on asynchronously,
    but where the rings and the epilogue's whole 128 x 256 tile would not fit in shared memory
    together: then the dot is synchronous."""
    compiled = _persistent(num_warps, block_n, subtile)
    ttgir, ptx = compiled.asm["ttgir"], compiled.asm["ptx"]
    assert f"memdesc<{slots}x{block_n}x64xf16" in ttgir
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
    assert f".maxntid {32 * (num_warps + 4)}" in ptx
    assert f"bar.sync 1, {32 * num_warps};" in ptx  # the consumers' named barrier
    registers = re.findall(r"setmaxnreg\.(inc|dec)\.sync\.aligned\.u32 (\d+);", ptx)
    if num_warps == 8:  # 384 threads: a fair share of 168 registers would not hold the tile
        assert registers == [("inc", "232"), ("dec", "40")] and ".maxnreg 168" in ptx
    else:
        assert registers == []
    assert "0 bytes spill" in assemble(ptx, "sm_90a", tmp_path)


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


def test_a_launch_register_cap_keeps_registers_in_place():
    """`maxnreg` caps every thread: the partitions then leave their registers alone."""
    compiled = persistent_tiles.warmup(
        "*fp16", "*fp16", "*fp16", 4096, 4096, 4096, PROGRAMS=132, BLOCK_M=128, BLOCK_N=256,
        BLOCK_K=64, SUBTILE=True, num_warps=8, num_stages=3, maxnreg=160, grid=(1,),
        target=TARGET,
    )  # fmt: skip
    ptx = compiled.asm["ptx"]
    assert "ttg.warp_specialize(" in compiled.asm["ttgir"] and "setmaxnreg" not in ptx
    assert ".maxnreg 160" in ptx


@pytest.mark.parametrize("num_warps", [8, 12, 16])
def test_the_consumers_take_no_more_registers_than_the_producer_gives_back(num_warps):
    """`setmaxnreg.inc` waits until the block's pool holds what it asks: asking for more than
    the producer released (from the fair share the kernel starts with) would wait forever."""
    from naiad.backends.nvidia.lowering.partitions import fair_share
    from naiad.backends.nvidia.passes.warp_specialize import PRODUCER_WARPS, _registers

    asked = _registers(num_warps)
    share = fair_share(32 * (num_warps + PRODUCER_WARPS))
    (producer,) = asked["requestedRegisters"].values
    consumer = asked["defaultRegisters"].value
    assert consumer > share > producer and consumer % 8 == 0
    assert (consumer - share) * 32 * num_warps <= (share - producer) * 32 * PRODUCER_WARPS


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
