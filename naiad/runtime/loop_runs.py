"""How many loop bodies a launch's programs run, read from the kernel's AST with the launch's
integer arguments and grid, before any IR is built (cpu_first_launch.py).

Tiering interprets a launch only when its work is small, and a loop's trip count mostly comes
from the launch (`for start_n in tl.range(lo, hi, BLOCK_N)`, `hi` made from `tl.program_id(0)`
and an argument): the kernel's statements are walked in order as a program would run them,
tracking the integer (and compile-time) values of its names: constants, constexprs, the
launch's integer arguments, program ids and counts, the arithmetic between them, `if`s whose
condition is known (both branches where it is not), and the jit functions it calls, their
parameters bound from the call. A name a loop's body assigns is unknown from the loop on. A
program id is taken at each end of the grid (as loop_trips.py takes it from the TTIR): a loop
counts the larger of its two trip counts.

The walk also says whether every loop's body runs in a program at least once, per call path (a
function called twice, with different constexprs, has its loops counted apart). The frontend
types a loop's body even where it never runs; the interpreter checks what the body does only
by running it, so a launch whose loops may not all run is not decided here.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import operator
import types

from .. import language as tl
from .. import utils
from ..frontend.source import function_source

UNKNOWN = object()  # a value the walk cannot tell (None is a value: `if x is None`)
_DEPTH = 16  # calls deep: past it a launch is not decided here
_BOUNDS = frozenset({"arg1", "arg2", "step"})  # `tl.range`'s bounds given by keyword

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul}
_BINARY |= {ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.BitAnd: operator.and_}
_BINARY |= {ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.LShift: operator.lshift}
_BINARY |= {ast.RShift: operator.rshift}
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt}
_COMPARE |= {ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}
_COMPARE |= {ast.Is: operator.is_, ast.IsNot: operator.is_not}
# Values a condition may compare: what constexprs hold (dtypes among them).
_PLAIN = (bool, int, float, str, type(None), tl.dtype)


class _Unreadable(Exception):
    """The walk cannot tell a loop's trip count."""


def loop_runs(kernel, constexprs: dict, arguments: dict, grid: tuple):
    """(the loop bodies a program of this launch runs at most, whether every loop's body runs
    at least once in a program), or None where the AST does not tell. `kernel` is the Python
    function, `constexprs` the specialization's, `arguments` the launch's by parameter name,
    `grid` its three extents."""
    ends = [(0, 0, 0), tuple(max(extent - 1, 0) for extent in grid)]
    most, trips = 0, {}
    for pid in dict.fromkeys(ends):
        walk = _Walk(pid, grid)
        env = {name: _plain(value) for name, value in arguments.items()}
        env |= {name: _plain(value) for name, value in constexprs.items()}
        try:
            walk.function(kernel, env, 1, ())
        except _Unreadable:
            return None
        most = max(most, walk.runs)
        for key, count in walk.trips.items():
            trips[key] = max(trips.get(key, 0), count)
    return most, all(trips.values())


def constant_value(node, env: dict):
    """The value an expression has with these names' values alone (UNKNOWN where it does not
    tell): constants, arithmetic, comparisons, conditional expressions."""
    return _Walk((0, 0, 0), (1, 1, 1)).value(node, env, {})


def call_parameters(callee, call: ast.Call, env: dict) -> dict:
    """`callee`'s parameters bound from `call` (its defaults where the call gives none), each
    argument's value told from these names' values alone (`constant_value`; UNKNOWN where it
    does not tell); {} where the call cannot be bound (`*arguments`, an unknown keyword)."""
    try:
        return _Walk((0, 0, 0), (1, 1, 1)).parameters(callee, call, env, {})
    except _Unreadable:
        return {}


def _plain(value):
    """What the walk keeps of a value: a constexpr's, a jit function; else UNKNOWN."""
    value = getattr(value, "value", value)  # a constexpr's
    if isinstance(value, _PLAIN) or jit_function_of(value) is not None:
        return value
    return UNKNOWN


