"""The shapes of a kernel's values read from its AST with a launch's constexprs, for the first
launch's block bound (cpu_first_launch.py): the largest block any value of the launch has,
where the sizes a kernel names alone would say only "the largest size to the power of the
most dimensions" (tutorial 06's backward: 128 x 128 from its sizes, 128 x 64 in fact).

Each value gets a kind (shape_kinds.py): a shape, a tuple of kinds, a block pointer or a tensor
descriptor with its block's shape (a host descriptor's block is in the specialization's
signature). The statements are followed as the frontend compiles them: an `if` on constexprs
takes its branch, another joins both, a loop's body is followed until its kinds settle, and a
call of a jit function reads that function with the constexprs and argument kinds of the call,
its result the join of its returns. Only the language's functions whose shapes are known are
read (shape_rules.py); anything else - a call the reading cannot follow, a subscript it does
not know - makes the reading incomplete (Incomplete), and the caller falls back to its
coarser bound.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable

from .loop_runs import constant_value
from .shape_kinds import SCALAR, Incomplete, broadcast, is_kind, join, plain
from .shape_rules import LanguageCall, arguments

SCALAR_BUILTINS = frozenset({"min", "max", "abs", "int", "float", "bool", "len"})

# Passes over a loop's body before its kinds must have settled; calls deep.
_PASSES, _DEPTH = 8, 8


class Reading:
    """One launch's reading (`kernel`): the `largest` block any of its values has."""

    def __init__(
        self,
        definition_of: Callable,
        callee_of: Callable[[object, ast.expr], object],
        is_language: Callable[[object, ast.expr], bool],
        bindings_of: Callable[[object, dict], dict],
        bound_of: Callable[[object, ast.Call, dict], dict],
    ):
        self.definition_of, self.callee_of = definition_of, callee_of
        self.is_language, self.bindings_of = is_language, bindings_of
        self.bound_of = bound_of  # (callee, call, scope) -> the constexprs the call gives it
        self.largest = 1
        self._returns: dict = {}

    def kernel(self, fn, scope: dict, descriptors: dict) -> None:
        """Read the kernel `fn` with constexprs `scope`; `descriptors` are its tensor
        descriptor parameters' block shapes (the others are scalars)."""
        definition = self.definition_of(fn)
        every = (*definition.args.posonlyargs, *definition.args.args)
        kinds = {a.arg: SCALAR for a in (*every, *definition.args.kwonlyargs)}
        kinds |= {name: ("descriptor", shape) for name, shape in descriptors.items()}
        self.function(fn, scope, kinds, 0)

    def function(self, fn, scope: dict, kinds: dict, depth: int):
        """The kind `fn` returns, called with constexprs `scope` and arguments of `kinds`."""
        scope = self.bindings_of(fn, scope)
        key = (fn, tuple(sorted(scope.items())), tuple(sorted(kinds.items())))
        if key in self._returns:
            return self._returns[key]
        if depth > _DEPTH:
            raise Incomplete
        body = _Body(self, fn, scope, depth)
        body.block(self.definition_of(fn).body, dict(kinds))
        self._returns[key] = found = body.returned if body.returns else SCALAR
        return found

    def seen(self, kind) -> None:
        """Count a value of `kind` toward the largest block."""
        shape = kind[1] if is_kind(kind, "pointer") or is_kind(kind, "descriptor") else plain(kind)
        if shape is not None:
            self.largest = max(self.largest, math.prod(shape))


