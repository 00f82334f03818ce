"""Which masks are *prefix boxes*: `mask[i] = ∧_d (i_d < limit_d) ∧ (scalar conditions)`, so that
a masked load copies a `[0, limit_0) × ... × [0, limit_r)` sub-block and a masked store writes one
(triton-shared's MaskAnalysis).

    arith.cmpi slt, %offs, %bound    with %offs structured along one dimension d with a constant
                                     stride s > 0 (`start + s·i_d`) and %bound uniform:
                                     i_d < ceil((bound − start) / s)
    (also sgt with the operands swapped, and sle / sge as < bound + 1)
    arith.cmpi on two uniform blocks a scalar condition
    arith.andi                       the conjunction of both masks' limits and conditions
    tt.splat %cond (i1)              a scalar condition
    tt.expand_dims / tt.broadcast    dimensions re-indexed
    dense<true> / dense<false>       no limit / an always-false condition

Any other mask (an `or`, a mask loaded from memory, `offs >= lo`, a comparison mixing two
dimensions) is not a box: the load or store then tests it element by element.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...dialects import arith, tt
from ...ir import DenseElementsAttr, RankedTensorType, Value
from .index_expr import IndexExpr
from .pointer_analysis import PointerAnalysis, Strided


@dataclass(frozen=True)
class Limit:
    """`i_d < ceil(bound / divisor)`."""

    bound: IndexExpr
    divisor: int = 1


@dataclass(frozen=True)
class Condition:
    """A scalar condition `lhs <predicate> rhs` on index expressions (predicate: 'slt' or
    'sle'), or, when `value` is set, that i1 scalar of the kernel itself."""

    predicate: str = ""
    lhs: IndexExpr | None = None
    rhs: IndexExpr | None = None
    value: Value | None = None


@dataclass(frozen=True)
class MaskState:
    """A prefix box of `shape`: per dimension, the limits that all hold; plus conditions that
    switch the whole block off when one is false."""

    shape: tuple[int, ...]
    limits: tuple[tuple[Limit, ...], ...]
    conditions: tuple[Condition, ...] = ()

    def __and__(self, other: MaskState) -> MaskState:
        limits = tuple(a + b for a, b in zip(self.limits, other.limits))
        return MaskState(self.shape, limits, self.conditions + other.conditions)

    @property
    def is_full(self) -> bool:
        """No limit and no condition: every element is on."""
        return not self.conditions and not any(self.limits)


_FALSE = Condition("slt", IndexExpr.constant(0), IndexExpr.constant(0))
_SWAPPED = {"sgt": "slt", "sge": "sle"}


def _shape(value: Value) -> tuple[int, ...]:
    t = value.type
    return tuple(t.shape) if isinstance(t, RankedTensorType) else ()


class MaskAnalysis:
    """Prefix-box states of boolean blocks, over the offsets of a `PointerAnalysis`."""

    def __init__(self, pointers: PointerAnalysis):
        self._pointers = pointers
        self._states: dict[Value, MaskState | None] = {}

    def mask(self, value: Value) -> MaskState | None:
        if value not in self._states:
            state = self._mask(value)
            self._states[value] = state
        return self._states[value]

    def _empty(self, shape) -> MaskState:
        return MaskState(tuple(shape), ((),) * len(shape))

    def _mask(self, value: Value) -> MaskState | None:
        shape = _shape(value)
        op = value.defining_op
        if op is None:
            return None
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, DenseElementsAttr):
            if not op.value.is_splat:
                return None
            on = bool(op.value.splat_value)
            state = self._empty(shape)
            return state if on else MaskState(state.shape, state.limits, (_FALSE,))
        if isinstance(op, tt.SplatOp):
            return MaskState(shape, ((),) * len(shape), (Condition(value=op.src),))
        if isinstance(op, arith.AndIOp):
            lhs, rhs = self.mask(op.lhs), self.mask(op.rhs)
            return None if lhs is None or rhs is None else lhs & rhs
        if isinstance(op, arith.CmpIOp):
            return self._compare(op, shape)
        if isinstance(op, tt.ExpandDimsOp):
            src = self.mask(op.src)
            if src is None:
                return None
            limits = list(src.limits)
            limits.insert(op.axis.value, ())
            return MaskState(shape, tuple(limits), src.conditions)
        if isinstance(op, tt.BroadcastOp):
            src = self.mask(op.src)
            return None if src is None else MaskState(shape, src.limits, src.conditions)
        return None

    def _compare(self, op, shape) -> MaskState | None:
        predicate = op.predicate_name
        lhs, rhs = op.lhs, op.rhs
        if predicate in _SWAPPED:
            predicate, lhs, rhs = _SWAPPED[predicate], rhs, lhs
        if predicate not in ("slt", "sle"):
            return None
        a, b = self._pointers.offsets(lhs), self._pointers.offsets(rhs)
        if a is None or b is None or not b.is_uniform:
            return None
        if a.is_uniform:
            condition = Condition(predicate, a.start, b.start)
            return MaskState(shape, ((),) * len(shape), (condition,))
        bound = b.start - a.start + (1 if predicate == "sle" else 0)
        return self._one_dimension(a, bound, shape)

    def _one_dimension(self, a: Strided, bound: IndexExpr, shape) -> MaskState | None:
        moving = [d for d, s in enumerate(a.strides) if s.constant_value != 0]
        if len(moving) != 1:
            return None
        d = moving[0]
        stride = a.strides[d].constant_value
        if stride is None or stride <= 0:
            return None
        limits = [()] * len(shape)
        limits[d] = (Limit(bound, stride),)
        return MaskState(tuple(shape), tuple(limits))
