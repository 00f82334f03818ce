"""`cse`: common subexpression elimination — a pure op equal to an earlier one that dominates it is
replaced by that earlier one.

Legal for ops with the `Pure` trait: same name, operands, attributes and result types mean the
same values. An op with regions (a `tt.reduce` and its combine region, an `scf.if` computing
values) takes part when it is Pure or when every op nested in it is: it then equals an earlier
op whose regions are structurally equal (naiad.ir.equality, locations aside), a block argument
matching the one at the same place. Nested regions are simplified first, so two copies of one
computation look alike by the time their parents are compared.

An op in a nested region may reuse an op of an enclosing block that comes before the region's
op, unless the region's op is isolated from above (a warp-specialize partition); blocks of a
region other than its entry see only the enclosing scopes (a conservative stand-in for full
dominance across branches).

    %a = arith.addi %x, %y : i32            %a = arith.addi %x, %y : i32
    %b = arith.addi %x, %y : i32     ==>    %c = arith.muli %a, %a : i32
    %c = arith.muli %a, %b : i32
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import IsolatedFromAbove, Operation, Pure, RecursiveMemoryEffects, Region, register_pass
from ..ir.equality import difference
from ..ir.passes import Pass


def _key(op: Operation):
    """What equal ops share. For an op with regions, the names of its nested ops stand in
    for the regions (cheap to hash); equal keys are then compared structurally."""
    key = (
        op.name,
        tuple(id(v) for v in op.operands),
        tuple(sorted(op.attributes.items(), key=lambda item: item[0])),
        tuple(r.type for r in op.results),
    )
    if op.regions:
        key += (tuple(inner.name for inner in op.walk()),)
    return key


def _effect_free(op: Operation) -> bool:
    """Pure, or holding regions whose ops are all effect-free (an `scf.if` of arithmetic)."""
    if Pure in op.traits:
        return True
    if RecursiveMemoryEffects not in op.traits:
        return False
    return all(
        Pure in inner.traits or RecursiveMemoryEffects in inner.traits
        for inner in op.walk()
        if inner is not op
    )


@register_pass("cse")
@dataclass(frozen=True)
class CSE(Pass):
    """Eliminate common subexpressions among pure ops, regions included."""

    def run(self, module: Operation) -> None:
        for region in module.regions:
            self._region(region, {})

    def _region(self, region: Region, outer: dict) -> None:
        for block in region.blocks:
            self._block(block, dict(outer))

    def _block(self, block, known: dict) -> None:
        for op in block:
            for region in op.regions:  # an isolated region sees nothing of the scopes above
                self._region(region, {} if IsolatedFromAbove in op.traits else known)
            if not op.results or not _effect_free(op):
                continue
            key = _key(op)
            candidates = known.get(key, [])
            earlier = next((c for c in candidates if _same(c, op)), None)
            if earlier is None:
                # A new list: the enclosing scopes' dicts share the old one.
                known[key] = [*candidates, op]
                continue
            for mine, theirs in zip(op.results, earlier.results):
                mine.replace_all_uses_with(theirs)
            op.erase()


def _same(earlier: Operation, op: Operation) -> bool:
    """Whether `op` computes what `earlier` does: the key says so for ops without regions."""
    return not op.regions or difference(earlier, op, locations=False) is None
