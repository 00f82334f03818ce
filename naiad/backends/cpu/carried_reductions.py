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
reduction's one-op region: addition, multiplication, an extremum, a bitwise and/or/xor), the
block is carried only into that op, and the loop's result only into the reduction:
reduce(init ⊕ v1 ⊕ v2 ...) = reduce(init) ⊕ reduce(v1) ⊕ reduce(v2) .... Floating-point sums and
products then round in another order, which the language leaves unspecified (a GPU reduces as
a tree). The carried block, left feeding only itself, is then dropped
(scf_canonicalize.RemoveRedundantIterArgs).

An extremum is often written as a select in the loop (naiad.ops' amax: `where((v > acc) |
(v != v), v, acc)`, three vector ops where maximumf's -0 < +0 ordering takes more on x86),
before a reduction by `arith.maximumf`. The select keeps the larger value, or the step's NaN,
and a NaN once taken stays (nothing compares above it): the same combine as maximumf but for
which of two equal zeros it keeps, which the select leaves to the order of the elements
already. So that chain counts as maximumf (`v < acc` as minimumf), and the loop carries the
select of the step's reduction into the carried value, the same four ops on scalars; an
integer `select(v > acc, v, acc)` counts as maxsi (amax of integers, all, any). A block's
maximumf is then the CPU's integer fold (codegen/lower_reduce.py): naiad.ops' amax over rows of
1024 floats went from 2.2x torch's time to about 1.1x.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...dialects import scf
from ...ir import Operation, RankedTensorType, register_pass
from ...ir.passes import Pass
from ...ir.rewriter import apply_patterns_greedily
from ...passes.scf_canonicalize import RemoveRedundantIterArgs

# Combines for which reduce(a ⊕ b) = reduce(a) ⊕ reduce(b), in any order of the elements.
_COMBINES = frozenset(
    {
        "arith.addf",
        "arith.addi",
        "arith.mulf",
        "arith.muli",
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


# An extremum written as a select (module doc): the predicate of `step <pred> carried` that
# picks the step's value, and the reduction op the select agrees with; a float one only beside
# a NaN test of the step (`v != v` or `isnan(v)`), which lets a NaN through as maximumf does.
_FLOAT_PICKS = {"ogt": "arith.maximumf", "olt": "arith.minimumf"}
_INTEGER_PICKS = {
    **dict.fromkeys(("sgt", "sge"), "arith.maxsi"),
    **dict.fromkeys(("slt", "sle"), "arith.minsi"),
    **dict.fromkeys(("ugt", "uge"), "arith.maxui"),
    **dict.fromkeys(("ult", "ule"), "arith.minui"),
}
_SWAPPED = {"ogt": "olt", "olt": "ogt", "sgt": "slt", "slt": "sgt", "sge": "sle", "sle": "sge",
            "ugt": "ult", "ult": "ugt", "uge": "ule", "ule": "uge"}  # fmt: skip
_NAN_TESTS = ("une", "uno")


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
    the loop carries only to reduce it, or None. The combine is (its ops in the order they
    are to be made again, the step's block it takes in)."""
    yielded = loop.body.terminator.operands
    for index, (argument, result) in enumerate(zip(loop.region_iter_args, loop.outs, strict=True)):
        after = list(result.uses)
        if len(after) != 1:
            continue
        reduce, position = after[0]
        if (
            reduce.name != "tt.reduce"
            or len(reduce.operands) != 1
            or position != 0
            or (single := reduce.single_op()) is None
        ):
            continue
        last = yielded[index].defining_op
        if last is None or last.parent is not loop.body or len(list(last.results[0].uses)) != 1:
            continue
        combine = _plain_combine(argument, last) or _selected_extremum(argument, last)
        if combine is not None and combine[0] == single.name:
            return index, combine[1:], reduce
    return None


def _plain_combine(argument, last: Operation):
    """(the reduction op it is, [last], the step's block) where `last` is one associative op of
    the carried block and the step's block; else None."""
    operands = list(last.operands)
    if last.name not in _COMBINES or len(list(argument.uses)) != 1 or argument not in operands:
        return None
    return last.name, [last], next(v for v in operands if v is not argument)


def _selected_extremum(argument, select: Operation):
    """(the reduction op, the chain's ops, the step's block) where `select` is `select(step >
    carried, step, carried)` on integers, or `select((step > carried) | (step != step), step,
    carried)` on floats, or their minima (`<`), each op used once and the carried block read
    only by the chain; else None."""
    if select.name != "arith.select" or select.operands[2] is not argument:
        return None
    condition, step = select.operands[0], select.operands[1]
    made = condition.defining_op
    if made is None or len(list(condition.uses)) != 1:
        return None
    if made.name == "arith.cmpi":
        picked, chain = _picked(made, step, argument, _INTEGER_PICKS), [made, select]
    elif made.name == "arith.ori":
        picked, chain = _float_pick(made, step, argument), [made, select]
        chain[:0] = [v.defining_op for v in made.operands]
    else:
        return None
    if picked is None or len(list(argument.uses)) != 2:
        return None
    if any(op.parent is not select.parent or len(list(op.results[0].uses)) != 1 for op in chain):
        return None
    return picked, chain, step


def _picked(compare: Operation, step, argument, picks: dict):
    """The extremum `select(compare, step, argument)` keeps, from `picks`; or None."""
    lhs, rhs = compare.operands
    if lhs is step and rhs is argument:
        return picks.get(compare.predicate_name)
    if lhs is argument and rhs is step:
        return picks.get(_SWAPPED.get(compare.predicate_name))
    return None


def _float_pick(either: Operation, step, argument):
    """The extremum of `(step <p> argument) | (step != step)` (`either`), or None."""
    compares = [v.defining_op for v in either.operands]
    if any(c is None or c.name != "arith.cmpf" for c in compares):
        return None
    picked = tests = None
    for compare in compares:
        lhs, rhs = compare.operands
        if lhs is step and rhs is step and compare.predicate_name in _NAN_TESTS:
            tests = compare
        else:
            picked = _picked(compare, step, argument, _FLOAT_PICKS)
    return picked if tests is not None else None


def _like(carried_type, type_):
    """`type_`'s element type in the carried reduction's shape (a scalar, or a tile's rows)."""
    element = getattr(type_, "element_type", type_)
    if isinstance(carried_type, RankedTensorType):
        return RankedTensorType(carried_type.shape, element, carried_type.encoding)
    return element


def _reduce_in_loop(loop: scf.ForOp, index: int, combine, reduce: Operation):
    """`loop` carrying the reduction of its block `index` instead (module doc); the rebuilt
    loop, whose old block is left to canonicalization."""
    chain, step = combine
    argument = loop.region_iter_args[index]
    initial = reduce.clone()
    initial.set_operand(0, loop.initArgs[index])
    loop.parent.insert_before(initial, loop)
    loop = scf.carrying_more(loop, [initial.results[0]])
    carried = loop.region_iter_args[-1]
    partial = reduce.clone()
    partial.set_operand(0, step)
    loop.body.insert_after(partial, chain[-1])
    made = {argument: carried, step: partial.results[0]}
    last = partial
    for op in chain:  # the combine again, on the carried value and the step's reduction
        copy = op.clone_as([made.get(v, v) for v in op.operands],
                           [_like(carried.type, r.type) for r in op.results])  # fmt: skip
        loop.body.insert_after(copy, last)
        last = copy
        made[op.results[0]] = copy.results[0]
    terminator = loop.body.terminator
    terminator.set_operands([*terminator.operands, made[chain[-1].results[0]]])
    reduce.results[0].replace_all_uses_with(loop.outs[-1])
    reduce.erase()
    return loop
