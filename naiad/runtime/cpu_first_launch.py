"""A launch's size told from its kernel's AST, before any IR is built (cpu_tiering.py).

Tiering runs a small first launch of a specialization in the interpreter. Deciding so from the
kernel's TTIR costs the frontend and the TTIR pipeline (4 ms for a small kernel, 25-60 ms for
tutorial 06's attention, more than the interpreter takes to run its smallest test): a test
suite launching each of its kernels once paid it for every kernel. The AST, the launch's
constexprs, arguments and grid tell most small launches apart at once: the largest block is at
most the largest size the kernel names (a constexpr, an integer in a call that makes a shape)
to the power of the most dimensions it writes (`x[:, None]`, a shape's list), and the loop
bodies a program runs are counted by walking the kernel with the launch's values
(loop_runs.py). The launch then runs in the interpreter and the whole compile goes to the
background (cpu_compile_from_source.py).

Only a kernel whose every path the interpreter types as the frontend does is read so (`_read`):
the frontend alone checks what joins paths (an `if` on a tensor, several returns), and refuses
some Python the interpreter would run, so a kernel with any of those - or a `while`, a launch
past ttir_work.is_small's limits - is decided from its TTIR as before (`small_before_ir`
answers None), and the frontend refuses it at the launch. A loop's carried values the
interpreter checks as the frontend does, after each trip (interpreter/rewrite.py), so a loop is
read where no name bound only in it is read outside it. A body no program of the launch runs
is one the frontend types and the interpreter does not: such a launch is told apart
(`Verdict.SMALL_WITH_A_LOOP_UNRUN`), and the frontend alone runs before it. Where the
interpreted launch fails, the frontend runs first too (cpu_compile_from_source.py), so the
error a compiled launch raises is raised.

Reading the AST parses the source of the kernel and of the jit functions it names (the
frontend's `function_source`, kept per code object), here in the launching thread: the frontend
run later by the background worker finds them parsed and parses nothing (the worker may not:
source_locations.refusing_parses).
"""

from __future__ import annotations

import ast
import collections
import enum
import math
from dataclasses import dataclass

from ..frontend.source import function_source
from . import cpu_tiering
from .loop_runs import (
    closure_of,
    constant_value,
    jit_function_of,
    loop_runs,
    resolve,
    stored_names,
)

# Calls whose integer arguments are sizes of the block they make or view.
SHAPE_CALLS = frozenset(
    {"arange", "zeros", "full", "reshape", "view", "broadcast_to", "make_block_ptr"}
    | {"make_tensor_descriptor", "histogram", "zeros_like", "full_like"}
)
# The loops read: a range's trips come from loop_runs.py at the launch.
RANGES = frozenset({"range", "static_range"})


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
    operations: int  # its calls and operators (fewer than the TTIR's operations)
    bindings: tuple  # (name, expression) of each `NAME: tl.constexpr = ...`, in order


class Verdict(enum.IntEnum):
    """What the AST says of a launch (false only when LARGE)."""

    LARGE = 0  # or not told: decided from the TTIR
    SMALL = 1  # the interpreter runs it
    # Small, but a loop's body runs in no program of it: the interpreter does not type that
    # body, which the frontend does, so the frontend runs first (cpu_compile_from_source.py).
    SMALL_WITH_A_LOOP_UNRUN = 2


def small_before_ir(jit_function, constexprs: dict):
    """A test `(arguments, grid) -> Verdict` of whether a launch of `jit_function` with these
    `constexprs` (a specialization's) is small enough for the interpreter, told from the ASTs
    alone; None where they do not tell (a launch then builds its TTIR to decide). The test
    answers LARGE too where the AST does not tell the launch's loop trips (loop_runs.py)."""
    try:
        block, operations = _estimate(jit_function, constexprs)
    except _Unreadable:
        return None
    kernel = getattr(jit_function, "fn", jit_function)
    limit = max(cpu_tiering.SMALL_WORK, cpu_tiering.WORK_PER_OP * operations)

    def small(arguments: dict, grid: tuple) -> Verdict:
        programs = math.prod(grid)
        if programs > cpu_tiering.SMALL_PROGRAMS or programs * block > limit:
            return Verdict.LARGE
        runs = loop_runs(kernel, constexprs, arguments, grid)
        if runs is None:
            return Verdict.LARGE
        if programs * max(block, cpu_tiering.SMALL_BODY) * max(1, runs[0]) > limit:
            return Verdict.LARGE
        return Verdict.SMALL if runs[1] else Verdict.SMALL_WITH_A_LOOP_UNRUN

    return small