class _Walk:
    """One program's walk (`pid`): loop bodies run (`runs`), trips per loop and call path."""

    def __init__(self, pid: tuple, grid: tuple):
        self.pid, self.grid = pid, grid
        self.runs = 0
        self.trips: dict = {}

    def function(self, fn, env: dict, runs: int, path: tuple) -> None:
        if len(path) > _DEPTH:
            raise _Unreadable
        scope = {**fn.__globals__, **closure_of(fn)}
        self.block(function_source(fn).definition.body, env, scope, runs, path)

    def block(self, body: list, env: dict, scope: dict, runs: int, path: tuple) -> bool:
        """Walk `body` up to a return; whether it returned (`any` stops there)."""
        return any(self.statement(statement, env, scope, runs, path) for statement in body)

    def statement(self, node, env, scope, runs, path) -> bool:
        if isinstance(node, ast.Raise):  # (the language's own functions: a refused case)
            return True
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.Expr | ast.Return):
            if node.value is not None:
                self.calls(node.value, env, scope, runs, path)
            if isinstance(node, ast.Return):
                return True
            if isinstance(node, ast.AugAssign):
                update = ast.BinOp(ast.Name(_name(node.target), ast.Load()), node.op, node.value)
                _bind(node.target, self.value(update, env, scope), env)
            elif not isinstance(node, ast.Expr) and node.value is not None:
                value = self.value(node.value, env, scope)
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    _bind(target, value, env)
            return False
        if isinstance(node, ast.If):
            return self.branch(node, env, scope, runs, path)
        if isinstance(node, ast.For):
            self.loop(node, env, scope, runs, path)
            return False
        if isinstance(node, ast.Pass):
            return False
        raise _Unreadable

    def branch(self, node: ast.If, env, scope, runs, path) -> bool:
        test = self.value(node.test, env, scope)
        if test is not UNKNOWN:
            return self.block(node.body if test else node.orelse, env, scope, runs, path)
        taken, other = dict(env), dict(env)
        returned = self.block(node.body, taken, scope, runs, path)
        returned &= self.block(node.orelse, other, scope, runs, path)
        env.update({k: v if _same(other.get(k, UNKNOWN), v) else UNKNOWN for k, v in taken.items()})
        env.update({k: UNKNOWN for k in other.keys() - taken.keys()})
        return returned

    def loop(self, node: ast.For, env, scope, runs, path) -> None:
        call = node.iter
        if not isinstance(call, ast.Call) or {k.arg for k in call.keywords} & _BOUNDS:
            raise _Unreadable
        bounds = [self.value(a, env, scope) for a in call.args]
        if any(type(b) is not int for b in bounds) or bounds[2:] == [0]:
            raise _Unreadable
        trips = len(range(*bounds))
        key = (*path, id(node))
        self.trips[key] = self.trips.get(key, 0) + trips * runs
        self.runs += trips * runs
        for name in stored_names(node):
            env[name] = UNKNOWN
        self.block(node.body, env, scope, runs * trips, path)

    def calls(self, expression, env, scope, runs, path) -> None:
        """Walk the jit functions `expression` calls, their parameters bound from the call."""
        for node in ast.walk(expression):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Name) and func.id in env:  # a parameter: a jit function?
                if env[func.id] is UNKNOWN:
                    raise _Unreadable
                callee = jit_function_of(env[func.id])
            else:
                callee = jit_function_of(resolve(func, scope))
            if callee is not None:
                bound = self.parameters(callee, node, env, scope)
                self.function(callee, bound, runs, (*path, id(node)))

    def parameters(self, callee, call: ast.Call, env, scope) -> dict:
        try:
            signature = inspect.signature(callee)
        except (TypeError, ValueError) as error:
            raise _Unreadable from error
        bound = {
            name: _plain(p.default) if p.default is not p.empty else UNKNOWN
            for name, p in signature.parameters.items()
        }
        names = list(signature.parameters)
        for index, argument in enumerate(call.args):
            if isinstance(argument, ast.Starred) or index >= len(names):
                raise _Unreadable
            bound[names[index]] = self.value(argument, env, scope)
        for keyword in call.keywords:
            if keyword.arg is None or keyword.arg not in bound:
                raise _Unreadable
            bound[keyword.arg] = self.value(keyword.value, env, scope)
        return bound

    def value(self, node, env: dict, scope: dict):
        """The value `node` has in this program (UNKNOWN where the walk cannot tell)."""
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            return _plain(scope.get(node.id, UNKNOWN))
        if isinstance(node, ast.Attribute):
            root = node
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in env:  # `x.shape`, `x.dtype`
                return UNKNOWN
            return _plain(resolve(node, scope))
        if isinstance(node, ast.Tuple):
            return tuple(self.value(e, env, scope) for e in node.elts)
        if isinstance(node, ast.Call):
            return self.called(node, env, scope)
        return self.operation(node, env, scope)

    def operation(self, node, env, scope):
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY | {ast.Pow: None}:
            left, right = self.value(node.left, env, scope), self.value(node.right, env, scope)
            return _arithmetic(node.op, left, right)
        if isinstance(node, ast.UnaryOp):
            operand = self.value(node.operand, env, scope)
            if isinstance(node.op, ast.Not) and operand is not UNKNOWN:
                return not operand
            return -operand if isinstance(node.op, ast.USub) and _integer(operand) else UNKNOWN
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
            left = self.value(node.left, env, scope)
            right = self.value(node.comparators[0], env, scope)
            if UNKNOWN in (left, right):
                return UNKNOWN
            try:
                return bool(_COMPARE[type(node.ops[0])](left, right))
            except TypeError:  # (`None > 0`: the frontend's error to raise, not the walk's)
                return UNKNOWN
        if isinstance(node, ast.BoolOp):
            return self.logic(node, env, scope)
        if isinstance(node, ast.IfExp):
            test = self.value(node.test, env, scope)
            if test is UNKNOWN:
                return UNKNOWN
            return self.value(node.body if test else node.orelse, env, scope)
        return UNKNOWN

    def logic(self, node: ast.BoolOp, env, scope):
        for operand in node.values:
            value = self.value(operand, env, scope)
            if value is UNKNOWN:
                return UNKNOWN
            if bool(value) is isinstance(node.op, ast.Or):
                return value
        return value

    def called(self, node: ast.Call, env, scope):
        """A call's value: program ids and counts, `cdiv`, the hints that return their
        argument, `min`/`max`, a scalar's `.to(...)`."""
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "to" and not node.keywords:
            value = self.value(func.value, env, scope)
            return value if _integer(value) else UNKNOWN
        if isinstance(func, ast.Name) and func.id in env:
            return UNKNOWN
        rule = _RULES.get(resolve(func, scope))
        if rule is None or any(isinstance(a, ast.Starred) for a in node.args):
            return UNKNOWN
        arguments = [self.value(a, env, scope) for a in node.args]
        arguments += [self.value(k.value, env, scope) for k in node.keywords if k.arg == "axis"]
        return rule(self, arguments)


