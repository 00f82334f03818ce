"""A launch's size told from its kernel's AST, before any IR is built (cpu_tiering.py).

Tiering runs a small first launch of a specialization in the interpreter. Deciding so from the
kernel's TTIR costs the frontend and the TTIR pipeline (4 ms for a small kernel, 25-60 ms for
tutorial 06's attention, more than the interpreter takes to run its smallest test): a test
suite launching each of its kernels once paid it for every kernel. The AST, the launch's
constexprs, arguments and grid tell most small launches apart at once: the largest block is
read from the values' shapes (ast_shapes.py), or, where that reading cannot tell, bounded by the
largest size the kernel names (a constexpr, an integer in a call that makes a shape) to the
power of the most dimensions it writes (`x[:, None]`, a shape's list); the loop bodies a
program runs are counted by walking the kernel with the launch's values (loop_runs.py). The
launch then runs in the interpreter and the whole compile goes to the background
(cpu_compile_from_source.py).

Only a kernel whose every path the interpreter types as the frontend does is read so
(kernel_facts.py says which): another, or a launch past ttir_work.is_small's limits, is decided
from its TTIR as before (`small_before_ir` answers None), and the frontend refuses it at the
launch. A body no program of the launch runs is one the frontend types and the interpreter does
not: such a launch is told apart (`Verdict.SMALL_WITH_A_LOOP_UNRUN`), and the frontend alone
runs before it. Where the interpreted launch fails, the frontend runs first too
(cpu_compile_from_source.py), so the error a compiled launch raises is raised.
"""

from __future__ import annotations

import ast
import enum
import math
import re

from ..frontend.source import function_source
from . import ast_shapes, cpu_tiering, kernel_facts
from .kernel_facts import Unreadable
from .loop_runs import (
    call_parameters,
    closure_of,
    constant_value,
    jit_function_of,
    loop_runs,
    resolve,
)


class Verdict(enum.IntEnum):
    """What the AST says of a launch (false only when LARGE)."""

    LARGE = 0  # or not told: decided from the TTIR
    SMALL = 1  # the interpreter runs it
    # Small, but a loop's body runs in no program of it: the interpreter does not type that
    # body, which the frontend does, so the frontend runs first (cpu_compile_from_source.py).
    SMALL_WITH_A_LOOP_UNRUN = 2


def small_before_ir(jit_function, constexprs: dict, signature: dict | None = None):
    """A test `(arguments, grid) -> Verdict` of whether a launch of `jit_function` with these
    `constexprs` (a specialization's) is small enough for the interpreter, told from the ASTs
    alone; None where they do not tell (a launch then builds its TTIR to decide). The test
    answers LARGE too where the AST does not tell the launch's loop trips (loop_runs.py).
    `signature` (a specialization's, by parameter) gives host tensor descriptors' blocks."""
    try:
        block, operations = _estimate(jit_function, constexprs, _descriptor_blocks(signature))
    except Unreadable:
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