class _Body:
    """The reading of one function's body at one call: its values' kinds by name (`state`,
    passed along the statements), its returns joined."""

    def __init__(self, reading: Reading, fn, scope: dict, depth: int):
        self.reading, self.fn, self.scope, self.depth = reading, fn, scope, depth
        self.returns, self.returned = False, SCALAR

    def block(self, body: list, state: dict) -> dict:
        for statement in body:
            state = self.statement(statement, state)
        return state

    def statement(self, node, state: dict) -> dict:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = self.kind(node.value, state)
            for target in targets:
                _assign(target, value, state)
        elif isinstance(node, ast.AugAssign):
            value = broadcast([self.kind(node.target, state), self.kind(node.value, state)])
            _assign(node.target, value, state)
        elif isinstance(node, ast.Expr):
            self.kind(node.value, state)
        elif isinstance(node, ast.Return):
            value = SCALAR if node.value is None else self.kind(node.value, state)
            self.returned = join(self.returned, value) if self.returns else value
            self.returns = True
        elif isinstance(node, ast.If):
            test = constant_value(node.test, self.scope)
            if type(test) in (bool, int):
                return self.block(node.body if test else node.orelse, state)
            self.kind(node.test, state)
            taken = self.block(node.body, dict(state))
            state = _join_states(taken, self.block(node.orelse, dict(state)))
        elif isinstance(node, ast.For):
            state = self.loop(node, state)
        elif not isinstance(node, ast.Pass | ast.Raise):
            raise Incomplete
        return state

    def loop(self, node: ast.For, state: dict) -> dict:
        for bound in arguments(node.iter) if isinstance(node.iter, ast.Call) else []:
            self.kind(bound, state)
        for name in (n for n in ast.walk(node.target) if isinstance(n, ast.Name)):
            state[name.id] = SCALAR  # (a range's index: the loops read are over ranges)
        for _ in range(_PASSES):
            after = _join_states(state, self.block(node.body, dict(state)))
            if after == state:
                return state
            state = after
        raise Incomplete

    def kind(self, node, state: dict):
        """The kind of `node`'s value (raising Incomplete where it cannot tell)."""
        found = self._kind(node, state)
        if found is None:
            raise Incomplete
        self.reading.seen(found)
        return found

    def _kind(self, node, state: dict):
        if isinstance(node, ast.Constant):
            return SCALAR
        if isinstance(node, ast.Name):
            return state.get(node.id, SCALAR)  # (a global: a constexpr)
        if isinstance(node, ast.Attribute):
            if not _is_value(node.value, state):
                return SCALAR
            base = self.kind(node.value, state)
            if node.attr != "T":
                return SCALAR
            return tuple(reversed(base)) if base == plain(base) else None
        if isinstance(node, ast.Subscript):
            return self.subscript(node, state)
        if isinstance(node, ast.Call):
            return self.call(node, state)
        if isinstance(node, ast.Tuple | ast.List):
            return ("tuple", tuple(self.kind(e, state) for e in node.elts))
        if isinstance(node, ast.BinOp | ast.UnaryOp | ast.Compare | ast.BoolOp | ast.IfExp):
            kinds = [self.kind(child, state) for child in _operands(node)]
            if isinstance(node, ast.Compare) and any(is_kind(k, "tuple") for k in kinds):
                return SCALAR  # (shapes compared: `x.shape == [M, N]` is a bool)
            return broadcast(kinds)
        return None

    def subscript(self, node: ast.Subscript, state: dict):
        base = self.kind(node.value, state)
        index = node.slice
        if is_kind(base, "tuple"):
            position = constant_value(index, self.scope)
            return base[1][position] if type(position) is int else None
        elements = index.elts if isinstance(index, ast.Tuple) else [index]
        if base == SCALAR:  # (a shape's size, `x.shape[0]`)
            return SCALAR
        if plain(base) is None:
            return None
        dimensions, shape = list(base), []
        for element in elements:
            if isinstance(element, ast.Constant) and element.value is None:
                shape.append(1)
            elif isinstance(element, ast.Slice) and not (element.lower or element.upper):
                if not dimensions:
                    return None
                shape.append(dimensions.pop(0))
            else:
                return None
        return tuple(shape + dimensions)

    def call(self, node: ast.Call, state: dict):
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        kinds = [self.kind(a, state) for a in arguments(node)]
        if isinstance(func, ast.Attribute) and _is_value(func.value, state):
            receiver = self.kind(func.value, state)  # a method: the value is its first argument
            return LanguageCall(self, name, node, [receiver, *kinds], 1).kind()
        if self.reading.is_language(self.fn, func):
            return LanguageCall(self, name, node, kinds, 0).kind()
        callee = self.reading.callee_of(self.fn, func)
        if callee is not None:
            return self.jit_call(callee, node, state)
        if isinstance(func, ast.Name) and name in SCALAR_BUILTINS and func.id not in state:
            return SCALAR
        return None

    def constant(self, node):
        value = constant_value(node, self.scope)
        return getattr(value, "value", value)

    def shape_of(self, node) -> tuple | None:
        """The shape a shape argument (`[M, N]`, `(M, N)`, `M`) gives, or None."""
        elements = node.elts if isinstance(node, ast.Tuple | ast.List) else [node]
        shape = tuple(self.constant(e) for e in elements)
        return shape if all(type(d) is int and d > 0 for d in shape) else None

    def jit_call(self, callee, node: ast.Call, state: dict):
        if any(keyword.arg is None for keyword in node.keywords):  # (`**arguments`)
            raise Incomplete
        names = [p.arg for p in self.reading.definition_of(callee).args.args]
        kinds = {name: self.kind(argument, state) for name, argument in zip(names, node.args)}
        kinds |= {k.arg: self.kind(k.value, state) for k in node.keywords}
        scope = self.reading.bound_of(callee, node, self.scope)
        return self.reading.function(callee, scope, kinds, self.depth + 1)


def _is_value(node, state: dict) -> bool:
    """Whether `node` names a value of the function (not a module or a global)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return not isinstance(node, ast.Name) or node.id in state


def _assign(target, value, state: dict) -> None:
    if isinstance(target, ast.Name):
        state[target.id] = value
    elif isinstance(target, ast.Tuple | ast.List):
        if not is_kind(value, "tuple") or len(value[1]) != len(target.elts):
            raise Incomplete
        for part_target, part in zip(target.elts, value[1]):
            _assign(part_target, part, state)
    # (a subscript or an attribute stored into: no name changes kind)


def _join_states(one: dict, other: dict) -> dict:
    joined = {**one, **other}
    for name in one.keys() & other.keys():
        joined[name] = join(one[name], other[name])
    return joined


def _operands(node) -> list:
    if isinstance(node, ast.IfExp):
        return [node.body, node.orelse]
    if isinstance(node, ast.BoolOp):
        return list(node.values)
    if isinstance(node, ast.Compare):
        return [node.left, *node.comparators]
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    return [node.operand]
