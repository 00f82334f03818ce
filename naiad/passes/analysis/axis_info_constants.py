"""Exact integer constants for AxisInfo: when every element of a result is one known integer,
its axis facts are the strongest there are (divisibility from its bits, constant over the
whole shape), so constants are evaluated before any rule, as Triton's ConstantEvaluator does.

The arithmetic is Naiad's own folding rules (`naiad.dialects.arith_fold`), so the analysis and
the canonicalizer agree on every value: wrap-around, C-style `/` and `%`, and no value where the
operation is undefined at run time (division by zero, `INT_MIN / -1`, shifts by the width or
more). A constant is kept signed, wrapped to its type's width (an `i1` true is -1).
"""

from __future__ import annotations

from ...dialects import arith
from ...dialects.arith import folding as arith_fold
from ...ir import DenseElementsAttr, IndexType, IntegerAttr, IntegerType, Operation, element_type
from .axis_info_lattice import AxisInfo


def integer_width(t) -> int | None:
    """The bit width of an integer (or index) scalar or tensor type; None for any other."""
    e = element_type(t)
    if isinstance(e, IntegerType):
        return e.width
    if isinstance(e, IndexType):
        return 64
    return None


def _attribute_value(attr) -> int | None:
    if isinstance(attr, IntegerAttr):
        return int(attr.value)
    if isinstance(attr, DenseElementsAttr) and attr.is_splat:
        value = attr.values[0]
        return int(value) if isinstance(value, int) else None
    return None


_CASTS = {arith.ExtSIOp, arith.ExtUIOp, arith.TruncIOp}
_BINARY = {
    arith.AddIOp: "addi",
    arith.SubIOp: "subi",
    arith.MulIOp: "muli",
    arith.DivSIOp: "divsi",
    arith.DivUIOp: "divui",
    arith.RemSIOp: "remsi",
    arith.RemUIOp: "remui",
    arith.AndIOp: "andi",
    arith.OrIOp: "ori",
    arith.XOrIOp: "xori",
    arith.ShLIOp: "shli",
    arith.ShRSIOp: "shrsi",
    arith.ShRUIOp: "shrui",
    arith.MaxSIOp: "maxsi",
    arith.MinSIOp: "minsi",
    arith.MaxUIOp: "maxui",
    arith.MinUIOp: "minui",
}


def evaluate_constant(op: Operation, infos: list[AxisInfo]) -> int | None:
    """The one integer every element of `op`'s single result holds, if the operands' known
    constants decide it; else None."""
    if len(op.results) != 1:
        return None
    width = integer_width(op.results[0].type)
    if width is None:
        return None
    value = _evaluate(op, [info.constant for info in infos], width)
    return None if value is None else arith_fold.to_signed(value, width)


def _evaluate(op: Operation, constants: list[int | None], width: int) -> int | None:
    kind = type(op)
    if kind is arith.ConstantOp:
        return _attribute_value(op.value)
    if kind in _CASTS:
        (value,) = constants
        if value is None:
            return None
        if kind is arith.ExtUIOp:
            return arith_fold.to_unsigned(value, integer_width(op.operands[0].type))
        return value
    if kind is arith.CmpIOp:
        lhs, rhs = constants
        if lhs is None or rhs is None:
            return None
        rule = arith_fold.cmpi_rule(op.predicate_name, integer_width(op.operands[0].type))
        return int(rule(lhs, rhs))
    if kind is arith.SelectOp:
        return _select(*constants)
    name = _BINARY.get(kind)
    return None if name is None else _binary(name, *constants, width)


def _select(condition, if_true, if_false) -> int | None:
    if condition is not None:
        return if_false if condition == 0 else if_true
    return if_true if if_true is not None and if_true == if_false else None


def _binary(name: str, lhs: int | None, rhs: int | None, width: int) -> int | None:
    # Exact whatever the other operand: x * 0 = 0, x % 1 = 0, x %s -1 = 0.
    if name == "muli" and 0 in (lhs, rhs):
        return 0
    remainder = name in ("remsi", "remui") and rhs is not None
    if remainder and (arith_fold.to_unsigned(rhs, width) == 1 or (name == "remsi" and rhs == -1)):
        return 0
    if lhs is None or rhs is None:
        return None
    folded = arith_fold.INT_RULES[name](lhs, rhs, width)
    # A rule says "undefined here, leave it to the target" with a non-integer marker.
    return folded if isinstance(folded, int) else None
