"""One compilation: the module being built, its builder and semantic, and its functions.

The kernel is the module's first `tt.func` (public); every specialization of a jit function it
calls is appended, private, when its compilation starts (Triton's order: callers before callees).
A function's result types are known only once its body is generated, so its type is set then.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import ir
from ..dialects import tt
from ..errors import UnsupportedLanguageConstruct
from ..language import core
from ..language.semantic import Semantic
from . import values as vals
from .codegen import CodeGenerator
from .ir_builder import IRBuilder


@dataclass
class CompiledFunction:
    """A generated `tt.func`: what a call needs (its name, result types, result structure)."""

    name: str
    func: tt.FuncOp
    result_types: list
    result_template: object  # the returned value, its tensors replaced by `values.Leaf`s


class CompilationUnit:
    """The state one compilation shares between the code generators of its functions."""

    def __init__(self, target):
        self.target = target
        self.module = ir.ModuleOp()
        self.irb = IRBuilder(ir.Builder())
        self.semantic = Semantic(self.irb, target)
        self.functions: dict[str, CompiledFunction] = {}
        self.globals_used: dict = {}  # (module, name) -> value, for the specialization key
        self.call_sites: list = []  # the user's jit calls being compiled (for error chains)
        self._in_progress: set[str] = set()

    def new_function(self, name, arguments, visibility, arg_attrs=None, noinline=False):
        """A `tt.func` taking `arguments` (`[(path, ir type), ...]`), appended to the module."""
        signature = ir.FunctionType([ty for _, ty in arguments], [])
        func = tt.FuncOp(name, signature, visibility=visibility, arg_attrs=arg_attrs)
        func.attributes["noinline"] = ir.BoolAttr(bool(noinline))
        self.module.body.append(func)
        return func

    def generate(self, func, source, rewritten: bool, params: dict) -> list:
        """Generate `source`'s body into `func` with `params` bound; the returned value."""
        # The `def` keyword's line and column (a kernel defined in a function is indented).
        definition = source.definition
        location = ir.FileLineColLoc(source.filename, definition.lineno, definition.col_offset + 1)
        func.location = location
        for arg in func.arguments:
            if isinstance(arg.location, ir.NameLoc):  # `loc("x"(<the function's location>))`
                arg.location = ir.NameLoc(arg.location.name, location)
        generator = CodeGenerator(self, source, rewritten)
        builder = self.irb.builder
        with builder.at_end(func.entry_block), builder.at_location(location):
            returned = generator.generate(params)
            results = vals.leaves(returned)
            builder.create(tt.ReturnOp, [x.handle for x in results])
        inputs = func.signature.inputs
        outputs = [x.handle.type for x in results]
        func.attributes["function_type"] = ir.TypeAttr(ir.FunctionType(inputs, outputs))
        return returned

    def compile_callee(self, fn_object, source, values: dict, name: str, site) -> CompiledFunction:
        """The private `tt.func` of one specialization of a jit function."""
        if name in self._in_progress:
            raise RecursionError(f"jit function `{source.fn.__name__}` calls itself")
        if getattr(fn_object, "noinline", False):
            _check_noinline_arguments(source.fn.__name__, values)
        arguments = []
        for param, value in values.items():
            leaves = vals.leaves(value)
            paths = vals.leaf_paths(value, param)
            arguments += [(path, ir_type_of(x)) for path, x in zip(paths, leaves)]
        func = self.new_function(
            name, arguments, "private", noinline=getattr(fn_object, "noinline", False)
        )
        name_arguments(func, arguments)
        handles = iter(func.arguments)
        params = {p: vals.rebuild(v, handles) for p, v in values.items()}
        self._in_progress.add(name)
        if site is not None:
            self.call_sites.append(site)
        try:
            returned = self.generate(func, source, hasattr(fn_object, "fn"), params)
        finally:
            self._in_progress.discard(name)
            if site is not None:
                self.call_sites.pop()
        compiled = CompiledFunction(
            name, func, list(func.signature.results), vals.skeleton(returned)
        )
        self.functions[name] = compiled
        return compiled

    def emit_call(self, callee: CompiledFunction, arguments: list):
        op = self.irb.builder.create(tt.CallOp, callee.name, arguments, callee.result_types)
        return vals.from_skeleton(callee.result_template, iter(op.results))


def ir_type_of(tensor) -> ir.Type:
    return tensor.handle.type


def name_arguments(func, arguments) -> None:
    """Name each argument after what it stands for (`x_ptr`, `state.0`, `desc.shape.1`)."""
    for arg, entry in zip(func.arguments, arguments):
        arg.location = ir.NameLoc(entry[0])


def _check_noinline_arguments(function: str, values: dict) -> None:
    """A `noinline` function is called with scalars only, on every compiled target, as Triton's
    compiler requires (a block argument would need one layout agreed by every call site on a
    GPU). Naiad's back ends inline these functions anyway; the rule keeps a program that
    compiles here one that Triton compiles. The interpreter, which compiles nothing, accepts
    blocks, as Triton's interpreter does."""
    for param, value in values.items():
        for leaf in vals.leaves(value):
            if isinstance(leaf, core.tensor) and leaf.type.is_block() and leaf.type.numel != 1:
                raise UnsupportedLanguageConstruct(
                    f"`{function}` is noinline, and a noinline function takes no blocks: "
                    f"its argument `{param}` is {leaf.type}"
                )
