"""Rewrite a kernel's Python source so that running it as Python follows the compiler's semantics.

Running a kernel as plain Python would differ from compiling it in eleven places, each rewritten
here (positions are kept, so tracebacks, `print` and `breakpoint()` point at the user's own
lines):

- `x = 0` gives `x` the compiler's type (int32), so later `x += big` wraps as on the GPU;
- `for i in range(...)` yields typed induction variables (see `tl.range`);
- `a and b`, `a or b`, `not a` on tensors are elementwise logic, not Python truthiness;
- `a is b` compares the values of constexprs (`BLOCK is None` for a constexpr None);
- a chained comparison (`0 < x < 4`) on tensors is the elementwise `and` of its comparisons;
- `if` on a one-element block branches on its element, with a warning (if_conditions.py);
- a value assigned before a `for` / `while` loop and in its body must keep its kind;
- `assert cond, msg` is `tl.device_assert(cond, msg)` (checked in debug mode only);
- an attribute of a literal (`(10).type`, `(5, 6).type`) reads it as a constexpr or a `tl.tuple`;
- a name declared `d0: tl.constexpr` without a value keeps its next assignment a constexpr;
- a call whose result is dropped is refused where the callee is `must_use_result`.

Before the rewrite, the Python the compiler refuses (`try`, `break`, `lambda`, `yield`, ...) is
refused here too, at the same file:line:col (language/constructs.py).
"""

from __future__ import annotations

import ast
import collections
import textwrap

from ...language import constructs
from ...source_locations import source_lines

_RT = "__naiad_rt"
# Builtins whose calls by name go through `kernel_runtime.python_call`.
_UNWRAPPING_NAMES = frozenset(("len", "list", "float", "int", "getattr", "hasattr", "min", "max"))


def _rt(name: str, node: ast.AST) -> ast.Attribute:
    return ast.copy_location(ast.Attribute(ast.Name(_RT, ast.Load()), name, ast.Load()), node)


