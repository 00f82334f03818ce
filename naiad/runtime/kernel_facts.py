"""What a jit function's AST says of its blocks (the sizes it names, the dimensions it adds,
its operations), and whether every path of it is one the interpreter types as the frontend does:
the facts cpu_first_launch.py decides a first launch from, read once per code object.

Only a kernel whose every path the interpreter types as the frontend does is read (`facts`
answers None otherwise): the frontend alone checks what joins paths (an `if` on a tensor,
several returns), and refuses some Python the interpreter would run, so a kernel with any of
those - or a `while` - is decided from its TTIR, and the frontend refuses it at the launch. A
loop's carried values the interpreter checks as the frontend does, after each trip
(interpreter/rewrite.py), so a loop is read where no name bound only in it is read outside it.

Reading the AST parses the source of the kernel and of the jit functions it names (the
frontend's `function_source`, kept per code object), in the launching thread: the frontend run
later by the background worker finds them parsed and parses nothing (the worker may not:
source_locations.refusing_parses).
"""

from __future__ import annotations

import ast
import collections
from dataclasses import dataclass

from ..frontend.source import function_source
from .loop_runs import stored_names

# Calls whose integer arguments are sizes of the block they make or view.
SHAPE_CALLS = frozenset(
    {"arange", "zeros", "full", "reshape", "view", "broadcast_to", "make_block_ptr"}
    | {"make_tensor_descriptor", "histogram", "zeros_like", "full_like"}
)
# Shape calls that may take a shape's sizes one by one (`x.reshape(M, N)`, `tl.reshape(x, M, N)`).
SIZES_ONE_BY_ONE = frozenset({"reshape", "view", "broadcast_to"})
# The loops read: a range's trips come from loop_runs.py at the launch.
RANGES = frozenset({"range", "static_range"})


class Unreadable(Exception):
    """The AST does not tell the launch's size."""


@dataclass(frozen=True)
class Facts:
    """What one function's AST says of its size, constexprs aside."""

    sizes: tuple  # expressions of block sizes (arguments of SHAPE_CALLS)
    expanded: tuple  # those of shape calls given more dimensions (`tl.arange(0, N)[:, None]`)
    shapes: tuple  # the shapes written out (`tl.zeros([M, N], ...)`), each a tuple
    # Sizes given one by one (`x.reshape(M, N)`; `tl.reshape(x, M, N)` has the tensor among them).
    one_by_one: tuple
    spread: bool  # something else is given more dimensions (`offsets[:, None]`)
    rank: int  # the most dimensions an index gives
    operations: int  # its calls and operators (fewer than the TTIR's operations)
    bindings: tuple  # (name, expression) of each `NAME: tl.constexpr = ...`, in order


def facts(fn, constexprs: frozenset = frozenset()) -> Facts | None:
    """What `fn`'s AST says of its size, its `constexprs` (names) and constexpr parameters
    given (parsed by `function_source`); None where it cannot tell, or where the frontend may
    refuse what the interpreter runs (`_read`)."""
    return kept((fn.__code__, constexprs), lambda: _read_facts(fn, constexprs))


_KEPT: collections.OrderedDict = collections.OrderedDict()


def kept(key, make):
    """`make()`, kept by `key` (the last 128; read in the launching thread only)."""
    if key in _KEPT:
        _KEPT.move_to_end(key)
        return _KEPT[key]
    _KEPT[key] = found = make()
    while len(_KEPT) > 128:
        _KEPT.popitem(last=False)
    return found


def _read_facts(fn, constexprs: frozenset) -> Facts | None:
    try:
        source = function_source(fn)
        definition = source.definition
        if not source.is_user:  # the language's own functions: written to compile, they branch
            return _read(definition.body, frozenset(), _TRUSTED)  # on constants they are given
        dynamic = _dynamic(definition, constexprs | source.constexpr_params)
        arguments = definition.args
        parameters = frozenset(
            a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)
        )
        return _read(definition.body, dynamic, _STATEMENTS + _EXPRESSIONS, parameters)
    except (TypeError, SyntaxError, OSError, Unreadable):
        return None


