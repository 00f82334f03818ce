"""Launching `@naiad.jit` kernels on NVIDIA GPUs, from torch CUDA tensors.

    CudaLauncher(jit_function).launch(bound_arguments, grid, options, debug) -> prepared | None

Each JIT function gets one `CudaLauncher` (jit.py keeps it), made on its first CUDA launch. A
launch through it (the slow path of jit.py) specializes the arguments (specialization.py),
finds the compiled kernel of those facts, the options, debug mode and the device's
architecture (compiled on a miss: TTIR -> TTGIR -> LLVM -> PTX -> cubin, runtime/compiler.py),
and launches it through
`CubinKernel.launch`, which checks every argument: a CPU tensor among CUDA ones, tensors on two
devices and a grid beyond CUDA's limits are clear errors naming the argument. A host
`TensorDescriptor` is passed as the frontend expands it (frontend/specialization.py): its base
pointer, its shape and its strides (i64 each); its tensor is checked like the others, and its
block shape against the interpreter's rules, before anything compiles (cuda_parameters.py).
A kernel compiled in debug mode takes, after its arguments, each pointer argument's extent (the
bytes its torch storage allows around it, `_extents`), which its bounds checks read
(lowering/bounds.py); such a launch is never prepared for the hot path, whose parameters hold
no extents.

It returns the launch prepared for the hot path (`fast_cuda_launch`), which jit.py keeps under the
binder's key (binder.py; the key holds every tensor's dtype, alignment and device, and a
descriptor's dtype, device, block shape and padding, so the checks above hold for every launch
that finds it). A prepared launch writes the binder's launch values (a descriptor's parts
spread into its parameters: cuda_parameters.py) into a parameter block preallocated per thread,
reads the device's current torch stream with one call, and calls cuLaunchKernel: in one native
call with the context check (cuda_native_launch.py) where it can, else through
driver.fast_launch (cuda_prepared_calls.py). Nothing on it synchronizes or loads a module (the
cubin was loaded on that device by the slow path), and the one allocation, a kernel's global
scratch where it makes tensor maps (global_scratch.py), comes from the allocator on the launch's
stream, so launches are captured by `torch.cuda.graph`.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass

from .. import knobs
from ..backends.nvidia import driver as cuda_driver
from ..backends.nvidia import launch_attributes
from ..backends.nvidia import target as nv_target
from . import cuda_native_launch, global_scratch, launch_hooks
from .compile_lock import compiled_once
from .compiler import compile_options, compile_specialization
from .cuda_bound_params import Prepared, bind_parameters
from .cuda_packed_params import PackedParams
from .cuda_parameters import (
    flattener,
    kernel_parameters,
    launch_value,
    selector,
    tensor_map_maker,
)
from .cuda_prepared_calls import prepared_launch
from .globals_check import check_globals, globals_checker
from .host_arrays import describe
from .jit_hooks import CompileSite
from .specialization import Specialization, launch_specialization
from .tensor_descriptor import TensorDescriptor
from .tuple_arguments import all_leaves, is_tuple, spread


def is_cuda_tensor(value) -> bool:
    """Whether `value` is a torch tensor in GPU memory, or a host tensor descriptor of one."""
    if isinstance(value, TensorDescriptor):
        value = value.base
    device = getattr(value, "device", None)
    return getattr(device, "type", None) == "cuda" and hasattr(value, "data_ptr")


def any_cuda_tensor(values) -> bool:
    return any(is_cuda_tensor(v) for v in values)


def stream_reader():
    """`stream(device) -> int`: the device's current torch stream. torch's private
    `_cuda_getCurrentRawStream` returns the raw handle without making a Stream object (which
    costs microseconds per launch); None without torch (stream 0, the legacy default)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw
    return lambda device: torch.cuda.current_stream(device).cuda_stream


@dataclass(frozen=True)
class _Compiled:
    """A specialization's kernel, which of the runtime values it takes (an integer equal to 1
    or a None became a constant), and the globals its code read."""

    kernel: cuda_driver.CubinKernel
    select: object  # runtime values -> the kernel's arguments (None: all of them, as they are)
    pointers: tuple[int, ...]  # positions of the kernel's pointer arguments
    globals_used: dict | None = None
    debug: bool = False  # compiled in debug mode: takes each pointer's extent (see below)
    source: object = None  # the CompiledKernel (compiled_kernel.py): what a launch returns
    flatten: object = None  # the binder's values -> runtime values (tuples' leaves spread)
    scratch: int = 0  # global scratch bytes per program, the last parameter (global_scratch.py)
    # the runtime value each kernel parameter takes, where each takes one as it is (no
    # descriptor, tuple or scratch): what lets a bound launch pack its fixed ones once
    taken: tuple | None = None

    def arguments(self, runtime: tuple) -> tuple:
        return runtime if self.select is None else self.select(runtime)


