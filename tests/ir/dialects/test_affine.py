"""Affine expressions and maps: MLIR's simplifications and spelling, the helpers the middle
layer builds maps with, evaluation (checked against plain integer arithmetic and against xDSL's
reading of the printed text), and the parser's errors."""

import random

import pytest

from naiad.ir import ArrayAttr
from naiad.ir.affine import (
    AffineBinaryExpr,
    AffineConstantExpr,
    AffineMap,
    AffineMapAttr,
    constant,
    dim,
    symbol,
)
from naiad.ir.lexer import ParseError
from naiad.ir.parser import parse_attribute

# (text read, text MLIR prints): each pair is a rule of MLIR's AffineExpr operators or of
# AsmPrinter's printAffineExprInternal.
CANONICAL = [
    ("(d0, d1)[s0] -> (d0, d1 * 2 + s0)", "(d0, d1)[s0] -> (d0, d1 * 2 + s0)"),
    ("(i, j)[n] -> (j + n, i)", "(d0, d1)[s0] -> (d1 + s0, d0)"),
    ("(d0) -> (d0 + 0, d0 * 1, d0 * 0)", "(d0) -> (d0, d0, 0)"),
    ("(d0) -> (2 + d0)", "(d0) -> (d0 + 2)"),
    ("(d0, d1) -> ((d0 + 2) + d1)", "(d0, d1) -> (d0 + d1 + 2)"),
    ("(d0) -> ((d0 + 2) + 3)", "(d0) -> (d0 + 5)"),
    ("(d0) -> (d0 * 2 + d0 * 3)", "(d0) -> (d0 * 5)"),
    ("(d0) -> ((d0 * 2) * 3)", "(d0) -> (d0 * 6)"),
    ("(d0, d1) -> (d0 - d1)", "(d0, d1) -> (d0 - d1)"),
    ("(d0, d1) -> (d0 - d1 * 2)", "(d0, d1) -> (d0 - d1 * 2)"),
    ("(d0, d1) -> (d0 - (d1 + 2))", "(d0, d1) -> (d0 - (d1 + 2))"),
    ("(d0) -> (d0 - 3, -d0, 3 - d0)", "(d0) -> (d0 - 3, -d0, -d0 + 3)"),
    ("(d0, d1) -> (d0 * -2 + d1)", "(d0, d1) -> (d0 * -2 + d1)"),
    ("(d0) -> ((d0 * 128) floordiv 64, (d0 * 64) mod 32)", "(d0) -> (d0 * 2, 0)"),
    ("(d0) -> ((d0 * 128) ceildiv 64, d0 ceildiv 1, d0 floordiv 1)", "(d0) -> (d0 * 2, d0, d0)"),
    ("(d0) -> (d0 - (d0 floordiv 4) * 4)", "(d0) -> (d0 mod 4)"),
    ("(d0) -> ((d0 mod 8) mod 4, (d0 * 4 + 1) mod 4)", "(d0) -> (d0 mod 4, 1)"),
    ("(d0, d1) -> ((d0 + d1) * 4 mod 8)", "(d0, d1) -> (((d0 + d1) * 4) mod 8)"),
    ("() -> (7 floordiv 2, -7 floordiv 2, 7 ceildiv 2, -7 mod 3)", "() -> (3, -4, 4, 2)"),
    ("(d0)[s0] -> (d0 floordiv s0, s0 * d0)", "(d0)[s0] -> (d0 floordiv s0, d0 * s0)"),
    ("()[s0, s1] -> (s0 * s1)", "()[s0, s1] -> (s0 * s1)"),
    ("(d0, d1) -> ()", "(d0, d1) -> ()"),
]


@pytest.mark.parametrize(("text", "expected"), CANONICAL)
def test_maps_read_and_print_as_mlir_holds_them(text, expected):
    attr = parse_attribute(f"affine_map<{text}>")
    assert str(attr) == f"affine_map<{expected}>"
    assert parse_attribute(str(attr)) is attr


