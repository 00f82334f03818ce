"""Two passes of one's own, registered with Naiad (docs/passes.md walks through them).

    naiad-opt kernel.ttir --load examples/passes/my_passes.py -p print-addi
    naiad-opt kernel.ttir --load examples/passes/my_passes.py -p double-to-add

    import my_passes, naiad
    naiad.add_pass("double-to-add", after="canonicalize")      # every kernel's TTIR pipeline
"""

import sys
from dataclasses import dataclass

from naiad.dialects import arith
from naiad.dialects.base import is_splat_value
from naiad.ir import Pass, register_pass
from naiad.ir.rewriter import RewritePattern, apply_patterns_greedily, constant_value


@register_pass("print-addi")
@dataclass(frozen=True)
class PrintAddi(Pass):
    """Print every `arith.addi` with its source location (an analysis: the IR is unchanged)."""

    def run(self, module) -> None:
        for op in module.walk():
            if isinstance(op, arith.AddIOp):
                print(f"arith.addi at {op.location}", file=sys.stderr)


class DoubledIsAdded(RewritePattern):
    """`x * 2` (either operand, scalars or splat tensors) becomes `x + x`."""

    root = arith.MulIOp  # the driver only offers this pattern arith.muli ops

    def match_and_rewrite(self, op, rewriter) -> bool:
        for x, two in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            if is_splat_value(constant_value(two), lambda value: value == 2):
                rewriter.replace_op(op, rewriter.create(arith.AddIOp, x, x))
                return True
        return False


@register_pass("double-to-add")
@dataclass(frozen=True)
class DoubleToAdd(Pass):
    """Rewrite integer `x * 2` into `x + x`, to a fixed point."""

    def run(self, module) -> None:
        apply_patterns_greedily(module, [DoubledIsAdded()])