class CudaLauncher:
    """The compiled kernels of one JIT function on NVIDIA GPUs, by specialization: each
    compiled once, however many threads launch it first (`compiled_once`)."""

    def __init__(self, jit_function, backend=None):
        self.jit_function = jit_function
        self.constexpr_names = {p.name for p in jit_function.params if p.is_constexpr}
        self.kernels: dict = {}
        self._current_stream = stream_reader()

    def forget(self) -> None:
        """Drop every compiled kernel (the next launch compiles or loads again)."""
        self.kernels = {}

    def compiled(self, bound: dict, options, debug: bool):
        """The CompiledKernel a launch with these arguments ran."""
        spec = launch_specialization(self.jit_function, bound)
        found = self.kernels.get((spec.key, options, debug, _arch(device_of(bound))))
        return None if found is None else found.source

    def launch(self, bound: dict, grid, options, debug: bool, strict: bool = True):
        """Launch over `grid` (three sizes) with every check (the slow path); return the
        launch prepared for the hot path on this device."""
        device = device_of(bound)
        arguments = spread(bound, self.jit_function.params)
        runtime = tuple(launch_value(n, arguments[n]) for n in self._runtime_names(arguments))
        spec = launch_specialization(self.jit_function, bound)
        key = (spec.key, options, debug, _arch(device))
        compiled = compiled_once(
            self.kernels, key, lambda: self._compile(spec, options, debug, device)
        )
        if compiled.globals_used:
            check_globals(self.jit_function, compiled.globals_used)
        args = compiled.arguments(runtime)
        if compiled.debug:
            args = (*args, *_extents(args, compiled.pointers))
        stream = self._current_stream(device) if self._current_stream else 0
        if compiled.scratch:  # kept until the kernel is queued
            args = (*args, global_scratch.allocate(compiled.scratch, grid, device, stream))
        compiled.kernel.launch(grid, args, stream)
        if debug:  # the extents are the launch's own: never the hot path
            return None
        if "bf16" in compiled.kernel.signature:  # struct has no bfloat16: the slow path rounds
            return None
        return fast_cuda_launch(self, compiled, device)

    def _runtime_names(self, arguments: dict) -> list[str]:
        """The names of the runtime values of a launch (`arguments` by name, tuples spread):
        every parameter's but the constexprs' (a runtime value may still be a constant of
        the specialization, as an integer equal to 1)."""
        return [name for name in arguments if name not in self.constexpr_names]

    def _compile(self, spec: Specialization, options, debug: bool, device: int) -> _Compiled:
        """Compile this specialization for `device` (compiler.py)."""
        target = _arch(device)
        compiled = compile_specialization(
            self.jit_function, spec, target, compile_options(options, debug), CompileSite(device)
        )
        metadata = compiled.metadata
        signature = spread(metadata["signature"], self.jit_function.params)
        runtime = self._runtime_names(signature)
        kept = [name for name in runtime if signature[name] != "constexpr"]
        tensor_maps = set(metadata.get("tensor_maps", ()))
        kinds, names = [], []
        for name in kept:
            part_kinds, part_names = kernel_parameters(name, signature[name], name in tensor_maps)
            kinds += part_kinds
            names += part_names
        kinds, names = tuple(kinds), tuple(names)
        pointers = tuple(i for i, kind in enumerate(kinds) if kind.startswith("*"))
        if debug:  # each pointer's extent [low, high) follows the arguments
            kinds += ("i64", "i64") * len(pointers)
            names += tuple(f"the extent of {names[i]}" for i in pointers for _ in "lh")
        scratch = metadata.get("global_scratch_size", 0)
        if scratch:  # the last parameter (global_scratch.py)
            kinds += ("*i8",)
            names += ("the launch's global scratch",)
        kernel = cuda_driver.CubinKernel(
            compiled.asm["cubin"],
            metadata["name"],
            kinds,
            num_warps=metadata.get("num_warps", options.num_warps),
            shared=metadata.get("shared", 0),
            arg_names=names,
            ptx=compiled.asm.get("ptx"),
            attributes=launch_attributes.names(options.launch_pdl, options.launch_cooperative_grid),
        )
        # Loaded on the launch's device now, between the kernel load hooks where any is set.
        launch_hooks.loading(compiled, lambda: (kernel, kernel.function(device)))
        indexes = [runtime.index(name) for name in kept]
        descriptors = {
            runtime.index(n): tensor_map_maker(n, signature[n]) if n in tensor_maps else None
            for n in kept
            if signature[n].startswith("tensordesc")
        }
        select = selector(indexes, len(runtime), descriptors)
        params = [p.name for p in self.jit_function.params if not p.is_constexpr]
        tuples = [is_tuple(metadata["signature"].get(name)) for name in params]
        flatten = flattener(tuples) if any(tuples) else None
        plain = not descriptors and flatten is None and not scratch and not debug
        taken = tuple(indexes) if plain else None
        return _Compiled(
            kernel,
            select,
            pointers,
            compiled.globals_used,
            debug,
            compiled,
            flatten,
            scratch,
            taken,
        )