def test_maps_are_interned_and_built_with_operators():
    d0, d1, s0 = dim(0), dim(1), symbol(0)
    built = AffineMap(2, 1, [d0, d1 * 2 + s0])
    assert built is parse_attribute("affine_map<(d0, d1)[s0] -> (d0, d1 * 2 + s0)>").value
    assert AffineMapAttr(built) is AffineMapAttr(AffineMap(2, 1, [d0, 2 * d1 + s0]))
    assert 1 - d0 is -d0 + 1
    assert (d0 % 4).kind == "mod" and (d0 // 4).kind == "floordiv"
    assert d0.ceildiv(4).kind == "ceildiv"
    assert isinstance(constant(3) + 4, AffineConstantExpr)
    assert (
        str(ArrayAttr([AffineMapAttr(built)])) == "[affine_map<(d0, d1)[s0] -> (d0, d1 * 2 + s0)>]"
    )


def test_helpers():
    assert str(AffineMap.identity(2)) == "(d0, d1) -> (d0, d1)"
    assert str(AffineMap.identity(0)) == "() -> ()"
    assert str(AffineMap.projection(3, [0, 2])) == "(d0, d1, d2) -> (d0, d2)"
    assert str(AffineMap.permutation([1, 0])) == "(d0, d1) -> (d1, d0)"
    assert str(AffineMap.broadcast((4, 1), (4, 8))) == "(d0, d1) -> (d0, 0)"
    assert str(AffineMap.broadcast((8,), (4, 8))) == "(d0, d1) -> (d1)"
    assert str(AffineMap.broadcast((1, 1), (1, 8))) == "(d0, d1) -> (d0, 0)"
    assert str(AffineMap.identity(3).drop_results([1])) == "(d0, d1, d2) -> (d0, d2)"
    assert AffineMap.identity(2).is_identity()
    assert not AffineMap.permutation([1, 0]).is_identity()
    assert AffineMap.projection(3, [2, 0]).is_projected_permutation()
    assert not AffineMap.broadcast((4, 1), (4, 8)).is_projected_permutation()
    with pytest.raises(ValueError, match="cannot broadcast"):
        AffineMap.broadcast((3, 8), (4, 8))
    with pytest.raises(ValueError, match="not a permutation"):
        AffineMap.permutation([0, 0])
    with pytest.raises(ValueError, match="d1 in a map of 1 dims"):
        AffineMap(1, 0, [dim(1)])
    with pytest.raises(ValueError, match="s0 in a map of 0 symbols"):
        AffineMap(1, 0, [symbol(0)])


def test_evaluating_maps_gives_loop_indices():
    rng = random.Random(7)
    for _ in range(20):
        i, j = rng.randint(1, 50), rng.randint(1, 50)
        assert AffineMap.broadcast((4, 1), (4, 8)).evaluate((i, j)) == (i, 0)
        assert AffineMap.permutation([1, 0]).evaluate((i, j)) == (j, i)
        s = rng.randint(1, 9)
        m = parse_attribute("affine_map<(d0, d1)[s0] -> (d0 * 4 + d1 - s0)>").value
        assert m.evaluate((i, j), (s,)) == (i * 4 + j - s,)
    with pytest.raises(ValueError, match="takes 2 dims and 0 symbols"):
        AffineMap.identity(2).evaluate((1,))


_OPERATORS = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "floordiv": lambda a, b: a // b,
    "ceildiv": lambda a, b: -(-a // b),
    "mod": lambda a, b: a % b,
}


def _random_expression(rng, depth):
    """(text, reference function of dims) of a random affine expression of d0, d1, d2 whose
    divisors and one multiplicand are constants."""
    if depth == 0 or rng.random() < 0.25:
        if rng.random() < 0.5:
            k = rng.randrange(3)
            return f"d{k}", lambda dims, k=k: dims[k]
        c = rng.choice([n for n in range(-9, 10) if n])
        return f"({c})", lambda dims, c=c: c
    op = rng.choice(list(_OPERATORS))
    lhs, f = _random_expression(rng, depth - 1)
    if op in ("+", "-"):
        rhs, g = _random_expression(rng, depth - 1)
    else:
        c = rng.randint(1, 9) if op != "*" else rng.choice([n for n in range(-5, 6) if n])
        rhs, g = f"({c})", lambda dims, c=c: c
    fn = _OPERATORS[op]
    return f"({lhs} {op} {rhs})", lambda dims: fn(f(dims), g(dims))


def test_simplification_keeps_the_value_of_random_expressions():
    """Whatever the simplifying operators rewrite, the value at every point stays that of
    the expression as written, and that of the printed form read back (as in MLIR, a sum
    printed to the right of `+` loses its parentheses, so it reads back associated to the
    left: an equal map, not always the same tree)."""
    rng = random.Random(2024)
    for _ in range(300):
        text, reference = _random_expression(rng, 4)
        attr = parse_attribute(f"affine_map<(d0, d1, d2) -> ({text})>")
        again = parse_attribute(str(attr))
        for _ in range(5):
            dims = [rng.choice([n for n in range(-40, 41) if n]) for _ in range(3)]
            expected = (reference(dims),)
            assert attr.value.evaluate(dims) == expected, (text, str(attr), dims)
            assert again.value.evaluate(dims) == expected, (text, str(again), dims)


def test_xdsl_reads_the_printed_maps_with_the_same_values():
    pytest.importorskip("xdsl")
    from xdsl.context import Context
    from xdsl.dialects.builtin import Builtin
    from xdsl.parser import Parser

    context = Context()
    context.load_dialect(Builtin)
    rng = random.Random(11)
    texts = [t for _, t in CANONICAL if "s0" not in t]
    texts += [_random_expression(rng, 3)[0] for _ in range(60)]
    for text in texts:
        body = text if "->" in text else f"(d0, d1, d2) -> ({text})"
        ours = parse_attribute(f"affine_map<{body}>")
        theirs = Parser(context, str(ours)).parse_attribute()
        dims = [rng.randint(1, 30) for _ in range(ours.value.num_dims)]
        assert theirs.data.eval(dims, []) == ours.value.evaluate(dims), str(ours)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("(d0, d1) -> (d0 * d1)", "at least one of the multiply operands has to be either"),
        ("(d0, d1) -> (d0 floordiv d1)", "right operand of floordiv has to be either a constant"),
        ("(d0, d1) -> (d0 mod (d1 + 1))", "right operand of mod has to be either a constant"),
        ("(d0) -> (d1)", "use of undeclared identifier 'd1'"),
        ("(d0, d0) -> (d0)", "redefinition of identifier 'd0'"),
        ("(d0) (d0)", "expected '->'"),
        ("(d0) -> (d0 +)", "expected affine expression"),
    ],
)
def test_parse_errors(text, message):
    with pytest.raises(ParseError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_attribute(f"affine_map<{text}>")


def test_expressions_evaluate_division_as_mlir():
    d0 = dim(0)
    for value in (-9, -8, -1, 1, 7, 8):
        assert (d0 // 4).evaluate([value]) == value // 4
        assert d0.ceildiv(4).evaluate([value]) == -(-value // 4)
        assert (d0 % 4).evaluate([value]) == value % 4
    zero = AffineBinaryExpr("mod", d0, symbol(0))
    with pytest.raises(ZeroDivisionError):
        zero.evaluate([3], [0])
