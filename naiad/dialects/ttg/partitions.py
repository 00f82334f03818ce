"""`ttg.warp_specialize`: a kernel's warps split into partitions that run different code, as
Triton's op of the same name (`tl.range(..., warp_specialize=True)` on Hopper).

    ttg.warp_specialize {partitionNumWarps = array<i32: 4>, requestedRegisters = array<i32: 40>,
                         defaultRegisters = 232}
    default { ...the consumers' code...  ttg.warp_yield }
    partition0 { ...the producer's code...  ttg.warp_return }

The default region runs on the kernel's `ttg.num-warps` warps (warps 0..n-1), the layouts of its
tensors are theirs; each partition on `partitionNumWarps[i]` more warps after them, and holds
scalar code only. Unlike Triton's, the regions read the values defined above the op directly
(no block arguments): every warp computes those, before it takes its partition.
`requestedRegisters` (per partition) and `defaultRegisters` are the registers per thread each
asks for with `setmaxnreg` (0: no change); the module's `ttg.total-num-warps` counts them all.
It prints in MLIR's generic form: its regions capture rather than take arguments, so Triton's
custom syntax would not describe it.
"""

from __future__ import annotations

from ...ir import HasParent, Operation, Pure, Terminator, irdl_op, opt_attribute, region
from ..base import DenseI32ArrayAttr, I32Attr


@irdl_op
class WarpSpecializeOp(Operation):
    """The default region on the kernel's warps, one partition region on more (module doc)."""

    name = "ttg.warp_specialize"
    defaultRegion = region(single_block=True)
    partitionRegion = region(single_block=True)
    partitionNumWarps = opt_attribute(DenseI32ArrayAttr)
    requestedRegisters = opt_attribute(DenseI32ArrayAttr)
    defaultRegisters = opt_attribute(I32Attr)


@irdl_op
class WarpYieldOp(Operation):
    """The end of a `ttg.warp_specialize`'s default region."""

    name = "ttg.warp_yield"
    traits = frozenset({Pure, Terminator, HasParent("ttg.warp_specialize")})
    assembly_format = "attr-dict"


@irdl_op
class WarpReturnOp(Operation):
    """The end of a `ttg.warp_specialize`'s partition region."""

    name = "ttg.warp_return"
    traits = frozenset({Pure, Terminator, HasParent("ttg.warp_specialize")})
    assembly_format = "attr-dict"
