"""`ttg.warp_specialize`: a kernel's warps split into partitions that run different code, as
Triton's op of the same name, in Triton's form and text:

    ttg.warp_specialize(%a, %b) attributes {requestedRegisters = array<i32: 40>}
    default { ...on the kernel's warps...  ttg.warp_yield }
    partition0(%x: !tt.ptr<i32>, %y: !tt.ptr<i32>) num_warps(4) { ...  ttg.warp_return }
    partition1(%x: !tt.ptr<i32>, %y: !tt.ptr<i32>) num_warps(1) { ...  ttg.warp_return }
    : (!tt.ptr<i32>, !tt.ptr<i32>) -> ()

The default region runs on the kernel's `ttg.num-warps` warps (warps 0..n-1) and may read the
values above it; partition i runs on `partitionNumWarps[i]` more warps, the layouts of its
tensors are of that many warps, and it is isolated from above: it reads the op's operands
(`explicitCaptures`) as its block arguments. The partitions sit in the regions of a
`ttg.warp_specialize.partitions` op, the one op of this one's second region, as in Triton's
generic form. `warpGroupStartIds[i]` is the first warp of partition i (the NVIDIA back end
fills it in: the partitions largest first, one after another past the default warps);
`requestedRegisters` and `actualRegisters` (per partition, Triton's register requests) are
kept and verified but not acted on: every region keeps the block's fair share of registers.
The module's `ttg.total-num-warps` counts every warp.
The default region's `ttg.warp_yield` values are the op's results. Naiad's own warp
specialization (`tl.range(..., warp_specialize=True)` on Hopper,
backends/nvidia/passes/warp_specialize.py) makes one partition, the producer, and captures
what it reads.
"""

from __future__ import annotations

from ...ir import (
    HasParent,
    IsolatedFromAbove,
    Operation,
    Pure,
    Terminator,
    irdl_op,
    opt_attribute,
    region,
    var_operand,
    var_region,
    var_result,
)
from ...ir.attributes import DenseArrayAttr
from ...ir.block import Block, Region
from ...ir.types import i32
from ..base import DenseI32ArrayAttr, fail


@irdl_op
class WarpSpecializeOp(Operation):
    """The default region on the kernel's warps, each partition on more (module doc)."""

    name = "ttg.warp_specialize"
    explicitCaptures = var_operand()
    defaultPassthrough = var_result()
    defaultRegion = region(single_block=True)
    partitionOpHolder = region(single_block=True)
    partitionNumWarps = opt_attribute(DenseI32ArrayAttr)
    warpGroupStartIds = opt_attribute(DenseI32ArrayAttr)
    requestedRegisters = opt_attribute(DenseI32ArrayAttr)
    actualRegisters = opt_attribute(DenseI32ArrayAttr)
    custom_syntax = True

    @classmethod
    def build(cls, captures, partition_warps, location, **attributes) -> WarpSpecializeOp:
        """An op with empty default and partition blocks, one per entry of `partition_warps`,
        whose arguments take `captures`' types (terminators left to the caller)."""
        types = [v.type for v in captures]
        regions = [Region([Block(types)]) for _ in partition_warps]
        return cls(
            explicitCaptures=list(captures),
            defaultPassthrough=[],
            defaultRegion=Region([Block()]),
            partitionOpHolder=holder_region(regions, location),
            partitionNumWarps=DenseArrayAttr(i32, list(partition_warps)),
            location=location,
            **attributes,
        )

    @property
    def default_block(self) -> Block:
        return self.defaultRegion.blocks[0]

    @property
    def partition_blocks(self) -> list[Block]:
        """Each partition's one block, in order."""
        holder = self.partitionOpHolder.blocks[0].ops
        return [r.blocks[0] for r in next(iter(holder)).partitionRegions]

    def verify_(self) -> None:
        holder = self.partitionOpHolder.blocks
        if len(holder) != 1 or [op.name for op in holder[0].ops] != [
            "ttg.warp_specialize.partitions"
        ]:
            fail(self, "expects its second region to hold one 'ttg.warp_specialize.partitions'")
        blocks = self.partition_blocks
        warps = self.partitionNumWarps
        if warps is None or len(warps.values) != len(blocks):
            fail(self, f"has {len(blocks)} partitions but 'partitionNumWarps' says otherwise")
        if any(n < 1 or n & (n - 1) for n in warps.values):
            fail(self, "partition number of warps must be a power of 2")
        for name in ("warpGroupStartIds", "requestedRegisters", "actualRegisters"):
            attr = self.attributes.get(name)
            if attr is not None and len(attr.values) != len(blocks):
                fail(self, f"'{name}' must have one entry per partition ({len(blocks)})")
        _verify_yield(self)
        for i, block in enumerate(blocks):
            _verify_partition(self, i, block)


def _verify_yield(op: WarpSpecializeOp) -> None:
    block = op.default_block
    last = block.last_op
    if last is None or last.name != "ttg.warp_yield":
        fail(op, "the default region must end with 'ttg.warp_yield'")
    if [v.type for v in last.operands] != [r.type for r in op.results]:
        fail(op, "the default region's 'ttg.warp_yield' must give the op's result types")


def _verify_partition(op: WarpSpecializeOp, i: int, block: Block) -> None:
    types = [a.type for a in block.arguments]
    if types != [v.type for v in op.explicitCaptures]:
        fail(op, f"partition #{i} must take the captures' types as arguments, got {types}")
    if block.last_op is None or block.last_op.name != "ttg.warp_return":
        fail(op, f"partition #{i} must end with 'ttg.warp_return'")


@irdl_op
class WarpSpecializePartitionsOp(Operation):
    """The holder of a `ttg.warp_specialize`'s partition regions (its second region's one op)."""

    name = "ttg.warp_specialize.partitions"
    traits = frozenset({IsolatedFromAbove, Terminator, HasParent("ttg.warp_specialize")})
    partitionRegions = var_region(single_block=True)


@irdl_op
class WarpYieldOp(Operation):
    """The end of a `ttg.warp_specialize`'s default region: the op's results."""

    name = "ttg.warp_yield"
    traits = frozenset({Pure, Terminator, HasParent("ttg.warp_specialize")})
    values = var_operand()
    assembly_format = "($values^ `:` type($values))? attr-dict"


@irdl_op
class WarpReturnOp(Operation):
    """The end of a partition region."""

    name = "ttg.warp_return"
    traits = frozenset({Pure, Terminator, HasParent("ttg.warp_specialize.partitions")})
    assembly_format = "attr-dict"


def holder_region(partitions: list[Region], location) -> Region:
    """A `ttg.warp_specialize`'s second region: one block holding the
    `ttg.warp_specialize.partitions` op of the regions `partitions`."""
    block = Block()
    block.append(WarpSpecializePartitionsOp(partitionRegions=partitions, location=location))
    return Region([block])
