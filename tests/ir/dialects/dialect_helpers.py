"""Values to build dialect ops from in tests: block arguments of given types, constants, and
the verifier's message of an op."""

from __future__ import annotations

import pytest

from naiad.dialects import arith
from naiad.ir import (
    DenseElementsAttr,
    FloatAttr,
    FloatType,
    IntegerAttr,
    RankedTensorType,
    VerificationError,
    verify,
)


def args(*types):
    """Fresh values of `types`: the arguments of a function of their own, so that ops
    verified on their own see them as defined above (the function stays alive through its
    block, which the values point to)."""
    from naiad.dialects import tt
    from naiad.ir import FunctionType

    return tt.FuncOp("values", FunctionType(types, [])).arguments


def arg(type):
    return args(type)[0]


def const(value, type):
    """An `arith.constant` of `value` (a scalar, or a splat/list for a tensor type)."""
    if isinstance(type, RankedTensorType):
        attr = DenseElementsAttr(type, value)
    elif isinstance(type, FloatType):
        attr = FloatAttr(value, type)
    else:
        attr = IntegerAttr(value, type)
    return arith.ConstantOp(attr).result


def tensor(shape, element, encoding=None):
    return RankedTensorType(shape, element, encoding)


def folded(op):
    """The single folded attribute or value of `op`, or None."""
    result = op.fold()
    return None if result is None else result[0]


def folded_value(op):
    """The Python value of a scalar fold, or the element list of a tensor fold."""
    attr = folded(op)
    if attr is None:
        return None
    if isinstance(attr, DenseElementsAttr):
        return list(attr.elements())
    return attr.value


def fails(op, message: str) -> None:
    """`verify(op)` raises, with `message` in the error."""
    with pytest.raises(VerificationError) as info:
        verify(op)
    assert message in str(info.value), str(info.value)