def _estimate(jit_function, constexprs: dict, descriptors=None) -> tuple[int, int]:
    """(elements of the largest block at most, operations at least). A block's dimensions
    are powers of two, named in shape calls: the largest block is taken as the largest of a
    size alone, a shape written out, and the product of the `rank` largest sizes given more
    dimensions (`tl.arange(0, M)[:, None] * tl.arange(0, N)[None, :]` is M*N; where something
    else is, `offsets[:, None]`, any size may be one), the largest repeated where there are
    fewer (`offsets[:, None] * offsets[None, :]` of one `tl.arange(0, B)` is B*B). A jit
    function's sizes are read with the constexprs each call of it binds (`_contexts`), and
    its operations counted once per such call, as the TTIR inlines each (a dead branch's
    operations counted too, the estimate stays below the TTIR's count: an AST operation is
    one or more of the TTIR's)."""
    env = known_constexprs(constexprs)
    kernel = getattr(jit_function, "fn", jit_function)
    reached = _reached(kernel, constexprs)
    read = facts_of(kernel, constexprs, reached)
    contexts = _contexts(kernel, constexprs, env, read)
    called = {fn for fn, _ in contexts}
    contexts += [(fn, {}) for fn in reached if fn not in called]  # (reached through a value)
    sizes, expanded, shapes, rank = [], [], [], 1
    for fn, scope in contexts:
        facts = read[fn]
        sizes += _dimensions(facts.sizes, scope)
        expanded += _dimensions(facts.sizes if facts.spread else facts.expanded, scope)
        shapes += [[_value(e, scope) for e in shape] for shape in facts.shapes]
        for shape in facts.one_by_one:  # (an entry not told, the reshaped tensor say, left out)
            shapes.append([v for v in (_value(e, scope) for e in shape) if v])
        rank = max(rank, facts.rank)
    largest = max(sizes or [max([1, *(v for v in env.values() if type(v) is int)])])
    expanded = sorted(expanded) or [largest]
    expanded += [expanded[-1]] * (rank - len(expanded))
    blocks = [largest, math.prod(expanded[-rank:])]
    blocks += [math.prod(largest if d is None else max(d, 1) for d in shape) for shape in shapes]
    descriptors = descriptors or {}
    blocks += [math.prod(shape) for shape in descriptors.values()]
    precise = _largest_block(kernel, constexprs, env, read, descriptors)
    return max(blocks) if precise is None else precise, sum(
        read[fn].operations for fn, _ in contexts
    )


def known_constexprs(constexprs: dict) -> dict:
    """The constexprs whose values the readings keep (`_known`), by name."""
    return {k: v for k, v in ((k, _known(v)) for k, v in constexprs.items()) if v is not None}


def facts_of(kernel, constexprs: dict, reached=None) -> dict:
    """kernel_facts.facts of the kernel and of every jit function it reaches (`reached`, else
    found); Unreadable where one is not read, or reads a global the frontend would not."""
    read, names = {}, frozenset(constexprs)
    for fn in reached or _reached(kernel, constexprs):
        read[fn] = kernel_facts.facts(fn, names) if fn is kernel else kernel_facts.facts(fn)
        if read[fn] is None:
            raise Unreadable
        source = function_source(fn)  # (a global the interpreter would read, the frontend not)
        if source.is_user and source.forbidden_global() is not None:
            raise Unreadable
    return read


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


def _contexts(kernel, constexprs: dict, env: dict, read: dict) -> list:
    """(function, the integers, booleans and strings its constexprs are): the kernel with `env`, and
    each jit function a call names outside the branches its constexprs rule out, parameters
    bound from the call's arguments as the caller knows them, transitively; a function called
    with other values is read once per set of them."""
    found, pending, seen = [], [(kernel, env)], set()
    while pending:
        fn, scope = pending.pop()
        scope = _with_bindings(read[fn], scope)
        key = (fn, tuple(sorted(scope.items())))
        if key in seen:
            continue
        seen.add(key)
        found.append((fn, scope))
        if len(found) > _CONTEXTS:
            raise Unreadable
        for call in _live_calls(function_source(fn).definition.body, scope):
            callee = _callee(fn, call.func, kernel, constexprs)
            if callee is not None and callee in read:
                pending.append((callee, _bound(callee, call, scope)))
    return found


def _largest_block(kernel, constexprs, env: dict, read: dict, descriptors: dict) -> int | None:
    """The largest block of the launch from its values' shapes (ast_shapes.py; `descriptors`
    the host tensor descriptors' blocks by parameter), or None where the reading cannot
    tell."""

    def callee_of(fn, func):
        callee = _callee(fn, func, kernel, constexprs)
        return callee if callee in read else None

    def is_language(fn, func):
        return _language(resolve(func, _names_of(fn, kernel, constexprs)))

    reading = ast_shapes.Reading(
        lambda fn: function_source(fn).definition,
        callee_of,
        is_language,
        lambda fn, scope: _with_bindings(read[fn], scope),
        _bound,
    )
    try:
        reading.kernel(kernel, env, descriptors)
    except Exception:  # Incomplete, or code the frontend will refuse with its own error: an
        return None  # estimate never fails a launch
    return reading.largest