def fast_cuda_launch(launcher: CudaLauncher, compiled: _Compiled, device: int):
    """A specialization's launch on one device for the hot path (see the module doc), which
    `launch(dims, values, arguments=None)` runs over `dims` with the binder's launch `values`,
    or returns False (nothing launched) when the slow path must say what is wrong (a grid beyond
    CUDA's limits, an integer that does not fit its parameter) or the kernel was forgotten
    (`CudaLauncher.forget` replaced the launcher's table). The parameter block is per thread
    (another thread's launch must not write it before the driver has read it). The driver
    calls are one native call where cuda_native_launch.py's function is at hand and the kernel
    has no launch attributes, else the driver module's. It holds the compiled kernel (its
    module, loaded on `device`); `launch.bind` makes bound launches (cuda_bound_params.py)."""
    kernel = compiled.kernel
    function = kernel.function(device)
    # Never false once it ran: the caller would take that for "declined" and launch again.
    ran = compiled.source if compiled.source is not None else True
    prepared = Prepared(
        launcher,
        launcher.kernels,
        globals_checker(launcher.jit_function, compiled.globals_used or {}),
        launcher._current_stream or _default_stream,
        device,
        _driver_launch(kernel, function),
        ran,
        kernel.signature,
        compiled.taken,
        PackedParams,
        function,
        kernel.threads,
        kernel.shared,
    )
    native = None if kernel.attributes else cuda_native_launch.native_launch()
    launch = prepared_launch(prepared, compiled.select, compiled.flatten, compiled.scratch, native)
    launch.compiled = compiled  # kept alive with the launch, not read on it
    taken = compiled.taken
    if taken is not None and len(taken) == len(kernel.signature) and not kernel.attributes:
        launch.bind = functools.partial(bind_parameters, prepared)
    return launch


def _driver_launch(kernel, function):
    """The driver's launch of `kernel` on `function`'s device: cuLaunchKernelEx where it has
    launch attributes (launch_attributes.py; such a launch is never bound), else
    cuLaunchKernel."""
    if kernel.attributes:
        threads, shared = kernel.threads, kernel.shared
        return launch_attributes.fast_launch(function, threads, shared, kernel.attributes)
    return cuda_driver.fast_launch(function, kernel.threads, kernel.shared)


def _default_stream(device: int) -> int:
    """Stream 0 (the legacy default stream), where torch is not imported."""
    return 0


def device_of(bound: dict) -> int:
    """The device of the first CUDA tensor among the arguments, descriptors' and tuples'
    included (the driver checks that the others agree)."""
    for value in all_leaves(bound.values()):
        if is_cuda_tensor(value):
            tensor = value.base if isinstance(value, TensorDescriptor) else value
            return tensor.device.index or 0
    return cuda_driver.current_device()


def _arch(device: int) -> str:
    """The target name kernels for `device` are compiled for ('cuda:sm_90a', ...): the
    device's own, or an older architecture's that `NAIAD_CUDA_ARCH` (Triton's
    `TRITON_OVERRIDE_ARCH`, `knobs.runtime.override_arch`) names; its PTX runs on a newer
    device: the driver compiles it there, `CubinKernel`."""
    major, minor = cuda_driver.device_properties(device).capability
    return nv_target.target_for_device(major, minor, knobs.cuda_arch.get()).name


def _extents(args: tuple, pointers: tuple[int, ...]) -> tuple[int, ...]:
    """Debug mode's hidden arguments (backends/nvidia/lowering/bounds.py): for each pointer
    argument, the bytes `[low, high)` around its data pointer that its torch storage allows, as
    the CPU path passes them (cpu_launcher.py). A None argument is no pointer argument: it was
    specialized as a constant."""
    values = []
    for i in pointers:
        array = describe(args[i])
        low = array.storage_base - array.data_ptr
        values += (low, low + array.storage_nbytes)
    return tuple(values)
