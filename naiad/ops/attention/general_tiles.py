"""The general attention kernels' tiles (forward.py, backward.py: every head dim up to 256, masks,
dropout, packed sequences), by kernel, device kind and head block, as flash.py launches them;
the whole-block kernels have their own (whole_tiles.py)."""

from __future__ import annotations

import torch

from ..device_kind import device_kind
from ..dtypes import Unsupported

__all__ = ["BLOCKS", "blocks"]

# (kernel, device kind) -> rows (widest head block, BLOCK_M queries, BLOCK_N keys, num_warps):
# the first row whose head block is at least the call's. The GPU rows are the fastest of a
# sweep on an H200 (fp16, 4x16x1024, causal and not; the forward's again at 2x16x4096 after
# wgmma and pipelining, the backward's after its whole blocks went unmasked: bench/RESULTS.md);
# the widest heads take smaller tiles (the tiles share the registers). Head blocks of 256 were
# swept at fp16 2x16x2048 (ms, against torch's flash kernel's 0.47 forward and 2.06 forward +
# backward): the forward at 128x32 with 8 warps 1.35 -> 0.51 (32x32 with 4 before; 64x64 and
# wider spill or overflow shared memory), dQ at 128x32 with 8 warps, and dK/dV holding 16 keys
# of 8 warps (64 queries a step: 130 bytes spilled, where 64 keys spilled 270): forward +
# backward 7.60 -> 4.81. The CPU keeps one set.
_CPU = ((64, 64, 64, 1), (256, 32, 32, 1))
BLOCKS = {
    ("forward", "cuda"): ((64, 64, 64, 4), (128, 128, 128, 8), (256, 128, 32, 8)),
    ("dkdv", "cuda"): ((64, 64, 64, 4), (128, 64, 128, 8), (256, 64, 16, 8)),
    ("dq", "cuda"): ((64, 64, 64, 4), (128, 128, 64, 8), (256, 128, 32, 8)),
    ("forward", "cpu"): ((64, 64, 64, 1), (128, 64, 32, 1), (256, 32, 32, 1)),
    ("dkdv", "cpu"): _CPU,
    ("dq", "cpu"): _CPU,
}


def blocks(kernel: str, device: torch.device, block_e: int) -> tuple[int, int, dict]:
    """(BLOCK_M, BLOCK_N, launch options) of one of the three kernels."""
    kind = device_kind(device)
    for widest, block_m, block_n, warps in BLOCKS[(kernel, kind)]:
        if block_e <= widest:
            return block_m, block_n, {} if kind == "cpu" else {"num_warps": warps}
    raise Unsupported(f"attention with a head block of {block_e}")
