"""The code generator: one jit function's AST walked into TTIR, through the semantic layer.

`CodeGenerator` visits statements and expressions (never bytecode) with a scope of names to
values: `tensor`s (IR values with their language types), `constexpr`s and plain Python objects.
Python's own operators on tensors reach the active `Semantic`, exactly as in the interpreter; this
module adds what the interpreter leaves to Python: names, assignment, statements and located
errors. Expressions are in expressions.py, `if`/`for`/`while`/`return` in control_flow.py, calls
in calls.py.

A function's body has one of two meanings, as in the interpreter. A user's `@naiad.jit`
function has the meaning the interpreter gives it by rewriting its source (rewrite.py): `x = 0`
makes an int32, `for i in range(...)` is a loop with a typed induction variable, `and`/`or`/`not`
on tensors are elementwise, `x is None` compares constexpr values, `assert` is
`tl.device_assert`. The language's own library (`naiad.language`'s `@jit` functions) runs
unrewritten in the interpreter, so here it keeps plain Python meaning: numbers stay numbers and
`range` unrolls.

Every op is stamped with the location of the node being visited (absolute file line and
column; `NameLoc("x", ...)` inside `x = ...`, as Triton). An exception becomes a located
`CompilationError` once, at the innermost node in the user's files (Naiad's own library reports at
the user's call), or inside a plain Python helper the kernel called.
"""

from __future__ import annotations

import ast
import builtins

from .. import errors, ir
from ..language import constructs, core
from ..language import dtypes as t
from ..language.active_semantic import unused_result_error
from .calls import CallsMixin
from .control_flow import NOT_RETURNED, ControlFlowMixin
from .expressions import BINARY_OPERATORS, ExpressionsMixin
from .source import FunctionSource, names_constexpr, readable_global


