"""Comparisons, `arith.select` and scalar `arith.constant`.

`cmpf` reads narrow formats through their exact f32 value, so every predicate (ordered and
unordered) is LLVM's own. A constant is its attribute's storage bits; fp8e4b15 constants are the
exception: the attribute holds a value of MLIR's f8E4M3B11FNUZ (bias 11), which Naiad's fp8e4b15
(bias 15) takes as a number, so it is converted as a cast from f64 (LLVM folds it away).
"""

from __future__ import annotations

from llvmlite import ir

from ....ir import DenseElementsAttr, FloatAttr, IntegerAttr
from ....ir.float_format import float_to_bits
from .compute import arith_kind, widen
from .conversions import convert_float
from .registry import lowers, unsupported
from .types import F64, NATIVE_FLOATS, float_kind, llvm_type

_ICMP = {
    "eq": (False, "=="),
    "ne": (False, "!="),
    "slt": (True, "<"),
    "sle": (True, "<="),
    "sgt": (True, ">"),
    "sge": (True, ">="),
    "ult": (False, "<"),
    "ule": (False, "<="),
    "ugt": (False, ">"),
    "uge": (False, ">="),
}


@lowers("arith.cmpi")
def cmpi(b, op, operands, ctx):
    is_signed, relation = _ICMP[op.predicate_name]
    compare = b.icmp_signed if is_signed else b.icmp_unsigned
    return compare(relation, *operands)


_FCMP = {
    "oeq": (True, "=="),
    "ogt": (True, ">"),
    "oge": (True, ">="),
    "olt": (True, "<"),
    "ole": (True, "<="),
    "one": (True, "!="),
    "ord": (True, "ord"),
    "ueq": (False, "=="),
    "ugt": (False, ">"),
    "uge": (False, ">="),
    "ult": (False, "<"),
    "ule": (False, "<="),
    "une": (False, "!="),
    "uno": (False, "uno"),
}


@lowers("arith.cmpf")
def cmpf(b, op, operands, ctx):
    predicate = op.predicate_name
    if predicate in ("false", "true"):
        return ir.Constant(ir.IntType(1), int(predicate == "true"))
    kind = arith_kind(op, op.lhs.type)
    x, y = (widen(b, v, kind) for v in operands)
    ordered, relation = _FCMP[predicate]
    return (b.fcmp_ordered if ordered else b.fcmp_unordered)(relation, x, y)


@lowers("arith.select")
def select(b, op, operands, ctx):
    return b.select(*operands)


@lowers("arith.constant")
def constant(b, op, operands, ctx):
    attr = op.value
    if isinstance(attr, DenseElementsAttr):
        if not attr.is_splat:
            unsupported(op, "a non-splat dense constant has no scalar value")
        value = attr.splat_value
    elif isinstance(attr, IntegerAttr | FloatAttr):
        value = attr.value
    else:
        unsupported(op, f"the CPU back end has no scalar constant of {attr}")
    ty = llvm_type(op.result.type)
    kind = float_kind(op.result.type)
    if kind is None:
        return ir.Constant(ty, int(value))
    if kind == "f8E4M3B11FNUZ":
        return convert_float(b, ir.Constant(F64, float(value)), "f64", kind)
    bits = float_to_bits(kind, float(value))
    if kind in NATIVE_FLOATS:
        return ir.Constant(ir.IntType(64 if ty == F64 else 32), bits).bitcast(ty)
    return ir.Constant(ty, bits)