class _KernelTransformer(ast.NodeTransformer):
    def _call(self, name, node, *args):
        return ast.copy_location(ast.Call(_rt(name, node), list(args), []), node)

    def __init__(self):
        # Names declared `x: tl.constexpr` without a value, whose next assignment keeps a
        # compile-time value (Triton's pending annotations).
        self._declared: set = set()

    def visit_Assign(self, node):
        self.generic_visit(node)
        kept = self._kept(node.targets[0]) if len(node.targets) == 1 else None
        if _any_kept(kept):
            node.value = self._call("assigned_as", node.value, node.value, ast.Constant(kept))
        else:
            node.value = self._call("assigned", node.value, node.value)
        return node

    def visit_NamedExpr(self, node):
        """`(x := value)` assigns as `x = value` does."""
        self.generic_visit(node)
        if self._kept(node.target):
            node.value = self._call("assigned_as", node.value, node.value, ast.Constant(True))
        else:
            node.value = self._call("assigned", node.value, node.value)
        return node

    def _kept(self, target):
        """For each name of `target` (nested as it is), whether it was declared constexpr;
        None where a part is not a name or a tuple of them. Declarations are used up."""
        if isinstance(target, ast.Name):
            kept = target.id in self._declared
            self._declared.discard(target.id)
            return kept
        if isinstance(target, ast.Tuple | ast.List) and self._declared:
            parts = tuple(self._kept(e) for e in target.elts)
            return None if None in parts else parts
        return None

    def visit_AnnAssign(self, node):
        # `x: tl.constexpr = ...` keeps a compile-time constant; any other annotation is a value.
        self.generic_visit(node)
        declared = node.value is None and isinstance(node.target, ast.Name)
        if declared and _names_constexpr(node.annotation):
            self._declared.add(node.target.id)
        if node.value is not None:
            kind = "assigned_constexpr" if _names_constexpr(node.annotation) else "assigned"
            node.value = self._call(kind, node.value, node.value)
        return node

    def visit_For(self, node):
        self.generic_visit(node)
        it = node.iter
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range":
            it.func = _rt("range", it.func)
        return self._check_loop_carried(node)

    def visit_While(self, node):
        self.generic_visit(node)
        return self._check_loop_carried(node)

    def visit_If(self, node):
        self.generic_visit(node)
        node.test = self._call("if_condition", node.test, node.test)
        return node

    def _check_loop_carried(self, node):
        """A value assigned before a loop and in it keeps its kind, as the compiler demands:
        snapshot the names the body assigns, check them after each iteration and the loop. A
        `for`'s iterable is evaluated first, once, as Python does: a loop the compiler unrolls
        (over `tl.static_range` or a sequence) carries nothing (`loop_carried`)."""
        targets = (
            {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
            if isinstance(node, ast.For)
            else set()
        )
        names = sorted(
            {
                n.id
                for stmt in node.body
                for n in ast.walk(stmt)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            }
            - targets
        )
        if not names:
            return node
        self._loops = getattr(self, "_loops", 0) + 1
        var = f"__naiad_loop{self._loops}"
        scope = ast.Call(ast.Name("locals", ast.Load()), [], [])
        carried = [scope, ast.Tuple([ast.Constant(n) for n in names], ast.Load())]
        before = []
        if isinstance(node, ast.For):  # what it iterates decides whether it carries values
            iterated = f"__naiad_iterated{self._loops}"
            before.append(ast.Assign([ast.Name(iterated, ast.Store())], node.iter))
            node.iter = ast.copy_location(ast.Name(iterated, ast.Load()), node.iter)
            carried.append(ast.Name(iterated, ast.Load()))
        before.append(
            ast.Assign([ast.Name(var, ast.Store())], self._call("loop_carried", node, *carried))
        )
        check = ast.Expr(self._call("check_loop_carried", node, ast.Name(var, ast.Load()), scope))
        node.body.append(ast.copy_location(check, node.body[-1]))
        return [*(ast.copy_location(b, node) for b in before), node, ast.copy_location(check, node)]

    def visit_Call(self, node):
        # A call of one of Python's builtins that Triton gives constexprs' values (by name:
        # `kernel_runtime.python_call` checks that the name is still the builtin).
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in _UNWRAPPING_NAMES:
            node.args = [node.func, *node.args]
            node.func = _rt("python_call", node.func)
        return node

    def visit_Attribute(self, node):
        # Only literal displays: any other value is already what the compiler would see.
        self.generic_visit(node)
        if isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Constant | ast.Tuple):
            return self._call("attribute_of", node, node.value, ast.Constant(node.attr))
        return node

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        name = "logical_and" if isinstance(node.op, ast.And) else "logical_or"
        result = node.values[0]
        for value in node.values[1:]:
            thunk = ast.copy_location(ast.Lambda(_no_args(), value), value)
            result = self._call(name, node, result, thunk)
        return result

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return self._call("logical_not", node, node.operand)
        return node

    def visit_Compare(self, node):
        # `x is None` compares the values of constexprs, as the compiler does (`BLOCK is None`
        # holds for a constexpr parameter given None).
        # A chain (`0 < x < 4`) joins its comparisons elementwise where one is a tensor, as
        # the compiler does, where Python's `and` would ask a tensor for its truth.
        self.generic_visit(node)
        if len(node.ops) > 1:
            names = ast.Constant(tuple(type(op).__name__ for op in node.ops))
            thunks = [ast.copy_location(ast.Lambda(_no_args(), c), c) for c in node.comparators]
            return self._call("compared", node, node.left, names, *thunks)
        if isinstance(node.ops[0], (ast.Is, ast.IsNot)):
            name = "is_" if isinstance(node.ops[0], ast.Is) else "is_not"
            return self._call(name, node, node.left, node.comparators[0])
        return node

    def visit_Expr(self, node):
        # A call whose result is dropped is refused for a function marked `must_use_result`,
        # as the compiler refuses it: a check before the call (the call itself is left as it
        # is, so `breakpoint()` still stops in the kernel's frame).
        call = node.value
        if not (isinstance(call, ast.Call) and _is_lookup(call.func)):
            self.generic_visit(node)
            return node
        spelled = ast.Constant(ast.unparse(call.func))
        check = ast.Expr(self._call("check_dropped_result", call, spelled, call.func))
        self.generic_visit(node)
        return [ast.copy_location(check, node), node]

    def visit_Assert(self, node):
        self.generic_visit(node)
        msg = node.msg if node.msg is not None else ast.Constant("")
        call = self._call("device_assert", node, node.test, msg)
        return ast.copy_location(ast.Expr(call), node)

    def visit_FunctionDef(self, node):
        # The kernel itself: a nested definition was refused before the rewrite.
        node.decorator_list = []
        self.generic_visit(node)
        return node


