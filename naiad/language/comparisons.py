"""Python's comparison operators by AST node, and how a chain of them joins (`a < b <= c`).

The compiler's frontend, the interpreter (its rewrite of a kernel) and the first launch's
reading of a kernel's constexprs each evaluate comparisons written in a kernel; they share
the operators and the chain's rule here, so that a kernel means the same on every path.
"""

from __future__ import annotations

import ast
import operator

from . import core

__all__ = ["COMPARISONS", "ORDERINGS", "joined"]

# The six that compare numbers (what a constexpr expression may use).
ORDERINGS = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
COMPARISONS = ORDERINGS | {ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}


def joined(values, logical_and):
    """A chained comparison's value from the values of its comparisons in turn (`values`, an
    iterator evaluating each one's right operand as it is drawn): joined by `logical_and`
    where either side is a tensor (elementwise), else ended by the first false one, as
    Python's chain would end (the compiler's reading of `0 < x < 4`)."""
    result = None
    for value in values:
        if result is None:
            result = value
        elif isinstance(result, core.tensor) or isinstance(value, core.tensor):
            result = logical_and(result, value)
        elif not result:
            return result
        else:
            result = value
    return result
