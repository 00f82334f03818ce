"""The AxisInfo lattice: per dimension, what is known of the integers (or byte addresses) a value
holds, and how two such facts join where control flow merges.

Three numbers per dimension d, all conservative lower bounds, as in Triton's
include/triton/Analysis/AxisInfo.h:

- contiguity[d]: the values split along d into runs of this length, each run counting up by 1
  (`[4, 5, 6, 7, 12, 13, 14, 15]` has contiguity 4);
- divisibility[d]: the largest power of two dividing the first element of every such run
  (the example above: 4). For pointers it counts **bytes**, since an address is what a vector
  access must align; `tt.addptr` scales its offset by the element size to keep it so;
- constancy[d]: the values split along d into runs of this length, each run one value.

A scalar is rank 1 (one element). `constant` is the value itself when every element is known to
be the same integer (signed, wrapped to the type's width), which the rules of `muli`, `divsi`,
`select`, ... use for their exact cases.

Triton's `kMaxDivisor` (2**62) is what zero divides into, and the "unknown yet" value the
optimistic start of a loop would use; the solver here starts from "no fact yet" instead (a
value absent from the table), which joins as the identity.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...dialects import tt
from ...ir import (
    BlockArgument,
    DenseArrayAttr,
    DenseElementsAttr,
    IntegerAttr,
    RankedTensorType,
    Type,
    Value,
)

# Triton's highestPowOf2Divisor<int64_t>(0): the divisibility of 0, and the cap of every other.
K_MAX_DIVISOR = 1 << 62

HINTS = ("tt.contiguity", "tt.divisibility", "tt.constancy")


@dataclass(frozen=True, slots=True)
class AxisInfo:
    """Divisibility, contiguity and constancy per dimension (tuples of one length, the rank),
    and the value when it is a known constant."""

    divisibility: tuple[int, ...]
    contiguity: tuple[int, ...]
    constancy: tuple[int, ...]
    constant: int | None = None

    @property
    def rank(self) -> int:
        return len(self.contiguity)

    def replace(self, **fields) -> AxisInfo:
        parts = {
            "divisibility": self.divisibility,
            "contiguity": self.contiguity,
            "constancy": self.constancy,
            "constant": self.constant,
        }
        parts.update(fields)
        return AxisInfo(**parts)

    def __str__(self) -> str:
        constant = "<none>" if self.constant is None else str(self.constant)
        return (
            f"contiguity = {list(self.contiguity)}, divisibility = {list(self.divisibility)}, "
            f"constancy = {list(self.constancy)}, constant_value = {constant}"
        )


def gcd(*values: int) -> int:
    """Greatest common divisor where 0 means "no constraint" (math.gcd's convention too)."""
    return math.gcd(*values)


def pow2_divisor(value: int) -> int:
    """The largest power of two dividing `value` (two's complement: -16 gives 16), capped at
    K_MAX_DIVISOR; 0 gives the cap."""
    if value == 0:
        return K_MAX_DIVISOR
    return min(value & -value, K_MAX_DIVISOR)


def mul_divisor(lhs: int, rhs: int) -> int:
    """lhs * rhs, saturating at K_MAX_DIVISOR (Triton's multiplyDivisor)."""
    return min(lhs * rhs, K_MAX_DIVISOR)


def shape_of(t: Type) -> tuple[int, ...]:
    """The shape the lattice sees: a tensor's, a block pointer's pointee's, else (1,)."""
    if isinstance(t, tt.PointerType) and isinstance(t.pointee_type, RankedTensorType):
        t = t.pointee_type
    if isinstance(t, RankedTensorType) and t.rank > 0:
        return tuple(t.shape)
    return (1,)


def uniform(rank: int, contiguity: int, divisibility: int, constancy: int) -> AxisInfo:
    return AxisInfo(
        divisibility=(divisibility,) * rank,
        contiguity=(contiguity,) * rank,
        constancy=(constancy,) * rank,
    )


def pessimistic(t: Type) -> AxisInfo:
    """Nothing known: runs of length 1, divisible by 1."""
    return uniform(len(shape_of(t)), 1, 1, 1)


def constant_state(t: Type, value: int) -> AxisInfo:
    """Every element equals `value`: constant over the whole shape (Triton's
    getConstantValueState)."""
    shape = shape_of(t)
    return AxisInfo(
        divisibility=(pow2_divisor(value),) * len(shape),
        contiguity=(1,) * len(shape),
        constancy=shape,
        constant=value,
    )


def divisibility_from_contiguity(lhs: AxisInfo, rhs: AxisInfo, d: int) -> int:
    """The divisibility of a value that is either `lhs` or `rhs` (a join, a select): when the
    runs differ in length, a run of the result can start inside a longer run of the other, whose
    elements are only divisible by what divides its start and the run lengths."""
    lc, rc = lhs.contiguity[d], rhs.contiguity[d]
    if lc == rc or K_MAX_DIVISOR in (lc, rc):
        return gcd(lhs.divisibility[d], rhs.divisibility[d])
    return gcd(lhs.divisibility[d], rhs.divisibility[d], lc, rc)


def join(lhs: AxisInfo | None, rhs: AxisInfo | None) -> AxisInfo | None:
    """What holds of a value that is `lhs` on some paths and `rhs` on others; None is "no fact
    yet" and joins as the identity."""
    if lhs is None:
        return rhs
    if rhs is None or lhs == rhs:
        return lhs
    dims = range(lhs.rank)
    return AxisInfo(
        divisibility=tuple(divisibility_from_contiguity(lhs, rhs, d) for d in dims),
        contiguity=tuple(gcd(a, b) for a, b in zip(lhs.contiguity, rhs.contiguity)),
        constancy=tuple(gcd(a, b) for a, b in zip(lhs.constancy, rhs.constancy)),
        constant=lhs.constant if lhs.constant == rhs.constant else None,
    )


def hint_values(attr, rank: int) -> tuple[int, ...] | None:
    """A `tt.divisibility`-style hint as one number per dimension: `16 : i32` or
    `dense<[1, 16]> : tensor<2xi32>`; one number stands for every dimension. None when the
    attribute says nothing usable (a length that is not the rank)."""
    if isinstance(attr, IntegerAttr):
        values = [int(attr.value)]
    elif isinstance(attr, DenseElementsAttr):
        values = [int(v) for v in attr.elements()]
    elif isinstance(attr, DenseArrayAttr):
        values = [int(v) for v in attr.values]
    else:
        return None
    # Triton reads the hint's bits as unsigned (getZExtValue); a hint is a positive count.
    values = [v if v > 0 else 1 for v in values]
    if len(values) == 1:
        return tuple(values) * rank
    return tuple(values) if len(values) == rank else None


def with_hints(info: AxisInfo, attributes, default: int | None = None) -> AxisInfo:
    """`info` with the dimensions named by hints (`tt.contiguity`, `tt.divisibility`,
    `tt.constancy` in `attributes`) replaced, as Triton's visitOperation does after its rule.
    With `default`, a field without a hint becomes `default` everywhere."""
    fields = {}
    for name, field in zip(HINTS, ("contiguity", "divisibility", "constancy")):
        hint = attributes.get(name) if attributes is not None else None
        values = None if hint is None else hint_values(hint, info.rank)
        if values is not None:
            fields[field] = values
        elif default is not None:
            fields[field] = (default,) * info.rank
    return info.replace(**fields) if fields else info


def func_arg_attributes(value: Value):
    """The argument attributes of `value` when it is an argument of a `tt.func`, else None."""
    if not isinstance(value, BlockArgument):
        return None
    block = value.owner
    func = block.parent_op()
    if not isinstance(func, tt.FuncOp) or func.entry_block is not block:
        return None
    attrs = func.arg_attrs
    return None if attrs is None else attrs[value.index]


def entry_state(value: Value) -> AxisInfo:
    """What is known of `value` from its own declaration alone (Triton's
    getPessimisticValueState): a function argument's `tt.*` attributes, an op's hints."""
    info = pessimistic(value.type)
    owner = value.defining_op
    if owner is not None:
        return with_hints(info, owner.attributes)
    return with_hints(info, func_arg_attributes(value))
