"""Which masks are *boxes*: `mask[i] = ∧_d (low_d <= i_d < limit_d) ∧ (scalar conditions)`, so
that a masked load copies a `[low_0, limit_0) × ... × [low_r, limit_r)` sub-block and a masked
store writes one (triton-shared's MaskAnalysis, with lower bounds: the masks of a block pointer's
or a tensor descriptor's boundary check, `0 <= offs < n`, are boxes too).

    arith.cmpi slt, %offs, %bound    with %offs structured along one dimension d with a constant
                                     stride s > 0 (`start + s·i_d`) and %bound uniform:
                                     i_d < ceil((bound − start) / s)
    arith.cmpi slt, %bound, %offs    the same, a lower limit: i_d >= ceil((bound − start + 1) / s)
    (also sgt / sge with the operands swapped, and sle as < bound + 1)
    arith.cmpi on two uniform blocks a scalar condition
    arith.andi                       the conjunction of both masks' limits and conditions
    tt.splat %cond (i1)              a scalar condition
    tt.expand_dims / tt.broadcast    dimensions re-indexed
    dense<true> / dense<false>       no limit / an always-false condition

Any other mask (an `or`, a mask loaded from memory, a comparison mixing two dimensions) is not a
box: the load or store then tests it element by element.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...dialects import arith, tt
from ...ir import DenseElementsAttr, RankedTensorType, Value
from .index_expr import IndexExpr
from .pointer_analysis import PointerAnalysis
from .strided import Strided


@dataclass(frozen=True)
class Limit:
    """`i_d < ceil(bound / divisor)` (an upper limit) or `i_d >= ceil(bound / divisor)` (a
    lower one)."""

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
    """A box of `shape`: per dimension, the upper `limits` and the `lows` that all hold; plus
    conditions that switch the whole block off when one is false."""

    shape: tuple[int, ...]
    limits: tuple[tuple[Limit, ...], ...]
    lows: tuple[tuple[Limit, ...], ...]
    conditions: tuple[Condition, ...] = ()

    def __and__(self, other: MaskState) -> MaskState:
        limits = tuple(a + b for a, b in zip(self.limits, other.limits))
        lows = tuple(a + b for a, b in zip(self.lows, other.lows))
        return MaskState(self.shape, limits, lows, self.conditions + other.conditions)

    @property
    def is_full(self) -> bool:
        """No limit and no condition: every element is on."""
        return not self.conditions and not any(self.limits) and not any(self.lows)

    def reshaped(self, shape, insert: int | None = None) -> MaskState:
        """The same box over `shape`, with an unlimited dimension inserted at `insert`."""
        limits, lows = list(self.limits), list(self.lows)
        if insert is not None:
            limits.insert(insert, ())
            lows.insert(insert, ())
        return MaskState(tuple(shape), tuple(limits), tuple(lows), self.conditions)


_FALSE = Condition("slt", IndexExpr.constant(0), IndexExpr.constant(0))
_SWAPPED = {"sgt": "slt", "sge": "sle"}


def _shape(value: Value) -> tuple[int, ...]:
    t = value.type
    return tuple(t.shape) if isinstance(t, RankedTensorType) else ()


def _unlimited(shape) -> MaskState:
    return MaskState(tuple(shape), ((),) * len(shape), ((),) * len(shape))


class MaskAnalysis:
    """Box states of boolean blocks, over the offsets of a `PointerAnalysis`."""

    def __init__(self, pointers: PointerAnalysis):
        self._pointers = pointers
        self._states: dict[Value, MaskState | None] = {}

    def mask(self, value: Value) -> MaskState | None:
        if value not in self._states:
            state = self._mask(value)
            self._states[value] = state
        return self._states[value]

    def _mask(self, value: Value) -> MaskState | None:
        shape = _shape(value)
        op = value.defining_op
        if op is None:
            return None
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, DenseElementsAttr):
            if not op.value.is_splat:
                return None
            state = _unlimited(shape)
            return state if bool(op.value.splat_value) else state & _condition(shape, _FALSE)
        if isinstance(op, tt.SplatOp):
            return _condition(shape, Condition(value=op.src))
        if isinstance(op, arith.AndIOp):
            lhs, rhs = self.mask(op.lhs), self.mask(op.rhs)
            return None if lhs is None or rhs is None else lhs & rhs
        if isinstance(op, arith.CmpIOp):
            return self._compare(op, shape)
        if isinstance(op, tt.ExpandDimsOp | tt.BroadcastOp):
            src = self.mask(op.src)
            if src is None:
                return None
            axis = op.axis.value if isinstance(op, tt.ExpandDimsOp) else None
            return src.reshaped(shape, axis)
        return None

    def _compare(self, op, shape) -> MaskState | None:
        predicate = op.predicate_name
        lhs, rhs = op.lhs, op.rhs
        if predicate in _SWAPPED:
            predicate, lhs, rhs = _SWAPPED[predicate], rhs, lhs
        if predicate not in ("slt", "sle"):
            return None
        a, b = self._pointers.offsets(lhs), self._pointers.offsets(rhs)
        if a is None or b is None or not a.is_affine or not b.is_affine:
            return None
        strict = 1 if predicate == "slt" else 0
        if a.is_uniform and b.is_uniform:
            return _condition(shape, Condition(predicate, a.start, b.start))
        if b.is_uniform:  # start + s·i < b
            return _one_dimension(a, b.start - a.start + (1 - strict), shape, upper=True)
        if a.is_uniform:  # a < start + s·i
            return _one_dimension(b, a.start - b.start + strict, shape, upper=False)
        return None


def _condition(shape, condition: Condition) -> MaskState:
    none = ((),) * len(shape)
    return MaskState(tuple(shape), none, none, (condition,))


def _one_dimension(a: Strided, bound: IndexExpr, shape, upper: bool) -> MaskState | None:
    """`i_d < ceil(bound / s)` (upper) or `i_d >= ceil(bound / s)` for the one dimension d
    along which `a` moves, with a constant stride s > 0."""
    moving = [d for d, s in enumerate(a.strides) if s.constant_value != 0]
    if len(moving) != 1:
        return None
    d = moving[0]
    stride = a.strides[d].constant_value
    if stride is None or stride <= 0:
        return None
    limited = [()] * len(shape)
    limited[d] = (Limit(bound, stride),)
    none = ((),) * len(shape)
    if upper:
        return MaskState(tuple(shape), tuple(limited), none)
    return MaskState(tuple(shape), none, tuple(limited))
