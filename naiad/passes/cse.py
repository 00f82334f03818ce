"""`cse`: common subexpression elimination — a pure op equal to an earlier one that dominates it is
replaced by that earlier one.

Legal for ops with the `Pure` trait and no regions: same name, operands, attributes and result
types mean the same values. An op in a nested region may reuse an op of an enclosing block that
comes before the region's op; blocks of a region other than its entry see only the enclosing
scopes (a conservative stand-in for full dominance across branches).

    %a = arith.addi %x, %y : i32            %a = arith.addi %x, %y : i32
    %b = arith.addi %x, %y : i32     ==>    %c = arith.muli %a, %a : i32
    %c = arith.muli %a, %b : i32
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import Operation, Pure, Region, register_pass
from ..ir.passes import Pass


def _key(op: Operation):
    return (
        op.name,
        tuple(id(v) for v in op.operands),
        tuple(sorted(op.attributes.items(), key=lambda item: item[0])),
        tuple(r.type for r in op.results),
    )


@register_pass("cse")
@dataclass(frozen=True)
class CSE(Pass):
    """Eliminate common subexpressions among pure, region-free ops."""

    def run(self, module: Operation) -> None:
        for region in module.regions:
            self._region(region, {})

    def _region(self, region: Region, outer: dict) -> None:
        for block in region.blocks:
            self._block(block, dict(outer))

    def _block(self, block, known: dict) -> None:
        for op in block:
            if op.regions:
                for region in op.regions:
                    self._region(region, known)
                continue
            if Pure not in op.traits or not op.results:
                continue
            key = _key(op)
            earlier = known.get(key)
            if earlier is None:
                known[key] = op
                continue
            for mine, theirs in zip(op.results, earlier.results):
                mine.replace_all_uses_with(theirs)
            op.erase()