def _descriptor_blocks(signature: dict | None) -> dict:
    """The block shape of each tensor descriptor parameter of a signature
    (`tensordesc<fp16[64, 32], zero>` -> (64, 32))."""
    found = {}
    for name, kind in (signature or {}).items():
        match = _DESCRIPTOR.match(kind) if isinstance(kind, str) else None
        if match:
            found[name] = tuple(int(size) for size in match.group(1).split(","))
    return found


_DESCRIPTOR = re.compile(r"tensordesc<\s*\w+\s*\[([\d,\s]+)\]")


def _callee(fn, func, kernel, constexprs: dict):
    """The Python function of the jit function a call in `fn` names (None: none)."""
    return jit_function_of(resolve(func, _names_of(fn, kernel, constexprs)))


def _names_of(fn, kernel, constexprs: dict) -> dict:
    """What names in `fn` hold: its globals and closure, and the kernel's constexprs."""
    return {**fn.__globals__, **closure_of(fn), **(constexprs if fn is kernel else {})}


def _language(value) -> bool:
    """Whether `value` is one of the language's functions."""
    module = getattr(getattr(value, "fn", value), "__module__", None) or ""
    return module == "naiad.language" or module.startswith("naiad.language.")


# The most (function, constexpr values) pairs a kernel's calls make for the estimate to read.
_CONTEXTS = 64


def _with_bindings(facts, scope: dict) -> dict:
    """`scope` and the values of the function's `NAME: tl.constexpr = ...` bindings."""
    scope = dict(scope)
    for name, expression in facts.bindings:  # `HALF: tl.constexpr = BLOCK // 2`
        value = _known(constant_value(expression, scope))
        if value is not None:
            scope[name] = value
    return scope


def _bound(callee, call: ast.Call, scope: dict) -> dict:
    """The integers, booleans and strings `call` gives `callee`'s parameters (its defaults
    where it gives none)."""
    bound = ((name, _known(value)) for name, value in call_parameters(callee, call, scope).items())
    return {name: value for name, value in bound if value is not None}


def _live_calls(body: list, scope: dict) -> list:
    """The calls `body` makes but in the branches of `if`s its constexprs (`scope`) rule out."""
    calls = []
    for statement in body:
        if isinstance(statement, ast.If):
            test = _known(constant_value(statement.test, scope))
            if test is not None:
                calls += _live_calls(statement.body if test else statement.orelse, scope)
                continue
        nodes = ast.walk(statement)
        if isinstance(statement, ast.If | ast.For):  # (their bodies: read as bodies)
            heads = [statement.test if isinstance(statement, ast.If) else statement.iter]
            nodes = (n for head in heads for n in ast.walk(head))
            calls += _live_calls(statement.body, scope) + _live_calls(statement.orelse, scope)
        calls += [n for n in nodes if isinstance(n, ast.Call)]
    return calls


def _names(fn) -> tuple:
    """The Name and Attribute nodes `fn`'s body reads (the jit functions it may reach); none
    where its source is unreadable (the frontend meets that error itself). Kept per code
    object, as kernel_facts.facts: the functions one `def` makes share them."""
    return kernel_facts.kept(fn.__code__, lambda: _read_names(fn))


def _read_names(fn) -> tuple:
    try:
        body = function_source(fn).definition.body
    except (TypeError, SyntaxError, OSError):
        return ()
    nodes = (n for statement in body for n in ast.walk(statement))
    return tuple(
        n for n in nodes if isinstance(n, ast.Name | ast.Attribute) and isinstance(n.ctx, ast.Load)
    )


def _value(node, env: dict) -> int | None:
    """The integer `node` is with these constexprs (None: not one this can tell)."""
    value = constant_value(node, env)
    return value if type(value) is int else None


# The constexpr values the readings keep (what sizes and the conditions on constexprs read).
_CONSTANT_TYPES = (int, bool, str)


def _known(value) -> int | bool | str | None:
    """`value` (a constexpr's) where it is an integer, a boolean or a string, else None."""
    value = getattr(value, "value", value)
    return value if type(value) in _CONSTANT_TYPES else None
