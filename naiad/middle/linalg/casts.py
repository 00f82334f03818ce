"""Integer casts in offsets and masks: when the pointer analysis may look through one.

The analysis computes offsets exactly, over leaves the conversion reads *signed* (a leaf is
sign-extended to `index`, emit.to_index). A cast is an identity of those exact values only on
part of their range, so it is looked through only where the range it can have is known to be
that part:

    arith.extsi, index_cast to index        always (a signed value is kept by sign extension)
    arith.extui, index_castui to index      when the value is never negative: a bool (i1 true
                                            reads -1 signed) or `v.to(tl.uint8)` (-1 becomes
                                            255) are not
    arith.trunci, index_cast(ui) from index when the value fits the narrower type's signed range:
                                            `v.to(tl.int8)` of 260 is 4

Otherwise a scalar cast of a constant is folded exactly, and any other scalar cast is a leaf of
its own (its converted value is the kernel's, read signed as every leaf is: exact, since a zero
extension's result is never negative at its wider width); a cast of a block is not structured,
and its loads, stores and masks go element by element.

The same holds for arithmetic narrower than 32 bits, which wraps in the kernel far more readily
than the 32- and 64-bit offsets index_expr.py assumes do not overflow: an `addi`, `subi` or
`muli` of i1, i8 or i16 is kept exact only where its range fits its type (`fits`).

Ranges are interval arithmetic over an `IndexExpr`, each leaf bounded by what it is: a program id
by `[0, 2^31)`, a zero extension from w bits by `[0, 2^w)`, any other integer of w bits by its
signed range; a pointer offset or an `index` is unbounded.
"""

from __future__ import annotations

from ...dialects import arith, tt
from ...dialects.base import bit_width
from ...ir import IntegerType, Value, element_type
from .index_expr import IndexExpr
from .strided import Strided

Range = tuple[int, int]

INTEGER_CASTS = (
    arith.ExtSIOp,
    arith.ExtUIOp,
    arith.TruncIOp,
    arith.IndexCastOp,
    arith.IndexCastUIOp,
)


def signed(value: int, width: int) -> int:
    """`value` wrapped to a `width`-bit two's complement integer, read signed."""
    value &= (1 << width) - 1
    return value - (1 << width) if value >> (width - 1) else value


def _signed_range(width: int) -> Range:
    half = 1 << (width - 1)
    return -half, half - 1


def _widths(op) -> tuple[int, int]:
    return tuple(bit_width(element_type(v.type)) for v in (op.operands[0], op.results[0]))


def _kind(op) -> str:
    """'sext', 'zext' or 'trunc': what the cast does to the bits."""
    source, target = _widths(op)
    if target < source:
        return "trunc"
    if target == source:  # an index_cast between i64 and index
        return "sext"
    return "zext" if isinstance(op, arith.ExtUIOp | arith.IndexCastUIOp) else "sext"


def keeps(op, known: Range | None) -> bool:
    """Whether cast `op` leaves every value of `known` (None: an unknown range) unchanged."""
    kind = _kind(op)
    source, target = _widths(op)
    if kind == "sext":
        return True
    if known is None:
        return False
    if kind == "zext":
        return _within(known, (0, _signed_range(source)[1]))
    return _within(known, _signed_range(target))


def fold(op, value: int) -> int:
    """Cast `op` applied to the constant `value` (first wrapped to the operand's width, as the
    kernel computes it)."""
    source, target = _widths(op)
    value = signed(value, source)
    kind = _kind(op)
    if kind == "zext":
        return value & ((1 << source) - 1)
    if kind == "trunc":
        return signed(value, target)
    return value


def _within(inner: Range, outer: Range) -> bool:
    return outer[0] <= inner[0] and inner[1] <= outer[1]


# -- ranges -----------------------------------------------------------------------------------


def leaf_range(leaf: Value) -> Range | None:
    """The values a leaf of an offset expression can have, or None when unbounded."""
    op = leaf.defining_op
    if isinstance(op, tt.GetProgramIdOp | tt.GetNumProgramsOp):
        return 0, (1 << 31) - 1
    if isinstance(op, arith.ExtUIOp | arith.IndexCastUIOp) and _kind(op) == "zext":
        return 0, (1 << _widths(op)[0]) - 1
    t = leaf.type
    if isinstance(t, IntegerType):
        return _signed_range(t.width)
    return None


def expr_range(expr: IndexExpr) -> Range | None:
    """The smallest and largest value of `expr` over its leaves' ranges, or None."""
    low = high = 0
    for monomial, coefficient in expr.terms:
        term = (coefficient, coefficient)
        for leaf in monomial:
            bounds = leaf_range(leaf)
            if bounds is None:
                return None
            term = _product(term, bounds)
        low, high = low + term[0], high + term[1]
    return low, high


def strided_range(state: Strided) -> Range | None:
    """The smallest and largest value of a block of offsets, or None (a wrap, an unbounded
    leaf)."""
    if state.wrap is not None:
        return None
    known = expr_range(state.start)
    for n, stride in zip(state.shape, state.strides):
        step = expr_range(stride)
        if known is None or step is None:
            return None
        step = _product(step, (0, n - 1))
        known = known[0] + step[0], known[1] + step[1]
    return known


def _product(a: Range, b: Range) -> Range:
    corners = [x * y for x in a for y in b]
    return min(corners), max(corners)


def fits(value: Value, known: Range | None) -> bool:
    """Whether `value`'s exact expression, of range `known`, is what the kernel computes.

    Arithmetic narrower than 32 bits is exact only where it stays in its type's signed range
    (`tl.int8` 100 + 100 is -56); 32 and 64 bits are assumed not to overflow (index_expr.py).
    """
    width = bit_width(element_type(value.type))
    if width >= 32:
        return True
    return known is not None and _within(known, _signed_range(width))


def narrow_scalar(value: Value, expr: IndexExpr) -> IndexExpr:
    """`expr`, the exact result of integer arithmetic `value`, or what the kernel computes
    instead when it is narrow and may wrap: the constant wrapped, or `value` as a leaf."""
    if fits(value, expr_range(expr)):
        return expr
    constant = expr.constant_value
    if constant is not None:
        return IndexExpr.constant(signed(constant, bit_width(element_type(value.type))))
    return IndexExpr.leaf(value)


def scalar_cast(op, source: IndexExpr) -> IndexExpr:
    """The expression of a scalar cast's result, given its operand's."""
    if keeps(op, expr_range(source)):
        return source
    constant = source.constant_value
    if constant is not None:
        return IndexExpr.constant(fold(op, constant))
    return IndexExpr.leaf(op.results[0])
