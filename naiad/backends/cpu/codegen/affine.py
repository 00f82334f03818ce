"""Affine maps evaluated on loop indices, as llvmlite arithmetic (ints fold)."""

from __future__ import annotations

from llvmlite import ir

from ....ir.affine import AffineBinaryExpr, AffineConstantExpr, AffineDimExpr
from .loops import as_value
from .views import add, mul


def evaluate(b: ir.IRBuilder, expr, dims) -> object:
    """The index `expr` takes at loop indices `dims` (ints or i64 values)."""
    if isinstance(expr, AffineDimExpr):
        return dims[expr.position]
    if isinstance(expr, AffineConstantExpr):
        return expr.value
    if isinstance(expr, AffineBinaryExpr):
        lhs, rhs = evaluate(b, expr.lhs, dims), evaluate(b, expr.rhs, dims)
        if expr.kind == "add":
            return add(b, lhs, rhs)
        if expr.kind == "mul":
            return mul(b, lhs, rhs)
        if isinstance(lhs, int) and isinstance(rhs, int):
            return _fold(expr.kind, lhs, rhs)
        return _divide(b, expr.kind, as_value(lhs), as_value(rhs))
    raise TypeError(f"the CPU back end cannot evaluate the affine expression {expr}")


def _fold(kind: str, lhs: int, rhs: int) -> int:
    if kind == "mod":
        return lhs % rhs
    if kind == "floordiv":
        return lhs // rhs
    return -(-lhs // rhs)


def _divide(b: ir.IRBuilder, kind: str, lhs: ir.Value, rhs: ir.Value) -> ir.Value:
    """Affine mod / floordiv / ceildiv: the divisor is a positive constant by construction."""
    if kind == "mod":
        r = b.srem(lhs, rhs)
        return b.select(b.icmp_signed("<", r, ir.Constant(r.type, 0)), b.add(r, rhs), r)
    q = b.sdiv(lhs, rhs)
    r = b.srem(lhs, rhs)
    zero = ir.Constant(q.type, 0)
    if kind == "floordiv":
        return b.select(b.icmp_signed("<", r, zero), b.sub(q, ir.Constant(q.type, 1)), q)
    return b.select(b.icmp_signed(">", r, zero), b.add(q, ir.Constant(q.type, 1)), q)


def apply(b: ir.IRBuilder, affine_map, dims) -> list:
    """The indices of every result of `affine_map` at `dims`."""
    return [evaluate(b, e, dims) for e in affine_map.results]
