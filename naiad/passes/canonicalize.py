"""`canonicalize`: fold constants and apply every op's canonicalization patterns, to a fixed point.

Each op class contributes what it knows: `fold()` (constant folding, `x + 0 -> x`, ...) and the
patterns of `canonicalization_patterns()`; Triton-specific rewrites (addptr chains, splats of
constants, masks that are always true) are the patterns of tt_canonicalize.py, upstream MLIR's
for loops and conditionals those of scf_canonicalize.py, and the reassociation of integer
constants those of arith_canonicalize.py. Blocks no branch reaches are erased first, and dead
pure ops on the way.

    %c0 = arith.constant 0 : i32
    %a = arith.addi %x, %c0 : i32     ==>    (uses of %a now use %x)
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import Operation, register_pass
from ..ir.opdef import registered_ops
from ..ir.passes import Pass
from ..ir.rewriter import apply_patterns_greedily
from .arith_canonicalize import arith_canonicalization_patterns
from .scf_canonicalize import scf_canonicalization_patterns
from .tt_canonicalize import tt_canonicalization_patterns
from .unreachable_blocks import erase_unreachable_blocks


def canonicalization_patterns() -> list:
    """The patterns of every registered op class, Triton's for `tt` ops, upstream's for `scf`
    ops and the reassociation of `arith` constants."""
    patterns = []
    for op_class in registered_ops():
        patterns.extend(op_class.canonicalization_patterns())
    patterns.extend(tt_canonicalization_patterns())
    patterns.extend(scf_canonicalization_patterns())
    patterns.extend(arith_canonicalization_patterns())
    return patterns


@register_pass("canonicalize")
@dataclass(frozen=True)
class Canonicalize(Pass):
    """Fold and canonicalize until nothing changes (at most `max_iterations` sweeps)."""

    max_iterations: int = 10

    def run(self, module: Operation) -> None:
        erase_unreachable_blocks(module)
        apply_patterns_greedily(
            module, canonicalization_patterns(), fold=True, max_iterations=self.max_iterations
        )
