"""A launch's size told from its kernel's AST, before any IR is built (cpu_tiering.py).

Tiering runs a small first launch of a specialization in the interpreter. Deciding so from the
kernel's TTIR costs the frontend and the TTIR pipeline (about 4 ms a kernel, as much as the
interpreter takes to run a small one): a test suite launching each of its kernels once paid it
for every kernel. The AST, the launch's constexprs and its grid tell most small launches
apart at once: the largest block is at most the largest size the kernel names (a constexpr, an
integer in a call that makes a shape) to the power of the most dimensions it writes (`x[:,
None]`, a shape's list); a `tl.static_range` whose bounds are integers or constexprs runs a
known number of trips. The launch then runs in the interpreter and the whole compile goes to
the background (cpu_compile_from_source.py).

Only a kernel whose every path the interpreter types as the frontend does is read so (`_read`):
the frontend alone checks what joins paths (an `if` on a tensor, a loop's carried values,
several returns) and refuses some Python the interpreter would run, so a kernel with any of
those - or a `while`, another loop, a launch past cpu_tiering.is_small's limits - is decided
from its TTIR as before (`small_before_ir` answers None), and the frontend refuses it at the
launch. Where the interpreted launch fails, the frontend runs first (cpu_compile_from_source.py), so
the error a compiled launch raises is raised.

Reading the AST parses the source of the kernel and of the jit functions it names (the
frontend's `function_source`, kept per code object), here in the launching thread: the frontend
run later by the background worker finds them parsed and parses nothing (the worker may not:
source_locations.refusing_parses).
"""

from __future__ import annotations

import ast
import collections
import inspect
import math
import operator
import types
from dataclasses import dataclass

from ..frontend.source import function_source
from ..language.comparisons import ORDERINGS
from . import cpu_tiering

# Calls whose integer arguments are sizes of the block they make or view.
SHAPE_CALLS = frozenset(
    {"arange", "zeros", "full", "reshape", "view", "broadcast_to", "make_block_ptr"}
    | {"make_tensor_descriptor", "histogram", "zeros_like", "full_like"}
)
RANGES = frozenset({"static_range"})  # unrolled: no carried values for the frontend to join
_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul}
_OPERATORS |= {ast.FloorDiv: operator.floordiv, ast.LShift: operator.lshift, ast.Pow: operator.pow}


class _Unreadable(Exception):
    """The AST does not tell the launch's size."""


@dataclass(frozen=True)
class _Function:
    """What one function's AST says of its size, constexprs aside."""

    sizes: tuple  # expressions of block sizes (arguments of SHAPE_CALLS)
    expanded: tuple  # those of shape calls given more dimensions (`tl.arange(0, N)[:, None]`)
    shapes: tuple  # the shapes written out (`tl.zeros([M, N], ...)`), each a tuple
    spread: bool  # something else is given more dimensions (`offsets[:, None]`)
    rank: int  # the most dimensions an index gives
    loops: tuple  # per loop: (its range's argument expressions, the enclosing loop's index)
    operations: int  # its calls and operators (fewer than the TTIR's operations)
    bindings: tuple  # (name, expression) of each `NAME: tl.constexpr = ...`, in order


def small_before_ir(jit_function, constexprs: dict):
    """A test `(arguments, grid) -> bool` of whether a launch of `jit_function` with these
    `constexprs` (a specialization's) is small enough for the interpreter, told from the ASTs
    alone; None where they do not tell (a launch then builds its TTIR to decide)."""
    try:
        block, runs, operations = _estimate(jit_function, constexprs)
    except _Unreadable:
        return None
    body = max(block, cpu_tiering.SMALL_BODY) * runs
    limit = max(cpu_tiering.SMALL_WORK, cpu_tiering.WORK_PER_OP * operations)

    def small(arguments: dict, grid: tuple) -> bool:
        programs = math.prod(grid)
        return programs <= cpu_tiering.SMALL_PROGRAMS and programs * body <= limit

    return small