def _arithmetic(op, left, right):
    if not (_integer(left) and _integer(right)):
        return UNKNOWN
    if type(op) in (ast.FloorDiv, ast.Mod) and right == 0:
        return UNKNOWN
    if type(op) in (ast.Pow, ast.LShift) and not 0 <= right <= 64:
        return UNKNOWN
    if isinstance(op, ast.Pow):
        return left**right
    return _BINARY[type(op)](left, right)


def _integer(value) -> bool:
    return type(value) in (int, bool)


def _axis(walk, arguments, extents):
    if not arguments or type(arguments[0]) is not int or not 0 <= arguments[0] < 3:
        return UNKNOWN
    return extents[arguments[0]]


def _first(walk, arguments):
    return arguments[0] if arguments and _integer(arguments[0]) else UNKNOWN


def _both(combine):
    def rule(walk, arguments):
        if len(arguments) != 2 or not all(_integer(a) for a in arguments):
            return UNKNOWN
        left, right = arguments
        if combine is utils.cdiv and right == 0:
            return UNKNOWN
        return combine(left, right)

    return rule


_RULES = {
    tl.program_id: lambda walk, arguments: _axis(walk, arguments, walk.pid),
    tl.num_programs: lambda walk, arguments: _axis(walk, arguments, walk.grid),
    tl.cdiv: _both(utils.cdiv),
    utils.cdiv: _both(utils.cdiv),
    tl.multiple_of: _first,
    tl.max_contiguous: _first,
    tl.max_constancy: _first,
    min: _both(min),
    max: _both(max),
    tl.minimum: _both(min),
    tl.maximum: _both(max),
}


def _same(one, other) -> bool:
    """Whether a name holds the same value on both paths of an `if` (`is` alone would call two
    equal integers past 256 different)."""
    return one is other or (type(one) is type(other) and one is not UNKNOWN and one == other)


def _bind(target, value, env: dict) -> None:
    """Assign `value` to `target`: names, tuples of them (a tuple value's parts); an
    attribute or an element assigned leaves the names it reads as they are."""
    if isinstance(target, ast.Name):
        env[target.id] = value
    elif isinstance(target, ast.Tuple | ast.List):
        parts = value if type(value) is tuple and len(value) == len(target.elts) else None
        for index, element in enumerate(target.elts):
            _bind(element, UNKNOWN if parts is None else parts[index], env)


def _name(target) -> str:
    if not isinstance(target, ast.Name):
        raise _Unreadable
    return target.id


def stored_names(loop: ast.For) -> set:
    """The names a loop assigns: its target's and its body's."""
    nodes = [loop.target, *loop.body]
    return {
        n.id
        for node in nodes
        for n in ast.walk(node)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


def jit_function_of(value):
    """The Python function of a jit function (None for anything else)."""
    value = getattr(value, "value", value)  # a constexpr holding one
    if not getattr(value, "__naiad_jit__", False):
        return None
    fn = getattr(value, "fn", value)
    return fn if isinstance(fn, types.FunctionType) else None


def resolve(node, scope: dict):
    """The object a Name or an attribute chain names (None if it names none; an object's
    attributes read without running its code: `helpers.twice`; Python's builtins)."""
    if isinstance(node, ast.Name):
        return scope[node.id] if node.id in scope else getattr(builtins, node.id, None)
    if not isinstance(node, ast.Attribute):
        return None
    base = resolve(node.value, scope)
    if isinstance(base, types.ModuleType):
        return getattr(base, node.attr, None)
    found = None if base is None else inspect.getattr_static(base, node.attr, None)
    return found.__func__ if isinstance(found, staticmethod) else found


def closure_of(fn) -> dict:
    """The names `fn`'s closure holds, with their values."""
    cells = fn.__closure__ or ()
    try:
        return dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in cells)))
    except ValueError:  # a cell not filled yet
        return {}
