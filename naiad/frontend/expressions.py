"""Expressions: Python's operators applied to kernel values, with the interpreter's meaning.

An operator on tensors is the tensor's own method (`tensor.__add__` asks the active semantic),
on constexprs it folds, on plain Python values it is Python's: so `BLOCK * 2` stays a
compile-time value and `x * 2` is an `arith.muli`. `and`/`or`/`not` and `is` get the meaning the
interpreter's rewrite gives them in a user's kernel (rewrite.py): elementwise on int1 tensors,
short-circuit on compile-time values, `is` on the values of constexprs.
"""

from __future__ import annotations

import ast
import operator

from .. import errors
from ..language import core
from ..language.comparisons import COMPARISONS, joined
from ..language.literals import attribute_of
from .calls import is_jit

BINARY_OPERATORS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.BitAnd: operator.and_,
    ast.MatMult: operator.matmul,
}
# Each unary operator: the function applying it, the method it calls, its symbol (for the error
# of an operand without that method).
_UNARY = {
    ast.USub: (operator.neg, "__neg__", "-"),
    ast.UAdd: (operator.pos, "__pos__", "+"),
    ast.Invert: (operator.invert, "__invert__", "~"),
}


def _unwrap(value):
    return core._unwrap_if_constexpr(value)


class ExpressionsMixin:
    """The expression visitors of `CodeGenerator`."""

    def visit_Constant(self, node):
        return node.value

    def visit_Name(self, node):
        return self.lookup(node.id)

    def visit_Attribute(self, node):
        return attribute_of(self.visit(node.value), node.attr)

    def visit_Subscript(self, node):
        value = self.visit(node.value)
        index = self.visit(node.slice)
        getitem = getattr(type(value), "__getitem__", None)
        if is_jit(getitem):  # an aggregate's jit `__getitem__`: a call, as any jit method's
            return self.call_jit(getitem, [value, index], {}, node)
        return value[index]

    def visit_Slice(self, node):
        parts = (node.lower, node.upper, node.step)
        return slice(*(None if p is None else _unwrap(self.visit(p)) for p in parts))

    def _elements(self, nodes) -> list:
        values = []
        for elt in nodes:
            if isinstance(elt, ast.Starred):
                values += list(_unwrap(self.visit(elt.value)))
            else:
                values.append(self.visit(elt))
        return values

    def visit_Tuple(self, node):
        return tuple(self._elements(node.elts))

    def visit_List(self, node):
        return self._elements(node.elts)

    def visit_Set(self, node):
        return set(self._elements(node.elts))

    def visit_Dict(self, node):
        result = {}
        for key, value in zip(node.keys, node.values):
            if key is None:
                result.update(self.visit(value))
            else:
                result[_unwrap(self.visit(key))] = self.visit(value)
        return result

    def visit_JoinedStr(self, node):
        return "".join(str(self.visit(part)) for part in node.values)

    def visit_FormattedValue(self, node):
        value = _unwrap(self.visit(node.value))
        conversion = {ord("r"): repr, ord("s"): str, ord("a"): ascii}.get(node.conversion)
        if conversion is not None:
            value = conversion(value)
        spec = "" if node.format_spec is None else self.visit(node.format_spec)
        return format(value, spec)

    # -- operators ------------------------------------------------------------------------------
    def visit_BinOp(self, node):
        lhs, rhs = self.visit(node.left), self.visit(node.right)
        return BINARY_OPERATORS[type(node.op)](lhs, rhs)

    def visit_UnaryOp(self, node):
        operand = self.visit(node.operand)
        if isinstance(node.op, ast.Not):
            if self.rewritten and isinstance(operand, core.tensor):
                return self.semantic.not_(operand)
            return not operand
        apply, method, symbol = _UNARY[type(node.op)]
        kind = type(_unwrap(operand))
        if not hasattr(kind, method):
            # Refused by the frontend, as Triton's code generator refuses it: the error has no
            # Python TypeError behind it as its cause.
            raise errors.UnsupportedLanguageConstruct(
                f"unary {symbol} is not supported on a value of type {kind.__name__}"
            )
        return apply(operand)

    def visit_BoolOp(self, node):
        """`a and b`: elementwise on a tensor (int1 only, as Triton), else Python's
        short-circuit on the compile-time value."""
        is_and = isinstance(node.op, ast.And)
        result = self.visit(node.values[0])
        for value_node in node.values[1:]:
            if self.rewritten and isinstance(result, core.tensor):
                rhs = self.visit(value_node)
                combine = self.semantic.logical_and if is_and else self.semantic.logical_or
                result = combine(result, rhs)
            elif bool(result) != is_and:
                return result  # short-circuit: `False and ...`, `True or ...`
            else:
                result = self.visit(value_node)
        return result

    def visit_Compare(self, node):
        def values():
            lhs = self.visit(node.left)
            for op, right in zip(node.ops, node.comparators):
                rhs = self.visit(right)
                yield self._compare(op, lhs, rhs)
                lhs = rhs

        return joined(values(), self.semantic.logical_and)

    def _compare(self, op, lhs, rhs):
        if isinstance(op, ast.Is | ast.IsNot):
            # `BLOCK is None` holds for a constexpr None (the interpreter's `is_`).
            if self.rewritten:
                lhs, rhs = _unwrap(lhs), _unwrap(rhs)
            return (lhs is rhs) == isinstance(op, ast.Is)
        return COMPARISONS[type(op)](lhs, rhs)

    def visit_IfExp(self, node):
        cond = self.visit(node.test)
        if not isinstance(cond, core.tensor):
            return self.visit(node.body if _unwrap(cond) else node.orelse)
        return self.conditional_expression(node, cond)

    def visit_NamedExpr(self, node):
        """`(x := value)` assigns as `x = value` does (a Python number becomes a typed scalar,
        unless `x` was declared `tl.constexpr`), and is the value `x` then holds (Triton)."""
        name = node.target.id
        value = self.visit_named(node.value, name)
        if self.rewritten and self._declared_in(node.target):
            self._assign_declared(node.target, value, node)
        else:
            if self.rewritten:
                value = self._assigned_at(value, node.value, name)
            self.assign(node.target, value, node)
        return self.scope[name]

    # -- comprehensions: over compile-time sequences, with Python's meaning ------------------------
    def visit_ListComp(self, node):
        return list(self._comprehension(node.generators, lambda: self.visit(node.elt)))

    def visit_GeneratorExp(self, node):
        return iter(self.visit_ListComp(node))

    def visit_SetComp(self, node):
        return set(self._comprehension(node.generators, lambda: self.visit(node.elt)))

    def visit_DictComp(self, node):
        pairs = self._comprehension(
            node.generators, lambda: (_unwrap(self.visit(node.key)), self.visit(node.value))
        )
        return dict(pairs)

    def _comprehension(self, generators, element):
        saved = dict(self.scope)
        try:
            return list(self._generate(generators, element))
        finally:
            self.scope = saved

    def _generate(self, generators, element):
        first, rest = generators[0], generators[1:]
        for item in _unwrap(self.visit(first.iter)):
            self.assign(first.target, item, first)
            if all(_unwrap(self.visit(cond)) for cond in first.ifs):
                if rest:
                    yield from self._generate(rest, element)
                else:
                    yield element()
