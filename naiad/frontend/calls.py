"""Calls: of jit functions (a `tt.func` + `tt.call`), of builtins, and of plain Python.

- A jit function (`@naiad.jit`, or a `@jit` function of the language's library) is compiled once
  per specialization into a private `tt.func` named as Triton names it: the module and name, then
  one mangled part per parameter (`sum__fp32S64S_c0_cFalse_cNone`): tensors by type, everything
  else as a compile-time value (`c0`) that is baked into that function. The call is a `tt.call`;
  the `inline` pass inlines it later (a `noinline=True` function stays a call).
- Builtins (`tl.load`, ...) run here, on the active semantic. A jit function handed to one (a
  combine function of `tl.reduce`) becomes a callable that emits the call where the builtin calls
  it, so the combine region holds a `tt.call`, as in Triton.
- Python's `min`/`max` on tensors are `tl.minimum`/`tl.maximum` and `print` is
  `tl.device_print` (Triton's meaning, since a compiled kernel cannot compare a tensor in
  Python); every other callable (`len`, `isinstance`, constexpr functions, plain helpers) is
  called as Python, as the interpreter does.
"""

from __future__ import annotations

import ast
import builtins
import types as pytypes

from ..language import core
from ..language.compile_time import checked_constant_extremum
from . import values as vals
from .source import function_source


def is_jit(fn) -> bool:
    return bool(getattr(fn, "__naiad_jit__", False))


class JitCallable:
    """A jit function passed to a builtin or to Python code: calling it emits the call. It
    still reads as a jit function to the builtins that take only those (`map_elementwise`)."""

    __naiad_jit__ = True

    def __init__(self, generator, fn, node):
        self.generator, self.fn, self.node = generator, fn, node
        self.__name__ = getattr(fn, "__name__", "jit_function")

    def __call__(self, *args, **kwargs):
        return self.generator.call_jit(self.fn, list(args), kwargs, self.node)


class CallsMixin:
    """The call visitor of `CodeGenerator`."""

    def visit_Call(self, node):
        func = self.visit(node.func)
        # Keyword arguments first, as Triton's code generator visits them: `tl.load(p + offs,
        # mask=offs < n)` computes the mask, then the pointers (the ops come in that order).
        kwargs = {}
        for keyword in node.keywords:
            value = self.visit(keyword.value)
            if keyword.arg is None:
                kwargs.update(value)
            else:
                kwargs[keyword.arg] = value
        args = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                args += list(core._unwrap_if_constexpr(self.visit(arg.value)))
            else:
                args.append(self.visit(arg))
        return self.call(func, args, kwargs, node)

    def call(self, func, args, kwargs, node):
        func = core._unwrap_if_constexpr(func)
        if isinstance(func, JitCallable):
            return func(*args, **kwargs)
        if isinstance(func, pytypes.MethodType) and is_jit(func.__func__):
            return self.call_jit(func.__func__, [func.__self__, *args], kwargs, node)
        if is_jit(func):
            return self.call_jit(func, args, kwargs, node)
        special = _PYTHON_BUILTINS.get(id(func))
        if special is not None:
            return special(self, args, kwargs)
        if id(func) in _UNWRAPPING_BUILTINS:  # they see constexprs' values, as in Triton
            args = [core._unwrap_if_constexpr(a) for a in args]
        args = [self._passed(a, node) for a in args]
        kwargs = {k: self._passed(v, node) for k, v in kwargs.items()}
        return func(*args, **kwargs)

    def _passed(self, value, node):
        """A value handed to Python code: a jit function becomes a callable emitting calls."""
        plain = core._unwrap_if_constexpr(value)
        if is_jit(plain) and not isinstance(plain, JitCallable):
            return JitCallable(self, plain, node)
        return value

    # -- jit functions ----------------------------------------------------------------------------
    def call_jit(self, fn_object, args, kwargs, node):
        """A call of a jit function: its specialization compiled (once), then a `tt.call`."""
        fn = getattr(fn_object, "fn", fn_object)
        source = function_source(fn)
        bound = source.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        values = dict(bound.arguments)
        for name, param in source.signature.parameters.items():
            if param.kind == param.VAR_POSITIONAL:  # `*args`: the extra arguments, a tl.tuple
                values[name] = core.tuple(values[name])
        if hasattr(fn_object, "fn"):
            # A user's jit function: a constexpr parameter given a Python value holds a
            # constexpr; given a tensor, it holds the tensor (as the interpreter, as Triton).
            for name in source.constexpr_params:
                value = values[name]
                if not isinstance(value, core.tensor | core.constexpr):
                    values[name] = core.constexpr(value)
            for name, value in values.items():  # a dtype is a constexpr too (`DTYPE.value`)
                if isinstance(value, core.dtype):
                    values[name] = core.constexpr(value)
        if getattr(fn_object, "noinline", False):  # it stays a call: no maps cross (values.py)
            values = {name: vals.without_maps(value) for name, value in values.items()}
        name = mangled_name(fn, values)
        callee = self.unit.functions.get(name)
        if callee is None:
            site = self.source.location(node) if self.source.is_user else None
            callee = self.unit.compile_callee(fn_object, source, values, name, site)
        arguments = [x.handle for value in values.values() for x in vals.leaves(value)]
        return self.unit.emit_call(callee, arguments)


