"""The frontend's entry points: a `@naiad.jit` function and one specialization of it, as a
TTIR module.

    module = compile_to_ttir(add_kernel, {"x_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
                             {"BLOCK": 1024}, {"x_ptr": [["tt.divisibility", 16]]})

The kernel's AST is walked by the code generator (codegen.py) through the same semantic layer
as the interpreter, bound to the IR builder (ir_builder.py). docs/frontend.md describes it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from .. import errors, ir, knobs
from ..language import core
from ..language.target import CUDA_HOPPER, TargetInfo
from ..language.unspecialized_constexprs import refuse_unspecialized_constexprs
from . import specialization
from .ir_builder import IRBuilder
from .source import function_source
from .unit import CompilationUnit, name_arguments

__all__ = ["FrontendResult", "IRBuilder", "compile_to_ttir", "generate"]


def _user_facing(implementation):
    """Kernel errors leave the compiler through `<naiad compile>`, not Naiad's files."""
    entry = errors.user_facing(implementation, knobs.traceback.get, "<naiad compile>")
    return functools.wraps(implementation)(entry)


@dataclass
class FrontendResult:
    """A kernel's TTIR and what the runtime keys and checks it by."""

    module: ir.ModuleOp
    name: str
    globals_used: dict  # (module, name) -> value: the globals whose values it was built with


@_user_facing
def compile_to_ttir(
    fn,
    signature: dict,
    constexprs: dict | None = None,
    attrs: dict | None = None,
    target: TargetInfo = CUDA_HOPPER,
    *,
    verify: bool = False,
) -> ir.ModuleOp:
    """The TTIR module of `fn` (a `@naiad.jit` function or a plain Python function) for one
    specialization: `signature` maps parameters to Triton signature strings (`'*fp32'`,
    `'i32'`, `'constexpr'`), `constexprs` gives the constexpr values, `attrs` the argument
    attributes (`{"x_ptr": [["tt.divisibility", 16]]}`). `target.debug` turns assertions on.

    Raises:
        CompilationError: a mistake in the kernel, at its file:line:col.
    """
    return generate.__wrapped__(fn, signature, constexprs, attrs, target, verify=verify).module


@_user_facing
def generate(
    fn, signature, constexprs=None, attrs=None, target=CUDA_HOPPER, *, verify=False, name=None
) -> FrontendResult:
    """`compile_to_ttir`, with what else the runtime needs (the globals read). The kernel is
    named `name` (the function's name by default)."""
    constexprs, attrs = dict(constexprs or {}), dict(attrs or {})
    python_fn = getattr(fn, "fn", fn)
    name = name or python_fn.__name__
    refuse_unspecialized_constexprs(fn)
    source = function_source(python_fn)
    unit = CompilationUnit(target)
    params = specialization.parameters(source, signature, constexprs, attrs, target)
    arguments = specialization.arguments(params)
    arg_attrs = [attributes for _, _, attributes in arguments]
    func = unit.new_function(
        name,
        [(argument, ty) for argument, ty, _ in arguments],
        "public",
        arg_attrs=arg_attrs if any(arg_attrs) else None,
    )
    name_arguments(func, arguments)
    values = specialization.values(params, func.arguments)
    with core.use_semantic(unit.semantic):
        returned = unit.generate(func, source, True, values)
    if returned is not None:
        raise TypeError(f"a kernel returns nothing, but `{python_fn.__name__}` returns a value")
    unit.module.location = func.location  # as Triton: the module is where the kernel is
    if verify:
        ir.verify(unit.module)
    return FrontendResult(unit.module, name, unit.globals_used)
