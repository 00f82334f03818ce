"""Parsing of `affine_map<...>` bodies, as MLIR's AffineParser reads them.

    (d0, d1)[s0] -> (d0 + s0, d1 * 4, d0 floordiv 2, -d1)

Dimension and symbol names are whatever the lists bind (`(i, j) -> (j, i)` is the same map as
`(d0, d1) -> (d1, d0)`). `+ -` bind loosest, then `* floordiv ceildiv mod`, then unary `-`,
all left-associative. Expressions are built with the simplifying operators of affine.py, so
`(d0) -> (d0 + 0)` reads as `(d0) -> (d0)`, as in MLIR.
"""

from __future__ import annotations

from . import lexer as lx
from .affine import AffineExpr, AffineMap, constant, dim, symbol

_HIGH = ("*", "floordiv", "ceildiv", "mod")


def parse_affine_map(parser) -> AffineMap:
    """The map at the cursor of `parser` (an AttrParser), `<` and `>` excluded."""
    names: dict[str, AffineExpr] = {}
    num_dims = _parse_id_list(parser, "(", ")", names, dim)
    num_symbols = 0
    if parser.lex.peek("["):
        num_symbols = _parse_id_list(parser, "[", "]", names, symbol)
    parser.expect("->", "in the affine map")
    parser.expect("(", "to begin the affine map results")
    results = []
    if not parser.accept(")"):
        results.append(_parse_sum(parser, names))
        while parser.accept(","):
            results.append(_parse_sum(parser, names))
        parser.expect(")", "to end the affine map results")
    return AffineMap(num_dims, num_symbols, results)


def _parse_id_list(parser, open_: str, close: str, names: dict, make) -> int:
    parser.expect(open_)
    count = 0
    if parser.accept(close):
        return 0
    while True:
        pos = parser.lex.pos
        m = parser.lex.take(lx.BARE_ID)
        if m is None:
            raise parser.error(f"expected bare identifier, found {parser.lex.describe_next()}")
        if m.group(1) in names:
            raise parser.error(f"redefinition of identifier '{m.group(1)}'", pos)
        names[m.group(1)] = make(count)
        count += 1
        if not parser.accept(","):
            break
    parser.expect(close)
    return count


def _parse_sum(parser, names: dict) -> AffineExpr:
    expr = _parse_product(parser, names)
    lex = parser.lex
    while True:
        pos = lex.pos
        if lex.accept("+"):
            expr = _combine(parser, "+", expr, _parse_product(parser, names), pos)
        elif lex.peek("-") and not lex.peek("->") and lex.accept("-"):
            expr = _combine(parser, "-", expr, _parse_product(parser, names), pos)
        else:
            return expr


def _parse_product(parser, names: dict) -> AffineExpr:
    expr = _parse_operand(parser, names)
    while True:
        pos = parser.lex.pos
        op = "*" if parser.accept("*") else parser.parse_optional_keyword(*_HIGH[1:])
        if op is None:
            return expr
        expr = _combine(parser, op, expr, _parse_operand(parser, names), pos)


def _parse_operand(parser, names: dict) -> AffineExpr:
    lex = parser.lex
    pos = lex.pos
    if lex.accept("("):
        expr = _parse_sum(parser, names)
        parser.expect(")", "in the affine expression")
        return expr
    if lex.peek("-") and lex.accept("-"):
        return -_parse_operand(parser, names)
    m = lex.take(lx.INTEGER)
    if m is not None:
        return constant(lx.integer_value(m.group(1)))
    m = lex.take(lx.BARE_ID)
    if m is None:
        raise parser.error(f"expected affine expression, found {lex.describe_next()}")
    found = names.get(m.group(1))
    if found is None:
        raise parser.error(f"use of undeclared identifier '{m.group(1)}'", pos)
    return found


def _combine(parser, op: str, lhs: AffineExpr, rhs: AffineExpr, pos: int) -> AffineExpr:
    try:
        if op == "+":
            return lhs + rhs
        if op == "-":
            return lhs - rhs
        if op == "*":
            return lhs * rhs
        if op == "floordiv":
            return lhs.floordiv(rhs)
        if op == "ceildiv":
            return lhs.ceildiv(rhs)
        return lhs % rhs
    except ValueError as exc:
        raise parser.error(str(exc), pos) from None
