"""Launching a kernel compiled from an IR file: `compiled[grid](*args)`, and a launcher's
`compiled.run(...)`, on what `triton.compile("kernel.ttir", target=...)` returns, as Triton
launches it.

The arguments are the kernel's `tt.func` parameters in order: an array for each pointer (on a
GPU also an address), a number for each scalar, a `TensorDescriptor` for each host descriptor
(`!tt.tensordesc`, a GPU's: its tensor map is encoded for the parameter's block at each launch,
runtime/tensor_maps.py; the shape and strides Triton's TTGIR declares after it are parameters of
their own, given as numbers). Nothing specializes: an IR file has no JIT
function, so the kernel runs as the file declares it, and what a parameter promises
(`tt.divisibility = 16`) is the caller's to keep, as in Triton.

- A CUDA kernel runs on its tensors' GPU, on the stream given, else the device's current torch
  stream, through `CubinKernel`, which checks each argument's device and kind.
- A CPU kernel runs on the worker pool over host arrays, with the CPU launches' checks: a
  read-only array it stores through is an error, and each array's extent reaches the bounds
  checks of debug mode.

The parameters' kinds are read from the file's function when it compiles (`parameter_kinds`,
kept as `metadata["parameters"]`); a loaded kernel is kept per compiled kernel, outside it, so
that the compiled kernel still pickles.
"""

from __future__ import annotations

import weakref

from ..dialects import tt
from ..ir.types import FloatType, IntegerType
from ..language.type_spellings import SIGNATURE_TO_DTYPE, ty_to_signature

_LOADED: dict[int, object] = {}  # id(compiled kernel) -> its loaded kernel (see the module doc)


def parameter_kinds(func) -> list[str]:
    """The kind of each parameter of `func` (a `tt.func`) as a launch reads it: `*fp32`,
    `i32`, `bf16`; a parameter of another type keeps its IR spelling, which a launch refuses."""
    return [_kind(argument.type) for argument in func.body.block.arguments]


def _kind(ty) -> str:
    from .evaluator.values import scalar_dtype  # IR scalars as language types, when a file compiles

    if isinstance(ty, tt.PointerType) and isinstance(ty.pointee_type, (IntegerType, FloatType)):
        return "*" + ty_to_signature(scalar_dtype(ty.pointee_type))
    if isinstance(ty, (IntegerType, FloatType)):
        return ty_to_signature(scalar_dtype(ty))
    if isinstance(ty, tt.TensorDescType):  # the signature's spelling: tensordesc<fp16[128, 64]>
        block = ty.block_type
        element = ty_to_signature(scalar_dtype(block.element_type))
        return f"tensordesc<{element}[{', '.join(str(n) for n in block.shape)}]>"
    return str(ty)


def launch_ir_kernel(kernel, grid, args: tuple, stream=None) -> None:
    """Run `kernel` (a CompiledKernel of an IR file) over `grid` with `args` (module doc)."""
    kinds = kernel.metadata["parameters"]
    if len(args) != len(kinds):
        raise TypeError(
            f"`{kernel.name}` takes {len(kinds)} arguments ({', '.join(kinds)}), got {len(args)}"
        )
    for index, kind in enumerate(kinds):
        if kind.startswith("tensordesc") and not kernel._on_cpu:
            _check_descriptor(kernel, index, kind, args[index])
        elif kind not in SIGNATURE_TO_DTYPE and kind[1:] not in SIGNATURE_TO_DTYPE:
            raise TypeError(
                f"parameter {index} of `{kernel.name}` is a {kind}: a kernel compiled from an "
                "IR file is launched with pointers, scalars and (on a GPU) host descriptors"
            )
    grid = (grid,) if isinstance(grid, int) else tuple(grid)
    grid = (grid + (1, 1))[:3]
    if kernel._on_cpu:
        _launch_on_cpu(kernel, grid, args)
    else:
        _launch_on_gpu(kernel, grid, args, stream)


def _check_descriptor(kernel, index: int, kind: str, value) -> None:
    """A host descriptor argument: a TensorDescriptor of the parameter's block shape."""
    from .cuda_parameters import DESCRIPTOR_SPEC
    from .tensor_descriptor import TensorDescriptor

    block = [int(n) for n in DESCRIPTOR_SPEC.match(kind).group(2).split(",")]
    if not isinstance(value, TensorDescriptor) or list(value.block_shape) != block:
        raise TypeError(
            f"parameter {index} of `{kernel.name}` is a {kind}: give a TensorDescriptor of "
            f"block shape {block}, got {value!r:.80}"
        )


def _tensor_maps(kinds, args: tuple) -> tuple:
    """`args` with each host descriptor as its tensor map, for its parameter's block."""
    from .cuda_parameters import tensor_map_maker

    args = list(args)
    for index, kind in enumerate(kinds):
        if kind.startswith("tensordesc"):
            desc = args[index]
            maps = tensor_map_maker(f"argument {index}", f"{kind[:-1]}, {desc.padding}>")
            args[index] = maps.encode((desc.base, *desc.shape, *desc.strides))
    return tuple(args)


def _loaded(kernel, load):
    """The loaded form of `kernel`, made by `load(kernel)` once per compiled kernel."""
    found = _LOADED.get(id(kernel))
    if found is None:
        found = _LOADED[id(kernel)] = load(kernel)
        weakref.finalize(kernel, _LOADED.pop, id(kernel), None)
    return found


def _launch_on_cpu(kernel, grid, args: tuple) -> None:
    from .cpu_launcher import load_launchable
    from .cpu_run import host_pointers, run_launchable

    launchable = _loaded(kernel, load_launchable)
    arguments = {name: value for (name, _), value in zip(launchable.arguments, args)}
    pointers = host_pointers(arguments)
    if pointers is None:
        raise ValueError(
            f"`{kernel.name}` was compiled for the CPU: its arrays must be in host memory"
        )
    run_launchable(launchable, arguments, grid, pointers, kernel.name)


def _launch_on_gpu(kernel, grid, args: tuple, stream) -> None:
    from . import global_scratch
    from .cuda_launcher import device_of, stream_reader

    scratch = kernel.metadata.get("global_scratch_size", 0)
    cubin_kernel = _loaded(kernel, _cubin_kernel)
    device = device_of(dict(enumerate(args)))
    args = _tensor_maps(kernel.metadata["parameters"], args)
    if stream is None:
        current = stream_reader()
        stream = current(device) if current else 0
    if scratch:  # the last parameter, as for a JIT launch (global_scratch.py)
        args = (*args, global_scratch.allocate(scratch, grid, device, stream))
    cubin_kernel.launch(grid, args, stream)


def _cubin_kernel(kernel):
    from ..backends.nvidia.cubin_kernel import CubinKernel

    kinds = tuple(
        "tensormap" if kind.startswith("tensordesc") else kind
        for kind in kernel.metadata["parameters"]
    )
    names = tuple(f"argument {index} of `{kernel.name}`" for index in range(len(kinds)))
    if kernel.metadata.get("global_scratch_size", 0):
        kinds, names = (*kinds, "*i8"), (*names, "the launch's global scratch")
    return CubinKernel(
        kernel.binary,
        kernel.metadata["name"],
        kinds,
        num_warps=kernel.metadata.get("num_warps", 4),
        shared=kernel.metadata.get("shared", 0),
        arg_names=names,
        ptx=kernel.asm.get("ptx"),
    )