def _estimate(jit_function, constexprs: dict) -> tuple[int, int, int]:
    """(elements of the largest block at most, loop bodies a program runs at most, operations
    at least). A block's dimensions are powers of two, named in shape calls: the largest block
    is taken as the largest of a size alone, a shape written out, and the product of the
    `rank` largest sizes given more dimensions (`tl.arange(0, M)[:, None] * tl.arange(0,
    N)[None, :]` is M*N; where something else is, `offsets[:, None]`, any size may be one),
    the largest repeated where there are fewer (`offsets[:, None] * offsets[None, :]` of one
    `tl.arange(0, B)` is B*B)."""
    env = {k: v for k, v in ((k, _integer(v)) for k, v in constexprs.items()) if v is not None}
    kernel = getattr(jit_function, "fn", jit_function)
    sizes, expanded, shapes, rank, runs, operations = [], [], [], 1, 1, 0
    names = frozenset(constexprs)
    for fn in _reached(kernel, constexprs):
        facts = _facts(fn, names) if fn is kernel else _facts(fn)
        if facts is None:
            raise _Unreadable
        source = function_source(fn)  # (a global the interpreter would read, the frontend not)
        if source.is_user and source.forbidden_global() is not None:
            raise _Unreadable
        scope = dict(env) if fn is kernel else {}
        for name, expression in facts.bindings:  # `HALF: tl.constexpr = BLOCK // 2`
            value = _value(expression, scope)
            if value is not None:
                scope[name] = value
        sizes += _dimensions(facts.sizes, scope)
        expanded += _dimensions(facts.sizes if facts.spread else facts.expanded, scope)
        shapes += [[_value(e, scope) for e in shape] for shape in facts.shapes]
        rank = max(rank, facts.rank)
        runs *= _runs(facts.loops, scope)
        operations += facts.operations
    largest = max(sizes or [max([1, *env.values()])])
    expanded = sorted(expanded) or [largest]
    expanded += [expanded[-1]] * (rank - len(expanded))
    blocks = [largest, math.prod(expanded[-rank:])]
    blocks += [math.prod(largest if d is None else max(d, 1) for d in shape) for shape in shapes]
    return max(blocks), runs, operations


def _dimensions(expressions, scope: dict) -> list:
    """The sizes of `expressions` that can be dimensions: known powers of two."""
    values = (_value(e, scope) for e in expressions)
    return [v for v in values if v is not None and 0 < v <= 1 << 31 and not v & (v - 1)]


def _runs(loops: tuple, env: dict) -> int:
    """The loop bodies one call runs: each loop's trips times its enclosing loop's runs,
    summed (at least one)."""
    runs: list[int] = []
    for arguments, parent in loops:
        bounds = [_value(a, env) for a in arguments]
        if None in bounds or (len(bounds) == 3 and bounds[2] == 0):
            raise _Unreadable
        trips = max(1, len(range(*bounds)))
        runs.append(trips * (1 if parent is None else runs[parent]))
    return max(1, sum(runs))


def _reached(kernel, constexprs: dict) -> list:
    """The kernel's function and those of the jit functions its AST names or its constexprs
    hold, transitively (what the frontend compiles, but for names it cannot see here)."""
    found, pending = [], [kernel]
    pending += [_function_of(v) for v in constexprs.values()]
    while pending:
        fn = pending.pop()
        if fn is None or fn in found:
            continue
        found.append(fn)
        scope = {**fn.__globals__, **_closure(fn)}
        pending += [_function_of(_resolve(node, scope)) for node in _names(fn)]
    return found


def _function_of(value):
    """The Python function of a jit function (None for anything else)."""
    value = getattr(value, "value", value)  # a constexpr holding one
    if not getattr(value, "__naiad_jit__", False):
        return None
    fn = getattr(value, "fn", value)
    return fn if isinstance(fn, types.FunctionType) else None


def _resolve(node, scope: dict):
    """The object a Name or an attribute chain names (None if it names none; an object's
    attributes read without running its code: `helpers.twice`)."""
    if isinstance(node, ast.Name):
        return scope.get(node.id)
    if not isinstance(node, ast.Attribute):
        return None
    base = _resolve(node.value, scope)
    if isinstance(base, types.ModuleType):
        return getattr(base, node.attr, None)
    found = None if base is None else inspect.getattr_static(base, node.attr, None)
    return found.__func__ if isinstance(found, staticmethod) else found


def _closure(fn) -> dict:
    cells = fn.__closure__ or ()
    try:
        return dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in cells)))
    except ValueError:  # a cell not filled yet
        return {}


def _names(fn) -> tuple:
    """The Name and Attribute nodes `fn`'s body reads (the jit functions it may reach); none
    where its source is unreadable (the frontend meets that error itself). Kept per code
    object, as `_facts`: the functions one `def` makes share them."""
    return _kept(fn.__code__, lambda: _read_names(fn))


def _read_names(fn) -> tuple:
    try:
        body = function_source(fn).definition.body
    except (TypeError, SyntaxError, OSError):
        return ()
    nodes = (n for statement in body for n in ast.walk(statement))
    return tuple(
        n for n in nodes if isinstance(n, ast.Name | ast.Attribute) and isinstance(n.ctx, ast.Load)
    )


def _facts(fn, constexprs: frozenset = frozenset()) -> _Function | None:
    """What `fn`'s AST says of its size, its `constexprs` (names) and constexpr parameters
    given (parsed by `function_source`); None where it cannot tell, or where the frontend may
    refuse what the interpreter runs (`_read`)."""
    return _kept((fn.__code__, constexprs), lambda: _read_facts(fn, constexprs))