def mangled_name(fn, values: dict) -> str:
    """Triton's name of a specialized function: `module.qualname__<one part per argument>`."""
    parts = "_".join(vals.mangle(v) for v in values.values())
    return f"{fn.__module__}.{fn.__qualname__}__{parts}"


# -- Python builtins with a kernel meaning ---------------------------------------------------------
def _extremum(python, semantic_name):
    def call(generator, args, kwargs):
        if kwargs or len(args) < 2:
            return python(*args, **kwargs)
        if not any(isinstance(a, core.tensor) for a in args):
            return checked_constant_extremum(python, args)
        combine = getattr(generator.semantic, semantic_name)
        result = args[0]
        for arg in args[1:]:
            result = combine(result, arg)
        return result

    return call


def _print(generator, args, kwargs):
    """Python's `print` in a kernel is `tl.device_print` (Triton): a string starts a print with
    that prefix, the values after it are its arguments (so `print("i", i, "x", x)` prints two
    lines where the interpreter prints one)."""
    hex_ = kwargs.get("hex", False)
    prefix, values, started = "", [], False
    for arg in args:
        plain = core._unwrap_if_constexpr(arg)
        if isinstance(plain, str):
            if started:
                generator.semantic.device_print(prefix, values, hex_)
            prefix, values, started = plain, [], True
        else:
            values.append(arg)
            started = True
    generator.semantic.device_print(prefix, values, hex_)


def _breakpoint(generator, args, kwargs):
    """A compiled kernel has no Python frame to stop in (the code generator's would be the one
    pdb shows); the interpreter runs kernels as Python, where `breakpoint()` works."""
    raise TypeError(
        "breakpoint() works only in the interpreter: run with NAIAD_INTERPRET=1 or "
        "@naiad.jit(interpret=True)"
    )


# Python's builtins that Triton's code generator gives constexprs' values (`getattr(tl.PropagateNan,
# NAME)` with NAME a constexpr string); other Python functions get the constexprs themselves.
# Not `isinstance`, which Triton's list has: `isinstance(BLOCK * 2, tl.constexpr)` holds here.
_UNWRAPPING_BUILTINS = frozenset(id(f) for f in (len, list, float, int, getattr, hasattr))

_PYTHON_BUILTINS = {
    id(builtins.min): _extremum(builtins.min, "minimum"),
    id(builtins.max): _extremum(builtins.max, "maximum"),
    id(builtins.print): _print,
    id(builtins.breakpoint): _breakpoint,
}
