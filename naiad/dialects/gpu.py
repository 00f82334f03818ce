"""The one op of upstream MLIR's `gpu` dialect that Triton's hand-written TTIR and TTGIR use:
`gpu.barrier`, every thread of the CTA waits for the others, and their shared-memory and
global writes before it are visible after it (CUDA's `__syncthreads`). Inside a
`ttg.warp_specialize` region it synchronizes that region's warps alone, as in Triton."""

from __future__ import annotations

from ..ir import MemoryRead, MemoryWrite, Operation, irdl_op


@irdl_op
class BarrierOp(Operation):
    """Synchronize the threads of the CTA (or of the warp-specialize region holding it)."""

    name = "gpu.barrier"
    traits = frozenset({MemoryRead, MemoryWrite})
    assembly_format = "attr-dict"