class CodeGenerator(ExpressionsMixin, ControlFlowMixin, CallsMixin, ast.NodeVisitor):
    """Generates the body of one function into the unit's builder's insertion point."""

    def __init__(self, unit, source: FunctionSource, rewritten: bool):
        self.unit = unit
        self.source = source
        self.rewritten = rewritten  # the user's meaning (see the module doc)
        self.semantic = unit.semantic
        self.builder = unit.irb.builder
        self.scope: dict = {}
        self.returned = NOT_RETURNED
        self.assign_sites: dict = {}  # name -> the node that last assigned it
        self._closure = source.closure
        self._rest = None  # the statements after the current one: (stmts, index, parent)
        self._loop_depth = 0
        self._name_hint = None
        self._scoped_out: dict = {}  # name -> where it was defined and went out of scope
        # Names declared `name: tl.constexpr` without a value: their next assignment keeps a
        # compile-time value (Triton's pending annotations: `d0: tl.constexpr; d0, d1 = shape`).
        self._pending_constexpr: set = set()

    def generate(self, params: dict):
        """Generate the body with `params` bound; the returned value (None when it falls off
        the end).

        Raises:
            UnsupportedLanguageConstruct: the user's function uses Python a kernel may not be
                written in (the interpreter's rewrite refuses the same, constructs.py).
        """
        refusal = self.source.refusal() if self.rewritten else None
        if refusal is not None:
            location = self.source.location(refusal.node)
            callers = tuple(reversed(self.unit.call_sites))
            raise constructs.refusal_error(refusal, location, callers)
        self.scope.update(params)
        self.visit_body(self.source.definition.body)
        return None if self.returned is NOT_RETURNED else self.returned

    # -- visiting, locations, errors --------------------------------------------------------------
    def visit(self, node):
        builder = self.builder
        saved = builder.location
        if hasattr(node, "lineno"):
            builder.location = self._ir_location(node)
        try:
            return super().visit(node)
        except errors.CompilationError as exc:
            if exc.location is None and self.source.is_user:
                # The located error replaces the unlocated one: same message, same cause.
                raise self._located(exc, node) from exc.__cause__
            raise
        except Exception as exc:
            if not self.source.is_user:
                raise  # Naiad's own library: reported at the user's call
            raise self._located(exc, node) from exc
        finally:
            builder.location = saved

    def _ir_location(self, node) -> ir.Location:
        return self.source.ir_location(node, self._name_hint)

    def _located(self, exc: BaseException, node) -> errors.CompilationError:
        """`exc` at `node`, or at the innermost line of a plain Python helper (in the user's
        files) that raised it; the jit calls that led here are the call chain."""
        here = self.source.location(node)
        callers = tuple(reversed(self.unit.call_sites))
        frames = errors.user_frames(exc)
        if frames:
            location, chain = frames[-1], (*reversed(frames[:-1]), here, *callers)
        else:
            location, chain = here, callers
        cls = errors.located_error_class(exc)
        help = exc.help if isinstance(exc, errors.CompilationError) else ""
        return cls(errors.error_message(exc), location, help=help, call_chain=chain)

    def generic_visit(self, node):
        if isinstance(node, (ast.Break, ast.Continue)):
            raise NotImplementedError("`break` and `continue` are not supported in kernels")
        raise NotImplementedError(f"`{type(node).__name__}` is not supported in a kernel")

    def visit_named(self, node, name: str | None):
        """Visit `node` with its ops named `name` (the target of an assignment)."""
        saved, self._name_hint = self._name_hint, name
        try:
            return self.visit(node)
        finally:
            self._name_hint = saved

    # -- names ----------------------------------------------------------------------------------
    def lookup(self, name: str):
        if name in self.scope:
            return self.scope[name]
        if name in self._closure:
            return self._closure[name]
        module_globals = self.source.globals
        if name in module_globals:
            value = module_globals[name]
            if self.source.is_user:
                self._check_global(name, value)
            return value
        if hasattr(builtins, name):
            return getattr(builtins, name)
        if name in self._scoped_out:
            raise NameError(
                f"`{name}` is defined only {self._scoped_out[name]}: give it a value before, "
                "so that it has one on every path"
            )
        raise NameError(f"name '{name}' is not defined")

    def scoped_out(self, inner: dict, where: str) -> None:
        """Remember the names `inner` (a branch's or a loop's scope) defined that do not live
        on after it, to explain a later use of one."""
        for name in inner.keys() - self.scope.keys():
            self._scoped_out[name] = where

    def _check_global(self, name: str, value) -> None:
        """A kernel reads globals that are compile-time facts (as Triton): constexprs, dtypes,
        modules, functions and classes. Their values are recorded for the specialization key."""
        if isinstance(value, core.constexpr | t.dtype) or getattr(value, "__naiad_jit__", False):
            self.unit.globals_used[(self.source.fn.__module__, name)] = value
            return
        if readable_global(value):
            return
        raise NameError(
            f"Cannot access global variable {name} from within a kernel: kernels can only read "
            f"globals that are `tl.constexpr` (`{name} = tl.constexpr(...)`), dtypes, modules "
            "or functions"
        )

    # -- statements -----------------------------------------------------------------------------
    def visit_body(self, stmts: list) -> None:
        parent = self._rest
        for i, stmt in enumerate(stmts):
            if self.returned is not NOT_RETURNED:
                break  # dead code after a return
            self._rest = (stmts, i + 1, parent)
            self.visit(stmt)
        self._rest = parent

    def rest_statements(self) -> list:
        """Every statement that runs after the current one, to the end of the function."""
        found, rest = [], self._rest
        while rest is not None:
            stmts, index, rest = rest
            found += stmts[index:]
        return found

    def visit_Expr(self, node):
        if isinstance(node.value, ast.Call) and _is_lookup(node.value.func):
            # A call's result is dropped: may it be? (Only a name or an attribute chain is
            # looked up twice: anything else could do work.)
            callee = core._unwrap_if_constexpr(self.visit(node.value.func))
            message = unused_result_error(callee, ast.unparse(node.value.func))
            if message is not None:
                raise ValueError(message)
        self.visit(node.value)

    def visit_Pass(self, node):
        pass

    def visit_Assign(self, node):
        target = node.targets[0]
        name = target.id if len(node.targets) == 1 and isinstance(target, ast.Name) else None
        value = self.visit_named(node.value, name)
        if self.rewritten and len(node.targets) == 1 and self._declared_in(target):
            self._assign_declared(target, value, node)
            return
        if self.rewritten:
            value = self._assigned_at(value, node.value, name)
        for target in node.targets:
            self.assign(target, value, node)

    def _declared_in(self, target) -> bool:
        """Whether a name of `target` was declared `tl.constexpr` and not assigned since."""
        if not self._pending_constexpr or any(isinstance(n, ast.Starred) for n in ast.walk(target)):
            return False
        return any(
            isinstance(n, ast.Name) and n.id in self._pending_constexpr for n in ast.walk(target)
        )

    def _assign_declared(self, target, value, node) -> None:
        """Assign part by part: a declared name keeps its part as `x: tl.constexpr = part`
        would, any other as `x = part`."""
        if isinstance(target, ast.Tuple | ast.List):
            items = list(core._unwrap_if_constexpr(value))
            if len(items) != len(target.elts):
                raise errors.unpacking_error(len(items), len(target.elts))
            for inner, item in zip(target.elts, items):
                self._assign_declared(inner, item, node)
            return
        declared = isinstance(target, ast.Name) and target.id in self._pending_constexpr
        if declared and not isinstance(value, core.tensor):
            self._pending_constexpr.discard(target.id)
            value = core.constexpr(core._unwrap_if_constexpr(value))
        else:
            name = target.id if isinstance(target, ast.Name) else None
            value = self._assigned_at(value, node.value, name)
        self.assign(target, value, node)

    def visit_AnnAssign(self, node):
        if node.value is None:
            if names_constexpr(node.annotation) and isinstance(node.target, ast.Name):
                self._pending_constexpr.add(node.target.id)
            return
        name = node.target.id if isinstance(node.target, ast.Name) else None
        value = self.visit_named(node.value, name)
        constant = not isinstance(value, core.tensor)
        if names_constexpr(node.annotation) and self.rewritten and constant:
            value = core.constexpr(value)
        elif self.rewritten:  # a run-time value annotated `tl.constexpr` stays one (Triton 3.9)
            value = self._assigned_at(value, node.value, name)
        self.assign(node.target, value, node)

    def visit_AugAssign(self, node):
        """`x += y` is `x = x + y` without the literal typing of `=`: the interpreter leaves
        augmented assignments to Python."""
        name = node.target.id if isinstance(node.target, ast.Name) else None
        current = self.load_target(node.target)
        rhs = self.visit_named(node.value, name)
        saved, self._name_hint = self._name_hint, name
        try:
            value = BINARY_OPERATORS[type(node.op)](current, rhs)
        finally:
            self._name_hint = saved
        self.assign(node.target, value, node)

    def _assigned_at(self, value, node, name):
        """`assigned`, with an error (a literal too large) reported at the value, as the
        interpreter reports it."""
        try:
            return self.assigned(value, name)
        except errors.CompilationError:
            raise
        except Exception as exc:
            if not self.source.is_user:
                raise
            raise self._located(exc, node) from exc

    def assigned(self, value, name=None):
        """`x = value` in a kernel: Python numbers (and constexprs) become typed scalars (`1` is
        int32, `2**40` int64, `1.0` fp32), also inside a tuple; other values stay as they are."""
        value = core._unwrap_if_constexpr(value)
        if isinstance(value, bool | int | float):
            saved = self.builder.location
            if name:
                self.builder.location = _named(saved, name)
            try:
                return self.semantic.to_tensor(value)
            finally:
                self.builder.location = saved
        if type(value) is tuple and any(
            isinstance(v, bool | int | float | core.constexpr) for v in value
        ):
            return tuple(self.assigned(v, name) for v in value)
        return value

    def assign(self, target, value, node) -> None:
        if isinstance(target, ast.Name):
            self.scope[target.id] = value
            self.assign_sites[target.id] = node
        elif isinstance(target, ast.Tuple | ast.List):
            self._unpack(target.elts, value, node)
        elif isinstance(target, ast.Attribute):
            setattr(self.visit(target.value), target.attr, value)
        elif isinstance(target, ast.Subscript):
            self.visit(target.value)[self.visit(target.slice)] = value
        elif isinstance(target, ast.Starred):
            self.assign(target.value, list(value), node)
        else:
            raise NotImplementedError(f"cannot assign to `{type(target).__name__}`")

    def _unpack(self, targets, value, node) -> None:
        items = list(core._unwrap_if_constexpr(value))
        starred = [i for i, x in enumerate(targets) if isinstance(x, ast.Starred)]
        if starred:
            at = starred[0]
            after = len(targets) - at - 1
            items = items[:at] + [items[at : len(items) - after]] + items[len(items) - after :]
        if len(items) != len(targets):
            raise errors.unpacking_error(len(items), len(targets))
        for target, item in zip(targets, items):
            self.assign(target, item, node)

    def load_target(self, target):
        if isinstance(target, ast.Name):
            return self.lookup(target.id)
        if isinstance(target, ast.Attribute):
            return getattr(self.visit(target.value), target.attr)
        if isinstance(target, ast.Subscript):
            return self.visit(target.value)[self.visit(target.slice)]
        raise NotImplementedError(f"cannot update `{type(target).__name__}`")

    def visit_Assert(self, node):
        cond = self.visit(node.test)
        msg = "" if node.msg is None else self.visit(node.msg)
        if self.rewritten:
            self.semantic.device_assert(cond, msg)
        elif not core._unwrap_if_constexpr(cond):
            raise AssertionError(core._unwrap_if_constexpr(msg))

    def visit_Raise(self, node):
        exc = self.visit(node.exc) if node.exc is not None else RuntimeError("raise")
        raise exc

    def visit_Delete(self, node):
        for target in node.targets:
            if not isinstance(target, ast.Name):
                raise NotImplementedError("only names can be deleted in a kernel")
            del self.scope[target.id]


def _is_lookup(node) -> bool:
    """A name, or attributes of one (`tl.advance`, `x.advance`)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _named(location: ir.Location, name: str) -> ir.Location:
    return location if isinstance(location, ir.NameLoc) else ir.NameLoc(name, location)
