"""Compiling a kernel for one specialization of its arguments, without running it.

`kernel.warmup(*args, grid=..., target=...)` lands here: the arguments are specialized as Triton
specializes them, the frontend builds TTIR, Triton's TTIR pipeline runs, and the result is a
`CompiledKernel` whose `asm` holds every stage produced so far (today: 'source', 'ttir'). Any
target compiles without its device: arguments may be arrays, torch dtypes or Triton signature
strings (`'*fp16'`, `'i32'`), and pointers given as types are assumed 16-byte aligned.

Compiles are serialized process-wide (`compiled_once`), which is what makes launching from many
threads safe: the IR's intern table (ir/interning.py) and the disk cache's in-memory level are
not made for concurrent writers, and a kernel compiled twice is loaded twice, with prepared
launches of both copies alive. Serializing costs little: the frontend and the passes hold the
GIL, and llvmlite serializes its binding calls with its own lock anyway.
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass, field

from .. import knobs
from ..language import dtypes as t
from ..language.target import CUDA_HOPPER, TargetInfo
from ..tools.tensor_descriptor import TensorDescriptor
from .host_arrays import describe, dtype_of_host_name, is_array_like
from .params import integer_argument_type

# Triton's make_ttir, in its order (rewrite-tensor-pointer is not needed: block pointers are
# already pointer blocks when the frontend emits them).
TTIR_PIPELINE = ("inline", "canonicalize", "combine", "cse", "symbol-dce", "loop-unroll")

# Reentrant: a compile may ask for another specialization's (an autotuner's warmup, a tool).
_compiling = threading.RLock()
_ABSENT = object()


def compiled_once(table: dict, key, make):
    """`table[key]`, made by `make()` and stored when absent: one compile at a time in the
    process, so threads wanting the same key wait for the first one's result instead of each
    compiling (and loading) their own copy. A hit takes no lock. When `make` raises, nothing is
    stored and the next caller tries again (and gets the error itself)."""
    found = table.get(key, _ABSENT)
    if found is not _ABSENT:
        return found
    with _compiling:
        found = table.get(key, _ABSENT)
        if found is _ABSENT:
            found = table[key] = make()
        return found


class Metadata(dict):
    """A compiled kernel's metadata: a dict whose keys also read as attributes, as Triton's
    (`compiled.metadata.shared`)."""

    def __getattr__(self, name: str):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


@dataclass
class CompiledKernel:
    """A kernel compiled for one specialization: `asm[stage]` text, `metadata`, `name`; for a
    GPU target with a linker, `n_regs` and `n_spills` of its cubin (None otherwise)."""

    name: str
    asm: dict
    metadata: Metadata = field(default_factory=Metadata)
    binary: bytes | None = None  # object code (CPU targets)

    def __post_init__(self):
        self.metadata = Metadata(self.metadata)

    @property
    def n_regs(self) -> int | None:
        return self.metadata.get("n_regs")

    @property
    def n_spills(self) -> int | None:
        return self.metadata.get("n_spills")


def parse_target(target) -> TargetInfo:
    """`None` / 'cuda:sm_90a' / 'cuda:sm_80' / 'cpu' as the language's TargetInfo."""
    if target is None or isinstance(target, TargetInfo):
        return target or CUDA_HOPPER
    name = str(target)
    if name == "cpu" or name.startswith("cpu:"):
        return CUDA_HOPPER.with_options(
            name=name, backend="cpu", arch=0, default_dot_input_precision="ieee"
        )
    if name.startswith("cuda:sm_"):
        digits = name[len("cuda:sm_") :].rstrip("a")
        if digits.isdigit():
            return CUDA_HOPPER.with_options(name=name, arch=int(digits))
    raise ValueError(f"unknown target {target!r}: expected 'cuda:sm_90a', 'cuda:sm_80' or 'cpu'")


def _pointer_spec(element: t.dtype, const: bool = False) -> str:
    """`*fp32`; `*kfp32` for a `tl.const` parameter (stores through it are refused)."""
    return "*" + ("k" if const else "") + t.ty_to_signature(element)


def _specialize_one(param, value):
    """(signature string, constexpr value or None, attributes) of one argument, as Triton."""
    if param.is_constexpr or value is None or isinstance(value, t.dtype):
        return "constexpr", value, []
    if isinstance(value, str):  # a signature string given for an argument that is not there
        return value, None, [["tt.divisibility", 16]] if value.startswith("*") else []
    if isinstance(value, bool):
        return "i1", None, []
    if isinstance(value, int):
        if value == 1 and not param.do_not_specialize:
            return "constexpr", 1, []
        spec = t.ty_to_signature(integer_argument_type(param.name, value, param.annotation))
        aligned = value % 16 == 0 and not param.do_not_specialize
        return spec, None, [["tt.divisibility", 16]] if aligned else []
    if isinstance(value, float):
        return "fp32", None, []
    if isinstance(value, TensorDescriptor):
        element = t.ty_to_signature(describe(value.base).dtype)
        shape = ", ".join(str(int(b)) for b in value.block_shape)
        return f"tensordesc<{element}[{shape}], {value.padding}>", None, []
    if type(value).__module__ == "torch" and not is_array_like(value):  # a torch dtype
        spec = _pointer_spec(dtype_of_host_name(str(value)), param.is_const)
        return spec, None, [["tt.divisibility", 16]]
    if is_array_like(value):
        array = describe(value)
        aligned = array.data_ptr % 16 == 0
        spec = _pointer_spec(array.dtype, param.is_const)
        return spec, None, [["tt.divisibility", 16]] if aligned else []
    raise TypeError(f"argument `{param.name}`: cannot specialize a {type(value).__name__}")