# What a body may hold for its launch to be tiered before its TTIR: code whose every path the
# interpreter's run types as the frontend does. The frontend alone checks what joins paths (an
# `if` on a tensor, a loop's carried values, several returns), and refuses Python the
# interpreter would run (`try`, `with`, comprehensions, ...): a kernel with any of those is
# decided from its TTIR, which the frontend builds or refuses at the launch.
_STATEMENTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Pass, ast.If, ast.For)
_EXPRESSIONS = (ast.Name, ast.Attribute, ast.Call, ast.Constant, ast.BinOp, ast.UnaryOp)
_EXPRESSIONS += (ast.BoolOp, ast.boolop)  # of constexprs only
_EXPRESSIONS += (ast.Compare, ast.Subscript, ast.Slice, ast.Tuple, ast.List, ast.keyword)
_EXPRESSIONS += (ast.IfExp, ast.operator, ast.unaryop, ast.cmpop, ast.expr_context)


_TRUSTED = (*_STATEMENTS, *_EXPRESSIONS, ast.Return, ast.Raise)
_CONDITIONS = (ast.Name, ast.Attribute, ast.Call, ast.Constant, ast.Compare, ast.BoolOp)
_CONDITIONS += (ast.UnaryOp, ast.BinOp, ast.boolop, ast.unaryop, ast.cmpop, ast.operator)
_CONDITIONS += (ast.expr_context,)


def _read(body: list, dynamic: frozenset, allowed: tuple, parameters=frozenset()) -> Facts:
    sizes, shapes, one_by_one, spread, rank, operations = [], [], [], False, 1, 0
    given_dimensions = set()  # the shape calls given more dimensions
    call_sizes = {}  # a shape call's size arguments, by the call's id
    ranges = _ranges_named(body)  # `offs = start + tl.arange(0, B)`: offs[:, None] is B's
    tails = _tail_returns(body, dynamic)
    stack = list(body)
    while stack:
        node = stack.pop()
        if not isinstance(node, allowed) and id(node) not in tails:
            raise Unreadable
        if isinstance(node, ast.If | ast.IfExp) and not _static(node.test, dynamic):
            raise Unreadable
        if isinstance(node, ast.BoolOp) and not _static(node, dynamic):
            raise Unreadable
        if isinstance(node, ast.Call) and not isinstance(node.func, ast.Name | ast.Attribute):
            raise Unreadable  # (`table[i](x)`: a callee the reading cannot follow)
        if isinstance(node, ast.For):
            _check_loop(node, body, parameters)
        elif isinstance(node, ast.Call) and called(node) in SHAPE_CALLS:
            for argument in [*node.args, *(k.value for k in node.keywords)]:
                if isinstance(argument, ast.List | ast.Tuple):
                    shapes.append(tuple(argument.elts))
                    sizes += argument.elts
                else:
                    sizes.append(argument)
                    call_sizes.setdefault(id(node), []).append(argument)
            listed = any(isinstance(a, ast.List | ast.Tuple) for a in node.args)
            if called(node) in SIZES_ONE_BY_ONE and len(node.args) > 1 and not listed:
                one_by_one.append(tuple(node.args))
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple):
            rank = max(rank, len(node.slice.elts))
            value = node.value
            if isinstance(value, ast.Name) and value.id in ranges:
                value = ranges[value.id]
            if isinstance(value, ast.Call) and called(value) in SHAPE_CALLS:
                given_dimensions.add(id(value))
            else:
                spread = True
        operations += isinstance(node, ast.Call | ast.BinOp | ast.UnaryOp | ast.Compare)
        stack += ast.iter_child_nodes(node)
    bindings = [
        (node.target.id, node.value)
        for statement in body
        for node in ast.walk(statement)
        if isinstance(node, ast.AnnAssign)
        and isinstance(node.target, ast.Name)
        and node.value
        and "constexpr" in ast.unparse(node.annotation)
    ]
    expanded = [size for call in given_dimensions for size in call_sizes.get(call, [])]
    sizes, expanded, shapes, one_by_one = map(tuple, (sizes, expanded, shapes, one_by_one))
    return Facts(sizes, expanded, shapes, one_by_one, spread, rank, operations, tuple(bindings))


