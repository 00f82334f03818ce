"""The `ub` dialect (UBOps.td): `ub.poison`, a value of any type that is undefined. Triton's
code generator places it after a `return` inside a conditional, where no value can flow."""

from __future__ import annotations

from ..ir import (
    ConstantLike,
    DialectAttribute,
    Operation,
    Pure,
    irdl_op,
    opt_attribute,
    register_constant_materializer,
    result,
)


class PoisonAttr(DialectAttribute):
    """`#ub.poison`: the poison value, what `ub.poison` folds to."""

    __slots__ = ()
    dialect = "ub"
    mnemonic = "poison"

    def __new__(cls):
        return cls._intern()


@irdl_op
class PoisonOp(Operation):
    """`ub.poison : i32`. `value` (default `#ub.poison`) is printed only when it is another
    poison attribute."""

    name = "ub.poison"
    traits = frozenset({Pure, ConstantLike})
    value = opt_attribute(PoisonAttr)
    result = result()
    assembly_format = "attr-dict (`<` $value^ `>`)? `:` type($result)"

    def __init__(self, type, **fields):
        super().__init__(result=type, **fields)

    def fold(self):
        return (self.value or PoisonAttr(),)


def _materialize(value, type, location):
    return PoisonOp(type, location=location) if isinstance(value, PoisonAttr) else None


register_constant_materializer("ub", _materialize)