def specialize(jit_function, bound: dict):
    """The (signature, constexprs, attrs) of a launch with `bound` arguments."""
    signature, constexprs, attrs = {}, {}, {}
    for param in jit_function.params:
        value = bound[param.name]
        spec, constant, attributes = _specialize_one(param, value)
        signature[param.name] = spec
        if spec == "constexpr":
            constexprs[param.name] = value if constant is None else constant
        if param.name in jit_function.do_not_specialize_on_alignment:
            continue
        if attributes:
            attrs[param.name] = attributes
        if isinstance(value, TensorDescriptor):
            attrs.update(_descriptor_attributes(param.name, value))
    return signature, constexprs, attrs


def _descriptor_attributes(name: str, desc: TensorDescriptor) -> dict:
    """A host descriptor's parts specialize as pointers and integers do: its base when aligned
    to 16 bytes (under the descriptor's name), each size and each stride but the last (which is
    1) when divisible by 16 (under `name.shape.i`, `name.stride.i`), so that its rows are known
    aligned and its bounds masks known constant over a vector."""
    divisible = [["tt.divisibility", 16]]
    attrs = {}
    if describe(desc.base).data_ptr % 16 == 0:
        attrs[name] = divisible
    for i, size in enumerate(desc.shape):
        if size % 16 == 0:
            attrs[f"{name}.shape.{i}"] = divisible
    for i, stride in enumerate(desc.strides[:-1]):
        if stride % 16 == 0:
            attrs[f"{name}.stride.{i}"] = divisible
    return attrs


def compile_ttir(jit_function, bound: dict, target=None, debug: bool = False) -> CompiledKernel:
    """The TTIR of `jit_function` specialized for `bound`, after Triton's TTIR pipeline."""
    with _compiling:
        build = build_ttir(jit_function, bound, target, debug)
    dump_stages(build)
    return build.kernel


@dataclass
class TTIRBuild:
    """A kernel's optimized TTIR: the module itself, its CompiledKernel (text and metadata) and
    the globals its code was built with (checked again at every launch)."""

    kernel: CompiledKernel
    module: object
    globals_used: dict
    key: tuple


def build_ttir(
    jit_function, bound: dict, target=None, debug: bool = False, num_warps: int = 4
) -> TTIRBuild:
    """Run the frontend and the TTIR pipeline for one specialization; `num_warps` is the
    launch's (`tl.extra.cuda.num_warps()` reads it)."""
    # Imported on first compile: launching in the interpreter needs none of the compiler.
    import naiad.passes  # noqa: F401  (registers the passes)

    from ..frontend import generate
    from ..ir.printer import print_module
    from ..passes.pipeline import run_pipeline

    info = parse_target(target).with_options(debug=debug, num_warps=num_warps)
    signature, constexprs, attrs = specialize(jit_function, bound)
    result = generate(jit_function, signature, constexprs, attrs, info)
    source_ttir = print_module(result.module)
    run_pipeline(TTIR_PIPELINE, result.module)
    asm = {"source": source_ttir, "ttir": print_module(result.module)}
    metadata = {
        "name": result.name,
        "target": info.name,
        "signature": signature,
        "constexprs": {k: repr(v) for k, v in constexprs.items()},
        "debug": debug,
    }
    kernel = CompiledKernel(result.name, asm, metadata)
    return TTIRBuild(kernel, result.module, result.globals_used, result.key)


def compile_kernel(
    jit_function, bound: dict, target=None, debug: bool = False, options=None
) -> CompiledKernel:
    """Compile for `target` as far as its back end goes: TTIR for every target; for a CPU
    target also the Linalg, LLVM IR, assembly and object code (`kernel.binary`); for a CUDA
    target the TTGIR, LLVM IR, PTX and, where a linker is present, the cubin. `options` are
    the launch options (num_warps, num_ctas, maxnreg; None: the defaults)."""
    num_warps = getattr(options, "num_warps", 4)
    info = parse_target(target)
    with _compiling:  # one compile at a time (see the module doc)
        build = build_ttir(jit_function, bound, target, debug, num_warps)
        if info.backend == "cpu":
            from .cpu_launcher import compile_cpu_stages

            compile_cpu_stages(build, str(target))
        else:
            _compile_cuda_stages(build, info.name, options)
    return build.kernel


def _compile_cuda_stages(build: TTIRBuild, target: str, options) -> None:
    """TTIR -> TTGIR -> LLVM IR -> PTX (-> cubin) into `build.kernel`, through the disk cache
    (cuda_cache.py)."""
    from .cuda_cache import compile_cuda_stages

    compile_cuda_stages(build, target, options)
    dump_stages(build)


def dump_stages(build: TTIRBuild) -> None:
    """With NAIAD_DUMP_DIR set, write every stage's text under `<dir>/<name>-<key hash>/`:
    called where each back end's stages end, so that every compile dumps, whether a launch,
    `warmup()` or a tool started it (a cached one too: the stages are the cache's)."""
    kernel, key = build.kernel, build.key
    directory = knobs.dump_dir.get()
    if not directory:
        return
    digest = hashlib.sha256(repr(key).encode()).hexdigest()[:16]
    folder = os.path.join(directory, f"{kernel.name}-{digest}")
    os.makedirs(folder, exist_ok=True)
    stages = list(kernel.asm)
    if "llir" in stages and "ptx" not in stages and "asm" not in stages:
        # a CPU kernel's assembly is made on demand
        stages.append("asm")
    for stage in stages:
        text = kernel.asm[stage]
        suffix = "source.ttir" if stage == "source" else stage
        mode = "wb" if isinstance(text, bytes) else "w"  # a cubin
        with open(os.path.join(folder, f"{kernel.name}.{suffix}"), mode) as f:
            f.write(text)
