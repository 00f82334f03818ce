"""The `arith` dialect: constants and integer and float arithmetic (ArithOps.td), with folders.

    AddIOp(x, y)                  # the result type is x's, as MLIR infers it
    CmpIOp("slt", x, y)           # i1 (or an i1 tensor of x's shape)
    ConstantOp(IntegerAttr(1, i32))

Every op is Pure and Elementwise (MLIR's ElementwiseMappable); binary ops also have
SameOperandsAndResultType. Folders follow upstream MLIR: constants fold (arith/folding.py says
the rules, wrap-around and what is left to run time) and a few identities (`x + 0`, `x * 1`,
`x - x`, ...) fold to an operand. Integer ops are in arith/integers.py, float ops in
arith/floats.py, casts, comparisons and `select` in arith/casts.py; all are in this namespace.
"""

from __future__ import annotations

from ...ir import (
    ConstantLike,
    DenseElementsAttr,
    FloatAttr,
    IntegerAttr,
    Operation,
    Pure,
    VerificationError,
    attribute,
    irdl_op,
    register_constant_materializer,
    result,
)
from .attributes import (  # noqa: F401 (the dialect's attributes, in its namespace)
    CmpFPredicate,
    CmpIPredicate,
    FastMathFlagsAttr,
    IntegerOverflowFlagsAttr,
    RoundingMode,
)
from .casts import (  # noqa: F401 (the rest of the dialect, in one namespace)
    BitcastOp,
    CastOp,
    CmpFOp,
    CmpIOp,
    CompareOp,
    ExtFOp,
    ExtSIOp,
    ExtUIOp,
    FPToSIOp,
    FPToUIOp,
    IndexCastOp,
    IndexCastUIOp,
    SelectOp,
    SIToFPOp,
    TruncFOp,
    TruncIOp,
    UIToFPOp,
)
from .floats import (  # noqa: F401
    AddFOp,
    DivFOp,
    FloatBinaryOp,
    MaximumFOp,
    MaxNumFOp,
    MinimumFOp,
    MinNumFOp,
    MulFOp,
    NegFOp,
    RemFOp,
    SubFOp,
)
from .integers import (  # noqa: F401
    AddIOp,
    AndIOp,
    CeilDivSIOp,
    CeilDivUIOp,
    DivSIOp,
    DivUIOp,
    FloorDivSIOp,
    IntBinaryOp,
    IntBinaryOverflowOp,
    MaxSIOp,
    MaxUIOp,
    MinSIOp,
    MinUIOp,
    MulIOp,
    OrIOp,
    RemSIOp,
    RemUIOp,
    ShLIOp,
    ShRSIOp,
    ShRUIOp,
    SubIOp,
    XOrIOp,
)


@irdl_op
class ConstantOp(Operation):
    """`arith.constant 42 : i32`, `arith.constant dense<0.0> : tensor<4xf32>`: the result's
    type is the value's."""

    name = "arith.constant"
    traits = frozenset({Pure, ConstantLike})
    value = attribute()
    result = result()
    assembly_format = "attr-dict $value"
    type_inference = (("result", "value", lambda attr: attr.type),)

    def __init__(self, value, *, location=None, attributes=None, **fields):
        fields.setdefault("result", getattr(value, "type", None))
        super().__init__(value=value, location=location, attributes=attributes, **fields)

    def verify_(self) -> None:
        value = self.value
        if not isinstance(value, IntegerAttr | FloatAttr | DenseElementsAttr):
            raise VerificationError("value must be an integer, float, or elements attribute", self)
        if value.type is not self.result.type:
            raise VerificationError(
                "failed to verify that all of {value, result} have same type", self
            )

    def fold(self):
        return (self.value,)


def materialize_constant(value, type, location):
    """The dialects' constant materializer: an `arith.constant` of an integer, float or dense
    attribute of exactly `type`."""
    if isinstance(value, IntegerAttr | FloatAttr | DenseElementsAttr) and value.type is type:
        return ConstantOp(value, location=location)
    return None


register_constant_materializer("arith", materialize_constant)