def _estimate(jit_function, constexprs: dict) -> tuple[int, int]:
    """(elements of the largest block at most, operations at least). A block's dimensions
    are powers of two, named in shape calls: the largest block is taken as the largest of a
    size alone, a shape written out, and the product of the `rank` largest sizes given more
    dimensions (`tl.arange(0, M)[:, None] * tl.arange(0, N)[None, :]` is M*N; where something
    else is, `offsets[:, None]`, any size may be one), the largest repeated where there are
    fewer (`offsets[:, None] * offsets[None, :]` of one `tl.arange(0, B)` is B*B)."""
    env = {k: v for k, v in ((k, _integer(v)) for k, v in constexprs.items()) if v is not None}
    kernel = getattr(jit_function, "fn", jit_function)
    sizes, expanded, shapes, rank, operations = [], [], [], 1, 0
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
        operations += facts.operations
    largest = max(sizes or [max([1, *env.values()])])
    expanded = sorted(expanded) or [largest]
    expanded += [expanded[-1]] * (rank - len(expanded))
    blocks = [largest, math.prod(expanded[-rank:])]
    blocks += [math.prod(largest if d is None else max(d, 1) for d in shape) for shape in shapes]
    return max(blocks), operations


def _dimensions(expressions, scope: dict) -> list:
    """The sizes of `expressions` that can be dimensions: known powers of two."""
    values = (_value(e, scope) for e in expressions)
    return [v for v in values if v is not None and 0 < v <= 1 << 31 and not v & (v - 1)]


def _reached(kernel, constexprs: dict) -> list:
    """The kernel's function and those of the jit functions its AST names or its constexprs
    hold, transitively (what the frontend compiles, but for names it cannot see here)."""
    found, pending = [], [kernel]
    pending += [jit_function_of(v) for v in constexprs.values()]
    while pending:
        fn = pending.pop()
        if fn is None or fn in found:
            continue
        found.append(fn)
        scope = {**fn.__globals__, **closure_of(fn)}
        pending += [jit_function_of(resolve(node, scope)) for node in _names(fn)]
    return found


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
        arguments = definition.args
        parameters = frozenset(
            a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)
        )
        return _read(definition.body, dynamic, _STATEMENTS + _EXPRESSIONS, parameters)
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


def _read(body: list, dynamic: frozenset, allowed: tuple, parameters=frozenset()) -> _Function:
    sizes, shapes, spread, rank, operations = [], [], False, 1, 0
    given_dimensions = set()  # the shape calls given more dimensions
    call_sizes = {}  # a shape call's size arguments, by the call's id
    ranges = _ranges_named(body)  # `offs = start + tl.arange(0, B)`: offs[:, None] is B's
    tails = _tail_returns(body, dynamic)
    stack = list(body)
    while stack:
        node = stack.pop()
        if not isinstance(node, allowed) and id(node) not in tails:
            raise _Unreadable
        if isinstance(node, ast.If | ast.IfExp) and not _static(node.test, dynamic):
            raise _Unreadable
        if isinstance(node, ast.BoolOp) and not _static(node, dynamic):
            raise _Unreadable
        if isinstance(node, ast.Call) and not isinstance(node.func, ast.Name | ast.Attribute):
            raise _Unreadable  # (`table[i](x)`: a callee the reading cannot follow)
        if isinstance(node, ast.For):
            _check_loop(node, body, parameters)
        elif isinstance(node, ast.Call) and _called(node) in SHAPE_CALLS:
            for argument in [*node.args, *(k.value for k in node.keywords)]:
                if isinstance(argument, ast.List | ast.Tuple):
                    shapes.append(tuple(argument.elts))
                    sizes += argument.elts
                else:
                    sizes.append(argument)
                    call_sizes.setdefault(id(node), []).append(argument)
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple):
            rank = max(rank, len(node.slice.elts))
            value = node.value
            if isinstance(value, ast.Name) and value.id in ranges:
                value = ranges[value.id]
            if isinstance(value, ast.Call) and _called(value) in SHAPE_CALLS:
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
    sizes, expanded, shapes = map(tuple, (sizes, expanded, shapes))
    return _Function(sizes, expanded, shapes, spread, rank, operations, tuple(bindings))


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
        calls = [n for n in inside if isinstance(n, ast.Call) and _called(n) in SHAPE_CALLS]
        widened = any(isinstance(n, ast.Subscript) for n in inside)
        if len(calls) == 1 and _called(calls[0]) == "arange" and not widened:
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
    if loop.orelse or not (isinstance(iterated, ast.Call) and _called(iterated) in RANGES):
        raise _Unreadable
    if not 1 <= len(iterated.args) <= 3 or any(
        not isinstance(k.value, ast.Name | ast.Constant) for k in iterated.keywords
    ):
        raise _Unreadable
    inside = {id(n) for n in ast.walk(loop)}
    outside = [n for statement in body for n in ast.walk(statement) if id(n) not in inside]
    names = [n for n in outside if isinstance(n, ast.Name)]
    bound_elsewhere = parameters | {n.id for n in names if isinstance(n.ctx, ast.Store)}
    loaded = {n.id for n in names if isinstance(n.ctx, ast.Load)}
    if (stored_names(loop) - bound_elsewhere) & loaded:
        raise _Unreadable


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
    if isinstance(test, ast.Call) and _called(test) == "isinstance":
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


def _called(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)


def _value(node, env: dict) -> int | None:
    """The integer `node` is with these constexprs (None: not one this can tell)."""
    value = constant_value(node, env)
    return value if type(value) is int else None


def _integer(value) -> int | None:
    value = getattr(value, "value", value)
    return value if type(value) is int else None