_KEPT: collections.OrderedDict = collections.OrderedDict()


def _kept(key, make):
    """`make()`, kept by `key` (the last 128; read in the launching thread only)."""
    if key in _KEPT:
        _KEPT.move_to_end(key)
        return _KEPT[key]
    _KEPT[key] = found = make()
    while len(_KEPT) > 128:
        _KEPT.popitem(last=False)
    return found


def _read_facts(fn, constexprs: frozenset) -> _Function | None:
    try:
        source = function_source(fn)
        definition = source.definition
        if not source.is_user:  # the language's own functions: written to compile, they branch
            return _read(definition.body, frozenset(), _TRUSTED)  # on constants they are given
        dynamic = _dynamic(definition, constexprs | source.constexpr_params)
        return _read(definition.body, dynamic, _STATEMENTS + _EXPRESSIONS)
    except (TypeError, SyntaxError, OSError, _Unreadable):
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


def _read(body: list, dynamic: frozenset, allowed: tuple) -> _Function:
    sizes, expanded, shapes, spread, rank, loops, operations = [], [], [], False, 1, [], 0
    given_dimensions = set()  # the shape calls given more dimensions
    stack = [(node, None) for node in body]
    if body and isinstance(body[-1], ast.Return):  # one return, the last statement
        stack[-1] = (body[-1].value, None) if body[-1].value is not None else (ast.Pass(), None)
    while stack:
        node, loop = stack.pop()
        if not isinstance(node, allowed):
            raise _Unreadable
        if isinstance(node, ast.If | ast.IfExp) and not _static(node.test, dynamic):
            raise _Unreadable
        if isinstance(node, ast.BoolOp) and not _static(node, dynamic):
            raise _Unreadable
        if isinstance(node, ast.Call) and not isinstance(node.func, ast.Name | ast.Attribute):
            raise _Unreadable  # (`table[i](x)`: a callee the reading cannot follow)
        if isinstance(node, ast.For):
            loops.append((_range_arguments(node.iter), loop))
            loop = len(loops) - 1
        elif isinstance(node, ast.Call) and _called(node) in SHAPE_CALLS:
            for argument in [*node.args, *(k.value for k in node.keywords)]:
                if isinstance(argument, ast.List | ast.Tuple):
                    shapes.append(tuple(argument.elts))
                    sizes += argument.elts
                else:
                    sizes.append(argument)
                    expanded += [argument] if id(node) in given_dimensions else []
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple):
            rank = max(rank, len(node.slice.elts))
            value = node.value
            if isinstance(value, ast.Call) and _called(value) in SHAPE_CALLS:
                given_dimensions.add(id(value))
            else:
                spread = True
        operations += isinstance(node, ast.Call | ast.BinOp | ast.UnaryOp | ast.Compare)
        stack += [(child, loop) for child in ast.iter_child_nodes(node)]
    bindings = [
        (node.target.id, node.value)
        for statement in body
        for node in ast.walk(statement)
        if isinstance(node, ast.AnnAssign)
        and isinstance(node.target, ast.Name)
        and node.value
        and "constexpr" in ast.unparse(node.annotation)
    ]
    sizes, expanded, shapes, loops = map(tuple, (sizes, expanded, shapes, loops))
    return _Function(sizes, expanded, shapes, spread, rank, loops, operations, tuple(bindings))


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


def _range_arguments(iterated) -> tuple:
    if not (isinstance(iterated, ast.Call) and _called(iterated) in RANGES):
        raise _Unreadable
    if iterated.keywords or not 1 <= len(iterated.args) <= 3:
        raise _Unreadable
    return tuple(iterated.args)


def _called(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)


def _value(node, env: dict) -> int | None:
    """The integer `node` is with these constexprs (None: not one this can tell)."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _value(node.left, env), _value(node.right, env)
        if left is None or right is None or (right == 0 and type(node.op) is ast.FloorDiv):
            return None
        if type(node.op) in (ast.Pow, ast.LShift) and not 0 <= right <= 64:
            return None
        return _OPERATORS[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _value(node.operand, env)
        return None if value is None else -value
    if isinstance(node, ast.IfExp):  # `32 if IS_FP8 else 16`
        test = _value(node.test, env)
        return None if test is None else _value(node.body if test else node.orelse, env)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in ORDERINGS:
        left, right = _value(node.left, env), _value(node.comparators[0], env)
        return None if None in (left, right) else int(ORDERINGS[type(node.ops[0])](left, right))
    return None


def _integer(value) -> int | None:
    value = getattr(value, "value", value)
    return value if type(value) is int else None
