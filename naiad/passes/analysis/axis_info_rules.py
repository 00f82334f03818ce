"""Transfer rules of AxisInfo: from the facts about an op's operands, the facts about its result.

One rule per op family, following Triton's lib/Analysis/AxisInfo.cpp (3.x); each says in its
docstring the arithmetic fact it rests on. Shape and layout ops (tt.splat, tt.broadcast,
tt.expand_dims, tt.reshape, tt.trans) are in axis_info_shape_rules.py. An op without a rule
(tt.get_program_id, float arithmetic, tt.dot, ...) knows nothing of its result: the solver gives
it the pessimistic state, refined by its hints.
"""

from __future__ import annotations

from collections.abc import Callable

from ...dialects import arith, tt, ub
from ...dialects.base import bit_width
from ...ir import Operation, RankedTensorType, element_type
from .axis_info_constants import integer_width
from .axis_info_lattice import (
    K_MAX_DIVISOR,
    AxisInfo,
    divisibility_from_contiguity,
    gcd,
    join,
    mul_divisor,
    pow2_divisor,
    shape_of,
    uniform,
)

Rule = Callable[[Operation, list[AxisInfo]], "AxisInfo | None"]
RULES: dict[type, Rule] = {}


def rule(*op_classes: type) -> Callable[[Rule], Rule]:
    def register(fn: Rule) -> Rule:
        for cls in op_classes:
            RULES[cls] = fn
        return fn

    return register


def tensor_shape(op: Operation) -> tuple[int, ...] | None:
    """The shape of `op`'s result when it is a tensor (the "whole dimension" cases), else None."""
    t = op.results[0].type
    return tuple(t.shape) if isinstance(t, RankedTensorType) else None


