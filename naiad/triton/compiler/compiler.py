"""`triton.compiler.compiler`: `triton.compile(ASTSource(fn, signature, constexprs),
target=GPUTarget(...), options={...})`, through Naiad's one compiler (runtime/compiler.py), or
`triton.compile("kernel.ttir", target=...)`, whose kernel is inspected and launched with its
function's parameters (runtime/ir_files.py, runtime/ir_file_launch.py).

    src = ASTSource(add_kernel, {"x": "*fp32", "y": "*fp32", "n": "i32", "BLOCK": "constexpr"},
                    constexprs={"BLOCK": 1024})
    compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
    compiled.asm["ttir"], compiled.asm["ptx"]

The target names a Naiad back end: `cuda` with a compute capability (90 is `cuda:sm_90a`, as
a Hopper launch compiles), or `cpu`; None is the active driver's. As in Triton, an argument is
known divisible by 16 (a pointer aligned to 16 bytes) only where `attrs` says so: the kernel
then is the one a launch with such arguments compiles, so a launch of the result (which
specializes its arguments again) finds it in the cache instead of compiling another.

Triton's `debug` option compiles what it compiles in Triton: the assertions (`tl.device_assert`,
and integer overflow checks unless `sanitize_overflow=False`), without Naiad's debug mode's
bounds checks (CompileOptions.asserts). Inductor asks for it on every kernel, for its indexing
asserts; in debug mode each of its launches would take the slow path (docs/pytorch.md).

`import triton` imports this module, so what reads IR files (and the dialects) is imported
where used: a program whose launches the interpreter runs first loads none of it.
"""

from __future__ import annotations

import os
from types import SimpleNamespace

from ...errors import InterpreterError  # noqa: F401  (Triton's compiler module has it)
from ...runtime.compiled_kernel import CompiledKernel
from ...runtime.compiler import build_ttir, compile_kernel, compile_options
from ...runtime.driver import GPUTarget, active
from ...runtime.jit import JITFunction
from ...runtime.specialization import TypedArgument
from .._C.libtriton import ir
from ..backends.compiler import NaiadBackend, target_name
from ..runtime.cache import triton_key  # noqa: F401  (older Triton had it here)
from .binary_files import leave_binary

_OPTION_NAMES = (
    "num_warps",
    "num_ctas",
    "num_stages",
    "maxnreg",
    "debug",
    "sanitize_overflow",
    "extern_libs",
)


class ASTSource:
    """A JIT function with the types of its arguments (`signature`: name -> `'*fp16'`, `'i32'`,
    `'constexpr'`) and the values of its constexprs (by name, or by `(index,)` as Triton
    allows); `attrs` maps `(index,)` to attributes such as `[["tt.divisibility", 16]]`."""

    def __init__(self, fn, signature, constexprs=None, attrs=None):
        if not isinstance(fn, JITFunction):
            raise TypeError(f"ASTSource needs a @triton.jit function, got {type(fn).__name__}")
        for key in signature:
            if not isinstance(key, str):
                raise TypeError("Signature keys must be string")
        self.fn = fn
        self.name = fn.__name__
        self.signature = dict(signature)
        self.constants = {}
        for key, value in (constexprs or {}).items():
            index = fn.arg_names.index(key) if isinstance(key, str) else key[0]
            self.constants[fn.arg_names[index]] = value
        self.attrs = dict(attrs or {})
        self.ext = "ttir"

    def bound_arguments(self) -> dict:
        """Each parameter's value for the compile: its constexpr value, else its type string
        with the attributes `attrs` gives it, else its default."""
        bound = {}
        for index, param in enumerate(self.fn.params):
            if param.name in self.constants:
                bound[param.name] = self.constants[param.name]
            elif param.name in self.signature and self.signature[param.name] != "constexpr":
                attributes = self.attrs.get((index,), self.attrs.get(param.name, ()))
                bound[param.name] = TypedArgument(
                    self.signature[param.name], tuple(tuple(a) for a in attributes)
                )
            elif param.has_default:
                bound[param.name] = param.default
            else:
                raise TypeError(
                    f"ASTSource of `{self.name}`: parameter `{param.name}` (index {index}) "
                    "has neither a type in the signature nor a constexpr value"
                )
        return bound

    def make_ir(self, target, options, codegen_fns, module_map, context) -> ir.module:
        """The kernel's TTIR for this specialization on `target` (a GPUTarget), after Naiad's
        TTIR pipeline (so callees are inlined), as a read-only `triton._C.libtriton.ir`
        module: what torch's wrap_triton walks to find the tensors a kernel writes.
        `codegen_fns`, `module_map` and `context` are Triton's and not needed here."""
        built = build_ttir(
            self.fn,
            self.bound_arguments(),
            target_name(target),
            debug=bool(getattr(options, "debug", False)),
            num_warps=getattr(options, "num_warps", 4),
        )
        return ir.module(built.module)