def _is_lookup(node) -> bool:
    """A name, or attributes of one: what the compiler checks a dropped call's callee of."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _any_kept(kept) -> bool:
    if isinstance(kept, tuple):
        return any(_any_kept(k) for k in kept)
    return kept is True


def _names_constexpr(annotation) -> bool:
    if isinstance(annotation, ast.Attribute):
        return annotation.attr == "constexpr"
    if isinstance(annotation, ast.Name):
        return annotation.id == "constexpr"
    return isinstance(annotation, ast.Constant) and annotation.value == "constexpr"


def _no_args():
    return ast.arguments(
        posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]
    )


def _shift_columns(tree: ast.AST, indent: int):
    if not indent:
        return
    for node in ast.walk(tree):
        if hasattr(node, "col_offset"):
            node.col_offset += indent
        if getattr(node, "end_col_offset", None) is not None:
            node.end_col_offset += indent


def rewrite(fn, runtime):
    """A function equivalent to `fn` under the compiler's semantics, with `runtime` providing
    `assigned`, `assigned_constexpr`, `range`, `logical_and`, `logical_or`, `logical_not`, `is_`,
    `is_not`, `compared`, `loop_carried`, `check_loop_carried` and `device_assert`."""
    code = _maker_code(fn)
    namespace: dict = {}
    exec(code, fn.__globals__, namespace)
    cells = [c.cell_contents for c in (fn.__closure__ or ())]
    rewritten = namespace["__naiad_make"](runtime, *cells)
    rewritten.__defaults__ = fn.__defaults__
    rewritten.__kwdefaults__ = fn.__kwdefaults__
    return rewritten


# The rewritten code, by the code object of the function rewritten: the functions one `def`
# makes each time it runs (a kernel defined in a parametrized test: 556 kernels of 141 code
# objects in Triton's test_core subset) share their source, and so its rewriting (parsed,
# transformed and compiled: about a millisecond); each gets its own globals and cells.
_MADE: collections.OrderedDict = collections.OrderedDict()
MADE_KEPT = 128


def _maker_code(fn):
    """The code of a module defining `__naiad_make(runtime, *cells)`, which returns `fn`
    rewritten (kept for its code object)."""
    found = _MADE.get(fn.__code__)
    if found is not None:
        return found
    lines, first_line = source_lines(fn)
    source = "".join(lines)
    dedented = textwrap.dedent(source)
    indent = len(lines[0]) - len(lines[0].lstrip())
    # Parsed below blank lines up to its own, so that line numbers are the file's.
    tree = ast.parse("\n" * (first_line - 1) + dedented)
    _shift_columns(tree, indent)
    func = tree.body[0]
    if not isinstance(func, ast.FunctionDef):
        raise TypeError(
            f"@naiad.jit needs a function defined with `def`, got {type(func).__name__}"
        )
    # Before anything runs: Python the compiler refuses is refused here too (constructs.py).
    constructs.check_function(func, fn.__code__.co_filename, fn.__name__)
    func = _KernelTransformer().visit(func)
    free = list(fn.__code__.co_freevars)
    maker = ast.FunctionDef(
        name="__naiad_make",
        args=ast.arguments(
            posonlyargs=[],
            args=[ast.arg(_RT)] + [ast.arg(name) for name in free],
            vararg=None,
            kwonlyargs=[],
            kw_defaults=[],
            kwarg=None,
            defaults=[],
        ),
        body=[func, ast.Return(ast.Name(func.name, ast.Load()))],
        decorator_list=[],
        returns=None,
    )
    if "type_params" in ast.FunctionDef._fields:
        maker.type_params = []
    ast.copy_location(maker, func)
    module = ast.fix_missing_locations(ast.Module(body=[maker], type_ignores=[]))
    code = compile(module, fn.__code__.co_filename, "exec")
    _MADE[fn.__code__] = code
    while len(_MADE) > MADE_KEPT:
        _MADE.popitem(last=False)
    return code
