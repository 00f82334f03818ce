"""`cpu-sequence-partitions`: a `ttg.warp_specialize` in TTIR runs its regions one after
another on the CPU, where a program is one thread: the default region's ops, then each
partition's with its arguments replaced by the op's captures; `gpu.barrier`s go (a thread has
no one to wait for), and the default region's yielded values replace the op's results.

    ttg.warp_specialize(%p)                        tt.store %p, %a
    default { tt.store %p, %a  ttg.warp_yield }    %q = tt.addptr %p, %c1
    partition0(%x: !tt.ptr<i32>) num_warps(1) {    tt.store %q, %b
      %q = tt.addptr %x, %c1                  ==>
      tt.store %q, %b  ttg.warp_return
    } : (!tt.ptr<i32>) -> ()

Legal where the regions do not wait on one another, which TTIR's ops cannot (the mbarriers of
a producer and its consumers are TTGIR's, and the CPU back end compiles TTIR): on a GPU they
run at once, and regions that neither race nor wait give the values of any order. The
reference evaluator runs them in the same order (runtime/evaluator/engine.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import Operation, register_pass
from ...ir.passes import Pass


@register_pass("cpu-sequence-partitions")
@dataclass(frozen=True)
class SequencePartitions(Pass):
    """Inline every `ttg.warp_specialize`'s regions in order (module doc)."""

    def run(self, module: Operation) -> None:
        for op in [op for op in module.walk() if op.name == "gpu.barrier"]:
            op.erase()
        for op in [op for op in module.walk() if op.name == "ttg.warp_specialize"]:
            _sequence(op)


def _sequence(op: Operation) -> None:
    default = op.default_block
    yielded = default.terminator
    for result, value in zip(op.results, yielded.operands):
        result.replace_all_uses_with(value)
    _inline_before(op, default)
    for block in op.partition_blocks:
        for argument, capture in zip(block.arguments, op.explicitCaptures):
            argument.replace_all_uses_with(capture)
        _inline_before(op, block)
    op.erase()


def _inline_before(op: Operation, block) -> None:
    """Move `block`'s ops but its terminator before `op`."""
    for inner in list(block.ops)[:-1]:
        inner.move_before(op)