def pointee_bytes(ptr_type) -> int:
    """Bytes per element behind a pointer (or tensor of pointers); at least 1 (i1 is a byte)."""
    return max(1, bit_width(element_type(ptr_type).pointee_type) // 8)


def is_tracked(t) -> bool:
    """Integer, index or pointer elements: the values whose axis facts the back ends use."""
    return isinstance(element_type(t), tt.PointerType) or integer_width(t) is not None


def _is(info: AxisInfo, value: int) -> bool:
    return info.constant is not None and info.constant == value


class BinaryRule:
    """A binary op, dimension by dimension: contiguity 1, divisibility 1 and the gcd of the
    constancies unless a subclass knows better (which is all `and`, `or`, `xor` get)."""

    def __call__(self, op: Operation, infos: list[AxisInfo]) -> AxisInfo:
        lhs, rhs = infos[0], infos[1]
        shape = tensor_shape(op)
        dims = range(lhs.rank)
        return AxisInfo(
            divisibility=tuple(self.divisibility(op, lhs, rhs, d, shape) for d in dims),
            contiguity=tuple(self.contiguity(op, lhs, rhs, d, shape) for d in dims),
            constancy=tuple(self.constancy(op, lhs, rhs, d, shape) for d in dims),
        )

    def contiguity(self, op, lhs: AxisInfo, rhs: AxisInfo, d: int, shape) -> int:
        return 1

    def divisibility(self, op, lhs: AxisInfo, rhs: AxisInfo, d: int, shape) -> int:
        return 1

    def constancy(self, op, lhs: AxisInfo, rhs: AxisInfo, d: int, shape) -> int:
        return gcd(lhs.constancy[d], rhs.constancy[d])


class AddSubRule(BinaryRule):
    """`x + y` (and `tt.addptr`, whose offset counts elements while the pointer's divisibility
    counts bytes) and `x - y`. A run of x plus a value constant over it is still a run; two runs
    added climb by 2, and a run minus a run is constant, not contiguous."""

    def contiguity(self, op, lhs, rhs, d, shape):
        if isinstance(op, arith.SubIOp):
            return gcd(lhs.contiguity[d], rhs.constancy[d])
        return max(
            gcd(lhs.constancy[d], rhs.contiguity[d]), gcd(lhs.contiguity[d], rhs.constancy[d])
        )

    def divisibility(self, op, lhs, rhs, d, shape):
        element = pointee_bytes(op.operands[0].type) if isinstance(op, tt.AddPtrOp) else 1
        lhs_div, rhs_div = lhs.divisibility[d], mul_divisor(rhs.divisibility[d], element)
        if lhs.contiguity[d] > 1 and rhs.contiguity[d] > 1:
            if isinstance(op, arith.SubIOp) and lhs.contiguity[d] == rhs.contiguity[d]:
                return gcd(lhs_div, rhs_div)  # base_x - base_y over the whole run
            return 2 if lhs_div % 2 == 0 and rhs_div % 2 == 0 else 1
        if lhs.contiguity[d] > 1 or rhs.contiguity[d] > 1:
            # A result run may start inside an operand's longer run, at an offset that is a
            # multiple of the result's run length.
            runs = mul_divisor(self.contiguity(op, lhs, rhs, d, shape), element)
            return gcd(lhs_div, rhs_div, runs)
        return gcd(lhs_div, rhs_div)


class MulRule(BinaryRule):
    """`x * y`: divisibilities multiply, but a run [2^n, 2^n + 1, ...] scaled by k has only the
    divisibility of k at every element; runs survive only a multiplication by 1."""

    def contiguity(self, op, lhs, rhs, d, shape):
        keep_lhs = lhs.contiguity[d] if _is(rhs, 1) else 1
        keep_rhs = rhs.contiguity[d] if _is(lhs, 1) else 1
        return max(keep_lhs, keep_rhs)

    def divisibility(self, op, lhs, rhs, d, shape):
        lhs_div = 1 if lhs.contiguity[d] > 1 and not _is(rhs, 1) else lhs.divisibility[d]
        rhs_div = 1 if rhs.contiguity[d] > 1 and not _is(lhs, 1) else rhs.divisibility[d]
        return mul_divisor(lhs_div, rhs_div)


def _whole_run(info: AxisInfo, d: int, shape) -> bool:
    return shape is not None and info.contiguity[d] == shape[d]


def _whole_constant(info: AxisInfo, d: int, shape) -> bool:
    return shape is not None and info.constancy[d] == shape[d]


class DivRule(BinaryRule):
    """`x / y` (signed or unsigned). A whole-dimension run divided by a constant is constant
    over the common power of two of the run's start and the divisor; dividing by a power of two
    shifts the divisibility of a non-run."""

    def contiguity(self, op, lhs, rhs, d, shape):
        return lhs.contiguity[d] if _is(rhs, 1) else 1

    def constancy(self, op, lhs, rhs, d, shape):
        constancy = super().constancy(op, lhs, rhs, d, shape)
        if _whole_run(lhs, d, shape) and _whole_constant(rhs, d, shape):
            runs = gcd(lhs.contiguity[d], lhs.divisibility[d], rhs.divisibility[d])
            constancy = max(constancy, runs)
        return constancy

    def divisibility(self, op, lhs, rhs, d, shape):
        if _is(lhs, 0) or _is(rhs, 1):
            return lhs.divisibility[d]
        if rhs.constant is not None and lhs.contiguity[d] == 1:
            divisor = rhs.constant
            if isinstance(op, arith.DivUIOp):
                divisor &= (1 << integer_width(op.operands[1].type)) - 1
            divisor = abs(divisor)
            if divisor and divisor & (divisor - 1) == 0:  # a power of two (x // 0 is all ones)
                shift = min(divisor.bit_length() - 1, 62)
                return max(1, lhs.divisibility[d] >> shift)
        return 1


class RemRule(BinaryRule):
    """`x % y`: a whole-dimension run modulo a constant keeps runs as long as the common power of
    two of the run's start and the modulus; the remainder keeps the common divisibility."""

    def contiguity(self, op, lhs, rhs, d, shape):
        if _whole_run(lhs, d, shape) and _whole_constant(rhs, d, shape):
            return gcd(lhs.contiguity[d], lhs.divisibility[d], rhs.divisibility[d])
        return 1

    def divisibility(self, op, lhs, rhs, d, shape):
        runs = self.contiguity(op, lhs, rhs, d, shape)
        divisibility = gcd(lhs.divisibility[d], rhs.divisibility[d])
        if lhs.contiguity[d] > runs or rhs.contiguity[d] > runs:
            divisibility = gcd(divisibility, runs)  # new runs start inside an operand's run
        return divisibility


def _shift_amount(op: Operation, rhs: AxisInfo) -> int | None:
    """The constant shift as an unsigned count; None when unknown. A count of the width or more
    is returned as is (the callers treat it as "nothing known")."""
    if rhs.constant is None:
        return None
    return rhs.constant & ((1 << integer_width(op.operands[1].type)) - 1)


class ShiftLeftRule(BinaryRule):
    """`x << k`: multiplies the divisibility by 2^k (a run, scaled, keeps none of its own)."""

    def contiguity(self, op, lhs, rhs, d, shape):
        return lhs.contiguity[d] if _is(rhs, 0) else 1

    def divisibility(self, op, lhs, rhs, d, shape):
        amount = _shift_amount(op, rhs)
        lhs_div = lhs.divisibility[d]
        if lhs.contiguity[d] > 1 and amount != 0:
            lhs_div = 1
        if amount is None:
            return lhs_div
        if amount >= integer_width(op.results[0].type):
            return 1
        return mul_divisor(lhs_div, 1 << min(amount, 62))


class ShiftRightRule(BinaryRule):
    """`x >> k` (arithmetic or logical): divides the divisibility by 2^k."""

    def contiguity(self, op, lhs, rhs, d, shape):
        return lhs.contiguity[d] if _is(rhs, 0) else 1

    def divisibility(self, op, lhs, rhs, d, shape):
        amount = _shift_amount(op, rhs)
        if amount is None or amount >= integer_width(op.results[0].type):
            return 1
        lhs_div = 1 if lhs.contiguity[d] > 1 and amount != 0 else lhs.divisibility[d]
        return max(1, lhs_div >> min(amount, 62))


rule(tt.AddPtrOp, arith.AddIOp, arith.SubIOp)(AddSubRule())
rule(arith.MulIOp)(MulRule())
rule(arith.DivSIOp, arith.DivUIOp)(DivRule())
rule(arith.RemSIOp, arith.RemUIOp)(RemRule())
rule(arith.AndIOp, arith.OrIOp, arith.XOrIOp)(BinaryRule())
rule(arith.ShLIOp)(ShiftLeftRule())
rule(arith.ShRSIOp, arith.ShRUIOp)(ShiftRightRule())


@rule(arith.MaxSIOp, arith.MaxUIOp, arith.MinSIOp, arith.MinUIOp)
def _max_min(op, infos):
    """Each element is one of the two operands' elements: what holds of both holds."""
    return join(infos[0], infos[1])


_GREATER_OR_LE = {"sgt", "ugt", "sle", "ule"}
_LESS_OR_GE = {"slt", "ult", "sge", "uge"}


@rule(arith.CmpIOp)
def _compare(op, infos):
    """`x < y` and kin, over tensors: constant where both are; a run compared with a constant
    over the dimension flips at most once per aligned stretch, so `offs < n` is constant over
    the common power of two of the run's start and n (what a masked vector access needs)."""
    shape = tensor_shape(op)
    if shape is None:
        return None
    lhs, rhs = infos
    predicate = op.predicate_name
    constancy = []
    for d in range(lhs.rank):
        runs = gcd(lhs.constancy[d], rhs.constancy[d])
        if predicate in _GREATER_OR_LE and _whole_constant(lhs, d, shape):
            runs = max(runs, gcd(rhs.contiguity[d], lhs.divisibility[d], rhs.divisibility[d]))
        elif predicate in _LESS_OR_GE and _whole_constant(rhs, d, shape):
            runs = max(runs, gcd(lhs.contiguity[d], lhs.divisibility[d], rhs.divisibility[d]))
        constancy.append(runs)
    return AxisInfo(
        divisibility=(1,) * lhs.rank, contiguity=(1,) * lhs.rank, constancy=tuple(constancy)
    )


@rule(arith.SelectOp)
def _select(op, infos):
    """`c ? x : y`: a known condition picks a side; a scalar one picks a whole side (a join);
    a tensor one keeps only runs over which it is constant."""
    condition, lhs, rhs = infos
    if condition.constant is not None:
        return rhs if condition.constant == 0 else lhs
    if not isinstance(op.operands[0].type, RankedTensorType):
        return join(lhs, rhs)
    contiguity, divisibility, constancy = [], [], []
    for d in range(lhs.rank):
        c = condition.constancy[d]
        constancy.append(gcd(lhs.constancy[d], rhs.constancy[d], c))
        contiguity.append(gcd(lhs.contiguity[d], rhs.contiguity[d], c))
        divisibility.append(gcd(divisibility_from_contiguity(lhs, rhs, d), contiguity[-1]))
    return AxisInfo(
        divisibility=tuple(divisibility), contiguity=tuple(contiguity), constancy=tuple(constancy)
    )


@rule(arith.ExtSIOp, arith.ExtUIOp, arith.TruncIOp)
def _integer_cast(op, infos):
    """Widening or narrowing keeps the runs and the low bits (an exact constant is recomputed
    by the constant evaluator, in the new width)."""
    return infos[0].replace(constant=None)


@rule(tt.BitcastOp)
def _bitcast(op, infos):
    """Same bits. A pointer bitcast to another element size keeps byte divisibility but not
    element runs: every former element starts a run, aligned to the old element size."""
    info = infos[0]
    src, dst = op.operands[0].type, op.results[0].type
    if not isinstance(element_type(src), tt.PointerType):
        return info
    src_bytes, dst_bytes = pointee_bytes(src), pointee_bytes(dst)
    if src_bytes == dst_bytes:
        return info
    divisibility = tuple(
        gcd(div, src_bytes) if run > 1 else div
        for div, run in zip(info.divisibility, info.contiguity)
    )
    return info.replace(divisibility=divisibility, contiguity=(1,) * info.rank)


@rule(tt.MakeRangeOp)
def _make_range(op, infos):
    """`[start, end)`: one run of the whole length, starting at `start`."""
    start, end = op.start.value, op.end.value
    return AxisInfo(divisibility=(pow2_divisor(start),), contiguity=(end - start,), constancy=(1,))


@rule(ub.PoisonOp)
def _poison(op, infos):
    """Never read: anything may be assumed, so it does not spoil a join."""
    return uniform(len(shape_of(op.results[0].type)), *(K_MAX_DIVISOR,) * 3)


@rule(tt.LoadOp)
def _load(op, infos):
    """Loaded data is unknown, but it is constant where both the address and the mask are."""
    ptr = infos[0]
    mask = infos[1] if op.mask is not None else None
    constancy = tuple(
        gcd(run, 0 if mask is None else mask.constancy[d]) for d, run in enumerate(ptr.constancy)
    )
    return AxisInfo(divisibility=(1,) * ptr.rank, contiguity=(1,) * ptr.rank, constancy=constancy)


@rule(arith.BitcastOp)
def _integer_bitcast(op, infos):
    """Between integers of one width a bitcast changes nothing (Triton's frontend emits
    `i32 to i32` ones for loop bounds, which only canonicalization removes)."""
    width = integer_width(op.results[0].type)
    same_width = width is not None and integer_width(op.operands[0].type) == width
    return infos[0] if same_width else None
