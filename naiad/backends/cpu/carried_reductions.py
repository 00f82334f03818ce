"""`cpu-carried-reductions`: a block accumulated across a loop and reduced after it is reduced
in the loop instead, each step's block into a carried reduction.

    %acc = scf.for ... iter_args(%a = %zeros) {          %s0 = tt.reduce(%zeros) {addf}
      %v = ...                                           %s = scf.for ... iter_args(%r = %s0) {
      %n = arith.addf %a, %v                   ==>         %v = ...
      scf.yield %n                                         %p = tt.reduce(%v) {addf}
    }                                                      %n = arith.addf %r, %p
    %sum = tt.reduce(%acc) {addf}                          scf.yield %n
                                                         }
                                                         (%sum replaced by %s)

Kernels written for a GPU keep such blocks (tutorial 05's layer norm: `_mean += a` over the
row's blocks, `tl.sum(_mean)` after): on a GPU the block is spread over the threads' registers,
and each step adds in place. On the CPU the block is a buffer: each step reads and writes all
of it, besides reading the step's own block. Reduced in the loop, a step reads only its own
block, into vectors of partial sums in registers (lower_reduce.py). Tutorial 05's forward on one
AMD EPYC core: 1.19-1.29 ms written so, 0.90-0.95 reduced in its loops (torch's layer_norm 1.21).

Legal where the combine is associative and commutative (the same op in the loop and in the
reduction's one-op region: addition, an extremum, a bitwise and/or/xor), the block is carried
only into that op, and the loop's result only into the reduction: reduce(init ⊕ v1 ⊕ v2 ...) =
reduce(init) ⊕ reduce(v1) ⊕ reduce(v2) .... Floating-point sums then add in another order,
which the language leaves unspecified (a GPU reduces as a tree). The carried block, left
feeding only itself, is then dropped (scf_canonicalize.RemoveRedundantIterArgs).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...dialects import scf
from ...ir import Operation, register_pass
from ...ir.passes import Pass
from ...ir.rewriter import apply_patterns_greedily
from ...passes.scf_canonicalize import RemoveRedundantIterArgs

# Combines for which reduce(a ⊕ b) = reduce(a) ⊕ reduce(b), in any order of the elements.
_COMBINES = frozenset(
    {
        "arith.addf",
        "arith.addi",
        "arith.maxnumf",
        "arith.minnumf",
        "arith.maximumf",
        "arith.minimumf",
        "arith.maxsi",
        "arith.minsi",
        "arith.maxui",
        "arith.minui",
        "arith.andi",
        "arith.ori",
        "arith.xori",
    }
)


@register_pass("cpu-carried-reductions")
@dataclass(frozen=True)
class CarriedReductions(Pass):
    """Reduce each step's block in the loop where a loop carries a block only to reduce it
    after (module doc)."""

    def run(self, module: Operation) -> None:
        changed = False
        for loop in [op for op in module.walk() if isinstance(op, scf.ForOp)]:
            while (found := _carried_reduction(loop)) is not None:
                loop = _reduce_in_loop(loop, *found)
                changed = True
        if changed:  # the blocks left feeding only themselves stop being carried
            apply_patterns_greedily(module, [RemoveRedundantIterArgs()], fold=False)


def _carried_reduction(loop: scf.ForOp):
    """(iteration index, the combine in the loop, the reduction after it) of the first block
    the loop carries only to reduce it, or None."""
    yielded = loop.body.terminator.operands
    for index, (argument, result) in enumerate(zip(loop.region_iter_args, loop.outs, strict=True)):
        uses, after = list(argument.uses), list(result.uses)
        if len(uses) != 1 or len(after) != 1:
            continue
        (combine, _), (reduce, position) = uses[0], after[0]
        if (
            combine.name in _COMBINES
            and combine.parent is loop.body
            and combine.results[0] is yielded[index]
            and len(list(combine.results[0].uses)) == 1
            and reduce.name == "tt.reduce"
            and len(reduce.operands) == 1
            and position == 0
            and (single := reduce.single_op()) is not None
            and single.name == combine.name
        ):
            return index, combine, reduce
    return None


def _reduce_in_loop(loop: scf.ForOp, index: int, combine: Operation, reduce: Operation):
    """`loop` carrying the reduction of its block `index` instead (module doc); the rebuilt
    loop, whose old block is left to canonicalization."""
    argument = loop.region_iter_args[index]
    step = next(v for v in combine.operands if v is not argument)
    initial = reduce.clone()
    initial.set_operand(0, loop.initArgs[index])
    loop.parent.insert_before(initial, loop)
    loop = scf.carrying_more(loop, [initial.results[0]])
    carried = loop.region_iter_args[-1]
    partial = reduce.clone()
    partial.set_operand(0, step)
    loop.body.insert_after(partial, combine)
    total = combine.clone_as([carried, partial.results[0]], [carried.type])
    loop.body.insert_after(total, partial)
    terminator = loop.body.terminator
    terminator.set_operands([*terminator.operands, total.results[0]])
    reduce.results[0].replace_all_uses_with(loop.outs[-1])
    reduce.erase()
    return loop
