"""`cpu-versioned-checks`: a loop whose bounds checks follow its induction variable in a
straight line runs a copy without them wherever they pass at its first and last iteration.

    scf.for %i = %lb to %ub step %c1 {          %ok = (%lb >= %ub) or (the checks at %lb and at
      %p = arith.addi %base, %i                        %ub - 1 pass)
      (%p in [%low, %high], else report)   ==>  scf.if %ok {
      memref.load %m[%p]                          scf.for ... { (the body without those checks) }
    }                                           } else {
                                                  scf.for ... { (the body as written) }
                                                }

The CPU checks every access against its argument's extent (middle/linalg/bounds_checks.py). A
block access is checked once per block, but a loop of scalar accesses checks each element:
naiad.ops' scatter_add walks a row of the index and the source element by element, and two
of its three checks an element (with their compares and branches, a third of the loop's
instructions) follow the loop variable. Versioned, the loop checks only the data-dependent
target in its body (1024 x 1024 on one AMD EPYC core: see bench/RESULTS.md).

Legal where a check's condition is a conjunction of signed order comparisons (`sge`, `sgt`,
`sle`, `slt`), each between a value the loop does not change and a linear function of the
loop's 32-bit induction variable: widening casts of it, then additions, subtractions and
multiplications by constants in 64-bit or index arithmetic, changing by at most 2**29 an
iteration. Over the variable's range such a function moves less than 2**61, so from a value
that passed the check at the first iteration (an offset into a real array) it never wraps:
it is monotone, its values over the iterations lie between those of the first and the last,
and each comparison holding at both holds at every iteration. Only innermost loops of step 1
that compute on scalars are versioned: a loop over blocks checks once per block, and its copy
would double the code of a dot or a softmax for nothing. A loop in which some check fails
runs as written, so the report names the same element and program.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...dialects import arith, scf
from ...ir import IntegerAttr, Operation, Pure, register_pass
from ...ir.passes import Pass
from ...ir.rewriter import constant_value
from ...middle.linalg.bounds_checks import BOUNDS_ATTRIBUTE

_ORDERS = frozenset({"sge", "sgt", "sle", "slt"})
_CASTS = frozenset({"arith.extsi", "arith.index_cast"})
_LINEAR = frozenset({"arith.addi", "arith.subi", "arith.muli"})
# The most a checked offset may change an iteration: over the 2**32 values of a 32-bit
# variable it then moves less than 2**61, so from an offset inside an array it never wraps.
_STEEPEST = 2**29
_REPORT = "naiad_bounds"  # the runtime functions a failing check's report calls


@register_pass("cpu-versioned-checks")
@dataclass(frozen=True)
class VersionedChecks(Pass):
    """Run innermost scalar loops of step 1 without the bounds checks that hold at their first
    and last iteration (module doc)."""

    def run(self, module: Operation) -> None:
        loops = [op for op in module.walk() if isinstance(op, scf.ForOp) and _scalar_loop(op)]
        for loop in loops:
            step = constant_value(loop.step)
            if step is None or step.value != 1 or "unsignedCmp" in loop.attributes:
                continue
            checks = [op for op in loop.body if _hoistable_check(op, loop)]
            if checks:
                _version(loop, checks)


def _scalar_loop(loop: scf.ForOp) -> bool:
    """Whether `loop` is innermost and computes on scalars (no structured op on blocks)."""
    return not any(
        isinstance(op, scf.ForOp | scf.WhileOp) or op.name.startswith("linalg.")
        for op in loop.walk()
        if op is not loop
    )


def _hoistable_check(op: Operation, loop: scf.ForOp) -> bool:
    return (
        op.name == "cf.assert"
        and BOUNDS_ATTRIBUTE in op.attributes
        and _monotone_condition(op.operands[0], loop)
    )


def _monotone_condition(value, loop) -> bool:
    """Whether `value` is a conjunction of order comparisons of linear functions of the loop's
    variable with invariants (module doc)."""
    if _invariant(value, loop):
        return True
    made = value.defining_op
    if made is None or made.parent is not loop.body:
        return False
    if made.name == "arith.andi":
        return all(_monotone_condition(v, loop) for v in made.operands)
    if made.name != "arith.cmpi" or made.predicate_name not in _ORDERS:
        return False
    slopes = [_slope(v, loop) for v in made.operands]
    return None not in slopes and min(slopes) == 0 and max(slopes) <= _STEEPEST


def _slope(value, loop) -> int | None:
    """A bound on how much `value` changes from one iteration to the next, where it is a
    linear function of the loop's 32-bit variable computed without wrapping (module doc): 0
    for an invariant; None where it is no such function."""
    if _invariant(value, loop):
        return 0
    if value is loop.induction_var:
        return 1 if _width(value.type) == 32 else None
    made = value.defining_op
    if made is None or made.parent is not loop.body:
        return None
    if constant_value(value) is not None:
        return 0
    if made.name in _CASTS and _width(value.type) >= _width(made.operands[0].type):
        return _slope(made.operands[0], loop)
    if made.name not in _LINEAR or _width(value.type) != 64:
        return None
    slopes = [_slope(v, loop) for v in made.operands]
    if None in slopes:
        return None
    if made.name != "arith.muli" or max(slopes) == 0:
        return sum(slopes)
    factor = _magnitude(made.operands[slopes.index(0)]) if 0 in slopes else None
    return None if factor is None else max(slopes) * factor


def _magnitude(value) -> int | None:
    """|value| for a constant; None for anything else."""
    known = constant_value(value)
    return abs(known.value) if known is not None else None


def _width(type_) -> int:
    return getattr(type_, "width", None) or 64  # index: 64 bits


def _invariant(value, loop) -> bool:
    owner = value.defining_op
    if owner is None:  # a block argument: it belongs to the op holding its block
        owner = value.owner.parent_op()
    return owner is None or not loop.is_ancestor(owner)


def _version(loop: scf.ForOp, checks: list) -> None:
    """`loop` in the else branch of an `scf.if` on whether the checks hold at both of its ends,
    a copy without them in the then branch (module doc)."""
    one = _before(loop, arith.ConstantOp(IntegerAttr(1, loop.upperBound.type)))
    last = _before(loop, arith.SubIOp(loop.upperBound, one))
    holds = None
    for check in checks:
        for end in (loop.lowerBound, last):
            at_end = _evaluated(check.operands[0], loop, end)
            holds = at_end if holds is None else _before(loop, arith.AndIOp(holds, at_end))
    idle = _before(loop, arith.CmpIOp("sge", loop.lowerBound, loop.upperBound))
    branch = scf.IfOp(_before(loop, arith.OrIOp(idle, holds)), [r.type for r in loop.outs],
                      with_else=True, location=loop.location)  # fmt: skip
    loop.parent.insert_before(branch, loop)
    positions = [i for i, op in enumerate(loop.body) if op in checks]
    clean = loop.clone()
    for old, new in zip(loop.outs, branch.outs, strict=True):
        old.replace_all_uses_with(new)
    branch.then_block.append(clean)
    branch.then_block.append(scf.YieldOp(list(clean.outs)))
    loop.detach()
    branch.else_block.append(loop)
    branch.else_block.append(scf.YieldOp(list(loop.outs)))
    body = list(clean.body)
    for position in positions:
        _drop_check(body[position])


def _drop_check(check: Operation) -> None:
    """Erase `check` (a `cf.assert`) and the branches that report its failure."""
    condition = check.operands[0]
    check.erase()
    for user, _ in list(condition.uses):
        if user.name != "arith.xori" or user.parent is None:
            continue
        for branch, _ in list(user.results[0].uses):
            if isinstance(branch, scf.IfOp) and _only_reports(branch):
                branch.erase()


def _only_reports(branch: scf.IfOp) -> bool:
    """Whether `branch` does nothing but compute and call a failing check's report."""
    if branch.outs or branch.else_block is not None:
        return False
    for op in branch.then_block:
        if op.name == "func.call" and _REPORT in str(op.attributes.get("callee")):
            continue
        if op.regions or not (Pure in op.traits or op.name == "scf.yield"):
            return False
    return True


def _before(loop: Operation, op: Operation):
    loop.parent.insert_before(op, loop)
    return op.results[0]


def _evaluated(value, loop: scf.ForOp, at):
    """`value` made again before `loop` with its variable replaced by `at`."""
    if value is loop.induction_var:
        return at
    if _invariant(value, loop):
        return value
    made = value.defining_op
    operands = [_evaluated(v, loop, at) for v in made.operands]
    return _before(loop, made.clone_as(operands, [r.type for r in made.results]))
