"""Blocks of one head of 3-D host descriptors ([1, rows, columns], reshaped to 2-D) compiled for
sm_90a and assembled by ptxas: one `.3d` tensor copy a box (frontend/tensor_maps.py,
lowering/tma.py), the reshape gone before the layouts (the copy's buffer is the dot's operand,
with no copy through registers), the pipeliner's rings filled by such copies, and the loads in
a loop that feeds no dot given back to pointers over the three dimensions
(passes/descriptor_pointers.py). The values on a GPU: tests/gpu/test_tensor_copies_gpu.py."""

import re

import numpy as np
from fixture_kernels.head_blocks import head_products, head_row_sums
from test_lowering import assemble
from test_toolchain import needs_ptxas

from naiad.runtime.tensor_maps import TensorMaps
from naiad.tools.tensor_descriptor import TensorDescriptor

COPY_IN = r"cp\.async\.bulk\.tensor\.3d\.shared::cluster\.global"
COPY_OUT = r"cp\.async\.bulk\.tensor\.3d\.global\.shared::cta"


def _heads(shape, block, dtype=np.float16):
    return TensorDescriptor.from_tensor(np.zeros(shape, dtype), list(block))


def _loop(ttgir: str) -> str:
    """The text of the first `scf.for` (its body's lines, up to its yield)."""
    start = ttgir.index("scf.for")
    return ttgir[start : ttgir.index("scf.yield", start)]


@needs_ptxas
def test_a_loop_over_head_blocks_fills_its_rings_by_3d_copies(tmp_path):
    """3 stages: the prologue copies 2 iterations' tiles of a and b, the loop one, each with
    three coordinates (the head's last); the dot reads the ring's buffers (no reshape, no
    buffer filled from registers in the loop); the result goes out by one `.3d` copy."""
    descs = [_heads((3, 100, 256), (1, 64, 64)), _heads((3, 256, 64), (1, 64, 64)),
             _heads((3, 100, 64), (1, 64, 64))]  # fmt: skip
    compiled = head_products.warmup(*descs, 256, BM=64, BN=64, BK=64, num_stages=3,
                                    grid=(2, 3), target="cuda:sm_90a")  # fmt: skip
    ttgir, ptx = compiled.asm["ttgir"], compiled.asm["ptx"]
    report = assemble(ptx, "sm_90a", tmp_path)
    assert "tt.reshape" not in ttgir
    copies = re.findall(r"ttng\.async_tma_copy_global_to_local %\S+\[([^\]]*)\]", ttgir)
    assert len(copies) == 2 * 2 + 2 and all(len(c.split(",")) == 3 for c in copies)
    loop = _loop(ttgir)
    assert "ttg.local_alloc %" not in loop and "ttng.warp_group_dot" in loop
    assert len(re.findall(COPY_IN, ptx)) == 3 * 2 and len(re.findall(COPY_OUT, ptx)) == 1
    assert "ld.global" not in ptx and "st.global" not in ptx
    assert " 0 bytes spill stores" in report


@needs_ptxas
def test_head_blocks_feeding_no_dot_in_a_loop_keep_pointers(tmp_path):
    """A loop's loads that feed a reduction are pointer loads, masked at each head's rows, of
    the map's three sizes and strides; no tensor copy remains."""
    desc = _heads((3, 100, 256), (1, 64, 64))
    compiled = head_row_sums.warmup(desc, np.empty(6 * 64, np.float32), 256, BM=64, BK=64,
                                    grid=(2, 3), target="cuda:sm_90a")  # fmt: skip
    ptx = compiled.asm["ptx"]
    assemble(ptx, "sm_90a", tmp_path)
    assert "cp.async.bulk.tensor" not in ptx and "tt.reshape" not in compiled.asm["ttgir"]
    assert re.search(r"ld\.global|cp\.async\.(?:ca|cg)", ptx)


def test_a_head_blocks_map_has_a_box_of_one_head():
    """The host map of blocks [1, rows, columns]: the 2-D block's box (innermost first), then
    1 along the heads; the 2-D block's swizzle."""
    maps = TensorMaps("x", "fp16", [1, 64, 64], "zero")
    assert (
        maps.box == (64, 64, 1)
        and maps.swizzle == TensorMaps("y", "fp16", [64, 64], "zero").swizzle
    )
    wide = TensorMaps("x", "fp16", [1, 1, 300, 128], "zero")  # two boxes of 64 columns
    assert wide.box == (64, 256, 1, 1)


@needs_ptxas
def test_a_tile_loaded_before_the_loop_is_read_transposed_from_its_buffer(tmp_path):
    """naiad.ops attention's dK/dV walk adding dQ (dQ^T = K^T dS^T, D64, 32x128 on 4 warps):
    K^T, the chained dot's A, is K's buffer viewed transposed, not 32 registers a thread held
    across the loop (which spilled 24 bytes)."""
    import torch

    from naiad.ops.attention.whole_backward import attention_dkdv_whole

    def heads(t, rows):
        n, e = t.shape[-2:]
        return TensorDescriptor(t, [t.numel() // (n * e), n, e], [n * e, e, 1], [1, rows, e])

    q, dq = torch.empty(1, 2, 256, 64, dtype=torch.float16), torch.empty(1, 2, 256, 64)
    lse = torch.empty(512)
    compiled = attention_dkdv_whole.warmup(
        heads(q, 32), heads(q, 128), heads(q, 128), heads(q, 32), lse, lse, heads(q, 128),
        heads(q, 128), heads(dq, 32), 256, 256, 2, 1, 0.1, E=64, CAUSAL=False, BLOCK_M=32,
        BLOCK_N=128, DQ_ADDED=True, grid=(2, 2), target="cuda:sm_90a", num_warps=4,
        num_stages=3,
    )  # fmt: skip
    assemble(compiled.asm["ptx"], "sm_90a", tmp_path)
    assert compiled.n_spills == 0
    before_the_loop = compiled.asm["ttgir"].split("scf.for")[0]
    assert not re.search(r"dot_op<\{opIdx = 0", before_the_loop)  # no A held in registers
