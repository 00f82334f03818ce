"""`dce`: dead code elimination — ops whose results are unused and whose erasure loses no effect
are erased, innermost and last first, until none is left.

An op is dead when `naiad.ir.rewriter.is_trivially_dead` says so: unused, not a terminator, and
pure, only reading memory, or holding regions whose ops are all effect-free.

    %a = arith.addi %x, %y : i32
    tt.store %p, %x : !tt.ptr<i32>    ==>    tt.store %p, %x : !tt.ptr<i32>
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import Operation, register_pass
from ..ir.passes import Pass
from ..ir.rewriter import is_trivially_dead


@register_pass("dce")
@dataclass(frozen=True)
class DCE(Pass):
    """Erase dead ops until a fixed point."""

    def run(self, module: Operation) -> None:
        changed = True
        while changed:
            changed = False
            # Post order visits users before what they use, so one sweep frees whole chains.
            for op in reversed(list(module.walk(post_order=True))):
                if op is not module and op.parent is not None and is_trivially_dead(op):
                    op.erase()
                    changed = True