class IRSource:
    """A file of IR to compile (`.ttir`, `.ttgir`: runtime/ir_files.py), as Triton names it;
    `triton.compile(IRSource(path))` is `triton.compile(path)`. `context` and `backend`, the
    MLIR context and back end Triton parses it with, are accepted and not used.

    What tools read of the file before compiling it, as Triton's IRSource gives it: `name`,
    the kernel's symbol (`@add_kernel`); `signature`, each parameter's type by index in the
    IR's spelling (`*f32`, `i32`; `nvTmaDesc` for a parameter marked `tt.nv_tma_desc`, a
    TMA descriptor's, and for a `!tt.tensordesc`); `parse_options()`, the launch options the
    module's attributes fix (a TTGIR file's `ttg.num-warps`)."""

    def __init__(self, path, context=None, backend=None):
        from ...ir.parser import parse_module
        from ...runtime.ir_files import kernel_function

        self.path = os.fspath(path)
        self.ext = os.path.splitext(self.path)[1].lstrip(".")
        with open(self.path) as file:
            self._module = parse_module(file.read(), self.path)
        name, func = kernel_function(self._module, self.path)
        self.name = f"@{name}"
        self.signature = {
            index: _parameter_type(func.arg_attr(index, "tt.nv_tma_desc"), argument.type)
            for index, argument in enumerate(func.body.block.arguments)
        }

    def parse_options(self) -> dict:
        attributes = self._module.attributes
        names = {"ttg.num-warps": "num_warps", "ttg.num-ctas": "num_ctas"}
        return {option: attributes[key].value for key, option in names.items() if key in attributes}


def _parameter_type(tma_mark, ty) -> str:
    """A parameter's type as IRSource.signature spells it."""
    from ...dialects.tt.types import PointerType, TensorDescType

    if tma_mark is not None or isinstance(ty, TensorDescType):
        return "nvTmaDesc"
    if isinstance(ty, PointerType):
        return f"*{ty.pointee_type}"
    return str(ty)


def compile(src, target=None, options=None, _env_vars=None) -> CompiledKernel:
    """Compile `src` (an ASTSource, or an IRSource or the path of a `.ttir` file:
    runtime/ir_files.py) for `target` (a GPUTarget; None: the active driver's) with Triton's
    `options` (num_warps, num_ctas, num_stages, maxnreg, debug, sanitize_overflow,
    extern_libs; others are ignored, as Triton's back ends ignore the options they do not
    have)."""
    backend = make_backend(target or active.get_current_target())
    chosen = {k: v for k, v in (options or {}).items() if k in _OPTION_NAMES}
    asserts = bool(chosen.pop("debug", False))  # Triton's debug: the assertions (module doc)
    defaults = {"num_warps": 4, "num_ctas": 1, "num_stages": 3, "maxnreg": None}
    launch_options = SimpleNamespace(**{**defaults, **chosen}, asserts=asserts)
    if isinstance(src, IRSource):
        src = src.path
    if isinstance(src, (str, os.PathLike)):  # an IR file
        from ...runtime.ir_files import compile_ir_file

        return compile_ir_file(src, backend.target_name, compile_options(launch_options))
    if not isinstance(src, ASTSource):
        raise TypeError(f"triton.compile takes an ASTSource or a path, got {type(src).__name__}")
    kernel = compile_kernel(
        src.fn, src.bound_arguments(), backend.target_name, False, options=launch_options
    )
    kernel.src = src
    leave_binary(kernel, src)
    return kernel


def make_backend(target: GPUTarget) -> NaiadBackend:
    """The back end that compiles for `target`."""
    return NaiadBackend(target)