def _ranges_named(body: list) -> dict:
    """The names bound once, to a value with one `tl.arange` and no other shape call or
    added dimension (`offs_m = start + tl.arange(0, BLOCK_M)`): name -> that arange call."""
    nodes = [n for statement in body for n in ast.walk(statement)]
    stores = collections.Counter(
        n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    )
    named = {}
    for node in nodes:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target = node.targets[0]
        if not isinstance(target, ast.Name) or stores[target.id] != 1:
            continue
        inside = list(ast.walk(node.value))
        calls = [n for n in inside if isinstance(n, ast.Call) and called(n) in SHAPE_CALLS]
        widened = any(isinstance(n, ast.Subscript) for n in inside)
        if len(calls) == 1 and called(calls[0]) == "arange" and not widened:
            named[target.id] = calls[0]
    return named


def _tail_returns(body: list, dynamic: frozenset) -> set:
    """The ids of the returns that end the function on every path the frontend compiles:
    the last statement of the body, or of a branch of an `if` on constexprs that is itself
    last (`if isinstance(x, T): return x` / `else: return f(x)`). Another return makes
    paths the frontend joins: the function is not read."""
    if not body:
        return set()
    last = body[-1]
    if isinstance(last, ast.Return):
        return {id(last)}
    if isinstance(last, ast.If) and _static(last.test, dynamic):
        return _tail_returns(last.body, dynamic) | _tail_returns(last.orelse, dynamic)
    return set()


def _check_loop(loop: ast.For, body: list, parameters: frozenset) -> None:
    """A loop read before its TTIR: over `range`, `tl.range` or `tl.static_range` (hints by
    name or constant), without `else`, and no name it alone binds read outside it (after a
    loop the frontend knows only the names it carries; Python keeps them all)."""
    iterated = loop.iter
    if loop.orelse or not (isinstance(iterated, ast.Call) and called(iterated) in RANGES):
        raise Unreadable
    if not 1 <= len(iterated.args) <= 3 or any(
        not isinstance(k.value, ast.Name | ast.Constant) for k in iterated.keywords
    ):
        raise Unreadable
    inside = {id(n) for n in ast.walk(loop)}
    outside = [n for statement in body for n in ast.walk(statement) if id(n) not in inside]
    names = [n for n in outside if isinstance(n, ast.Name)]
    bound_elsewhere = parameters | {n.id for n in names if isinstance(n.ctx, ast.Store)}
    loaded = {n.id for n in names if isinstance(n.ctx, ast.Load)}
    if (stored_names(loop) - bound_elsewhere) & loaded:
        raise Unreadable


def _dynamic(definition: ast.FunctionDef, constexprs: frozenset) -> frozenset:
    """The names that may hold a tensor: the parameters but `constexprs`, and the names the
    body binds to anything but a value of constexprs alone (`_static`) or `x: tl.constexpr`."""
    arguments = definition.args
    every = (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)
    dynamic = {a.arg for a in every if a.arg not in constexprs}
    dynamic |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
    for node in (n for statement in definition.body for n in ast.walk(statement)):
        if isinstance(node, ast.AnnAssign) and "constexpr" in ast.unparse(node.annotation):
            continue
        value = getattr(node, "value", None)
        if isinstance(node, ast.Assign | ast.AnnAssign) and _static(value, frozenset(dynamic)):
            continue
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.For):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                dynamic |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return frozenset(dynamic)


def _static(test, dynamic: frozenset) -> bool:
    """Whether a condition reads no `dynamic` name (constants, globals, constexprs, their
    attributes and methods, arithmetic, comparisons, `and`, `or`, `not`; `x is None`
    whatever x is): the frontend compiles the branch taken only, as the interpreter runs it."""
    if isinstance(test, ast.Compare) and _is_none_test(test):
        return True
    if isinstance(test, ast.Call) and called(test) == "isinstance":
        return True  # (types are the compiler's to know: both read them the same)
    if isinstance(test, ast.Name):
        return test.id not in dynamic
    if not isinstance(test, _CONDITIONS):
        return False
    return all(_static(child, dynamic) for child in ast.iter_child_nodes(test))


def _is_none_test(compare: ast.Compare) -> bool:
    return (
        len(compare.ops) == 1
        and isinstance(compare.ops[0], ast.Is | ast.IsNot)
        and isinstance(compare.comparators[0], ast.Constant)
        and compare.comparators[0].value is None
    )


def called(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
