"""Launching `@naiad.jit` kernels compiled for this machine's CPU.

    launch_cpu(jit_function, bound_arguments, grid, debug)

A launch finds the compiled kernel of its specialization (in memory, per JIT function), else
builds the TTIR, looks the object code up in the disk cache by the hash of that TTIR and the
target (so an edited kernel, pass or code generator never serves a stale binary; cache.py), and
compiles it on a miss (debug mode is part of the key). The object is linked into the process
once; each launch packs the parameter block (abi.py: grid size, then one 8-byte slot per argument
of the compiled function, then in debug mode the extent of each pointer argument, then whether
the launch streams its stores: cpu_streaming.py) and runs the grid on the worker pool. A global
the kernel read at compile time that has changed since is an error, as in Triton.
"""

from __future__ import annotations

import ctypes
import json
import struct
import warnings
from dataclasses import dataclass

import numpy as np

from ..errors import KernelNotImplementedError
from ..tools.tensor_descriptor import TensorDescriptor
from .cache import Cache, cache_key
from .compiler import CompiledKernel, TTIRBuild, build_ttir, compiled_once, dump_stages
from .cpu_streaming import streaming_grid
from .globals_check import check_globals, globals_checker
from .host_arrays import describe, is_array_like
from .params import integer_argument_type

_OBJECT = "kernel.o"
_STAGES = ("linalg", "llir")


class Stages(dict):
    """A kernel's `asm`: every stage's text, the assembly made the first time it is read."""

    def __init__(self, stages: dict, target):
        super().__init__(stages)
        self._target = target

    def __missing__(self, stage: str) -> str:
        if stage != "asm" or "llir" not in self:
            raise KeyError(stage)
        from ..backends.cpu.compiler import assembly

        self[stage] = text = assembly(self["llir"], self._target)
        return text


@dataclass
class CpuLaunchable:
    """A compiled kernel linked into the process, with what a launch needs."""

    kernel: CompiledKernel
    entry: int
    loaded: object  # keeps the object code mapped
    arguments: list  # (name, kind) per argument of the compiled function
    globals_used: dict
    written: frozenset  # the arguments it may store to
    _prepared: object = None  # its FastCpuLaunch, made on first request (False: none)
    _stream_from: int | None = None

    @property
    def stream_from(self) -> int:
        """The grid size from which a launch streams the kernel's unhinted stores."""
        if self._stream_from is None:
            self._stream_from = streaming_grid(self.kernel.metadata.get("stream_bytes", 0))
        return self._stream_from

    @property
    def scratch_bytes(self) -> int:
        return self.kernel.metadata["scratch_bytes"]

    @property
    def sites(self) -> list:
        return self.kernel.metadata["sites"]

    def prepared(self, jit_function):
        """Its launch for the hot path (`FastCpuLaunch`), or None where its arguments are not
        all the binder's launch values (host tensor descriptors)."""
        if self._prepared is None:
            self._prepared = FastCpuLaunch.prepare(jit_function, self) or False
        return self._prepared or None


_cache: Cache | None = None


def _disk_cache() -> Cache:
    global _cache
    if _cache is None:
        _cache = Cache()
    return _cache


def compile_cpu_stages(build: TTIRBuild, target_name: str = "cpu") -> None:
    """Add the CPU stages to `build.kernel` (its asm, metadata and binary), from the disk cache
    when it has them."""
    from ..backends.cpu.compiler import compile_cpu
    from ..backends.cpu.target import cpu_target

    target = cpu_target(target_name)
    kernel = build.kernel
    debug = bool(kernel.metadata.get("debug"))
    key = cache_key(
        {
            "ttir": kernel.asm["ttir"],
            "target": target.description(),
            "backend": "cpu",
            "debug": debug,
        }
    )
    cache = _disk_cache()
    entry = cache.get(key)
    if entry is None:
        arguments = _argument_kinds(build.module)
        written = _written_arguments(build.module, arguments)
        compiled = compile_cpu(build.module, target, debug)
        metadata = {**compiled.metadata, "arguments": arguments, "written": written}
        files = {_OBJECT: compiled.obj}
        files.update({stage: compiled.asm[stage].encode() for stage in _STAGES})
        entry = cache.put(key, files, metadata)
    kernel.asm = Stages(kernel.asm, target)
    for stage in _STAGES:
        kernel.asm[stage] = entry.files[stage].decode()
    kernel.metadata.update(json.loads(json.dumps(entry.metadata)))
    kernel.binary = entry.files[_OBJECT]
    dump_stages(build)


def _argument_kinds(module) -> list:
    """(name, kind) of each argument of the kernel's `tt.func`: 'ptr', or the scalar type."""
    from ..ir import is_pointer_like
    from .evaluator.arguments import argument_names

    (func,) = list(module.regions[0].entry_block)
    return [
        [name, "ptr" if is_pointer_like(arg.type) else str(arg.type)]
        for name, arg in zip(argument_names(func), func.arguments)
    ]


def _written_arguments(module, arguments) -> list:
    """The pointer arguments the kernel may store to (all of them when a store's pointer is
    not traced to one argument), so a launch can refuse read-only arrays for them instead of
    faulting."""
    from ..dialects import tt
    from ..middle.linalg.pointer_analysis import PointerAnalysis

    (func,) = list(module.regions[0].entry_block)
    analysis = PointerAnalysis()
    names = {arg: name for arg, (name, _) in zip(func.arguments, arguments)}
    pointers = [name for name, kind in arguments if kind == "ptr"]
    written = set()
    for op in func.walk():
        if isinstance(op, tt.StoreOp | tt.AtomicRMWOp | tt.AtomicCASOp):
            base = analysis.base_of(op.ptr)
            if base not in names:
                return pointers
            written.add(names[base])
    return [name for name in pointers if name in written]


def _load(build: TTIRBuild) -> CpuLaunchable:
    from ..backends.cpu.loader import load_object

    compile_cpu_stages(build)
    kernel = build.kernel
    entry_name = kernel.metadata["entry"]
    loaded = load_object(kernel.binary, [entry_name], entry_name)
    return CpuLaunchable(
        kernel,
        loaded.address(entry_name),
        loaded,
        kernel.metadata["arguments"],
        build.globals_used,
        frozenset(kernel.metadata["written"]),
    )


def cpu_kernel(jit_function, bound: dict, debug: bool, key=None, strict: bool = True):
    """The loaded kernel of this specialization (compiled on first use); `key` is the launch's
    fingerprint when the caller has it. Unless `strict`, a kernel using something the CPU back
    end does not compile yet gives None (run it in the interpreter), with a warning naming
    it, once."""
    if key is None:
        key = _fingerprint(jit_function, bound)[0]
    kernels = jit_function.__dict__.setdefault("_cpu_kernels", {})

    def make():
        try:
            return _load(build_ttir(jit_function, bound, "cpu", debug))
        except KernelNotImplementedError as error:
            if strict:
                raise
            warnings.warn(
                f"`{jit_function.__name__}` runs in the interpreter: {error}",
                RuntimeWarning,
                stacklevel=6,  # cpu_kernel's 4, plus make and compiled_once
            )
            return None

    # Once per key, whatever the number of threads launching it first: a second copy would be
    # loaded, prepared and then dropped from the table.
    return compiled_once(kernels, (key, debug), make)


def launch_cpu(
    jit_function, bound: dict, grid: tuple[int, int, int], debug: bool, strict: bool = True
) -> CpuLaunchable | None:
    """Run `jit_function` compiled for the CPU over `grid` with `bound` arguments and return
    the kernel it ran (its `prepared()` launch serves the hot path); None (and nothing run)
    when an array argument is not in host memory, or, unless `strict`, when the kernel uses
    what the CPU back end does not compile yet."""
    from ..backends.cpu import pool

    fingerprint = _fingerprint(jit_function, bound)
    if fingerprint is None:
        return None
    key, addresses, read_only = fingerprint
    launchable = cpu_kernel(jit_function, bound, debug, key, strict)
    if launchable is None:
        return None
    for name in read_only & launchable.written:
        raise ValueError(
            f"argument `{name}` is read-only, and `{jit_function.__name__}` stores through it"
        )
    if launchable.globals_used:
        check_globals(jit_function, launchable.globals_used)
    n_programs = grid[0] * grid[1] * grid[2]
    stream = n_programs >= launchable.stream_from
    params = pack_parameters(launchable.arguments, bound, grid, addresses, debug, stream)
    threads = 1 if launchable.kernel.metadata.get("prints") else None  # prints come in order
    pool.run(
        launchable.entry, params, n_programs, launchable.scratch_bytes, launchable.sites, threads
    )
    return launchable


class FastCpuLaunch:
    """A CPU specialization's launch on the hot path (jit.py): the binder's launch values
    (binder.py) become the parameter block of abi.py, and the grid runs on the pool. It lives
    as long as its JIT function's table of loaded kernels (`_cpu_kernels`: dropping that table
    forgets compiled kernels, so the next launch takes the slow path and loads them again),
    and checks the kernel's globals at every launch. It holds its kernel (`_launchable`, which
    holds the loaded object): the code it calls stays mapped while anyone can call it, even
    when another thread drops the table, or the table's entry, between the check and the run.
    Debug launches are never prepared: they pass extents the slow path computes."""

    __slots__ = (
        "_block",
        "_check",
        "_entry",
        "_launchable",
        "_owner",
        "_run",
        "_scratch",
        "_select",
        "_sites",
        "_stream_from",
        "_table",
        "_threads",
    )

    def __init__(self, jit_function, launchable: CpuLaunchable, select):
        from ..backends.cpu import pool

        self._owner = jit_function
        self._table = jit_function.__dict__.get("_cpu_kernels")
        self._check = globals_checker(jit_function, launchable.globals_used)
        self._block = ctypes.c_int64 * (3 + len(launchable.arguments) + 1)
        self._stream_from = launchable.stream_from
        self._select = select
        self._run = pool.run
        self._entry = launchable.entry
        self._launchable = launchable  # keeps `_entry` mapped
        self._scratch = launchable.scratch_bytes
        self._sites = launchable.sites
        self._threads = 1 if launchable.kernel.metadata.get("prints") else None

    @classmethod
    def prepare(cls, jit_function, launchable: CpuLaunchable):
        """The launch of `launchable`, or None when one of its arguments is not a launch value
        of the binder (the parts of a tensor descriptor)."""
        runtime = [p.name for p in jit_function.params if not p.is_constexpr]
        slots = []
        for name, kind in launchable.arguments:
            if name not in runtime:
                return None
            param = jit_function.params_by_name[name]
            slots.append((runtime.index(name), _slot_converter(kind, param.annotation)))
        if [index for index, _ in slots] == list(range(len(runtime))) and not any(
            convert for _, convert in slots
        ):
            return cls(jit_function, launchable, None)

        def select(values):
            return [values[i] if convert is None else convert(values[i]) for i, convert in slots]

        return cls(jit_function, launchable, select)

    def __call__(self, dims, values) -> bool:
        """Run over `dims` (three sizes) with the binder's `values`; False (nothing run) when
        the kernel has been forgotten since it was prepared."""
        if self._owner.__dict__.get("_cpu_kernels") is not self._table:
            return False
        if self._check is not None:
            self._check()
        if self._select is not None:
            values = self._select(values)
        n_programs = dims[0] * dims[1] * dims[2]
        stream = n_programs >= self._stream_from
        block = self._block(dims[0], dims[1], dims[2], *values, stream)
        self._run(self._entry, block, n_programs, self._scratch, self._sites, self._threads)
        return True


def _slot_converter(kind: str, annotation):
    """How a launch value of a compiled argument of `kind` becomes its 8-byte slot: None when
    it already is one (a pointer's address, an int the binder keyed as 32-bit)."""
    if kind in ("f32", "f64", "f16", "bf16"):
        return lambda value: _float_bits(kind, float(value))
    if kind == "i64" or (kind != "ptr" and annotation is not None):
        return lambda value: _signed64(int(value))
    return None


def _fingerprint(jit_function, bound: dict):
    """One pass over the arguments: the specialization key of this launch (what Triton keys
    on: dtypes, 16-byte alignment, integers equal to 1 or divisible by 16, constexpr values)
    and the data address of every array; None if an array is not in host memory."""
    parts, addresses, read_only = [], {}, set()
    for param in jit_function.params:
        value = bound[param.name]
        if param.is_constexpr:
            parts.append(repr(value))
            continue
        if isinstance(value, bool) or value is None or isinstance(value, float):
            parts.append(type(value).__name__)
            continue
        if isinstance(value, int):
            special = not param.do_not_specialize
            parts.append(
                (
                    value == 1 and special,
                    value % 16 == 0 and special,
                    integer_argument_type(param.name, value, param.annotation),
                )
            )
            continue
        if is_array_like(value):
            array = describe(value)
            if array.device != "cpu":
                return None
            addresses[param.name] = array.data_ptr
            if not array.writable:
                read_only.add(param.name)
            parts.append((array.dtype, array.data_ptr % 16 == 0))
            continue
        parts.append(repr(value))  # a descriptor, a dtype, a tuple: keyed by its repr
    return tuple(parts), addresses, read_only


def pack_parameters(
    arguments, bound: dict, grid, addresses=None, debug=False, stream=False
) -> np.ndarray:
    """The parameter block of abi.py: grid size, then one slot per compiled argument
    (`addresses`: the data addresses of array arguments, when already known), then, for a
    kernel compiled in `debug` mode, the extent of each pointer argument, then whether the
    launch streams its stores."""
    values = _expand_descriptors(bound)
    slots = [grid[0], grid[1], grid[2]]
    for name, kind in arguments:
        known = None if addresses is None else addresses.get(name)
        slots.append(_signed64(known) if known is not None else _slot(name, kind, values[name]))
    if debug:
        for name, kind in arguments:
            if kind == "ptr":
                slots += _extent(values[name])
    slots.append(int(stream))
    return np.array(slots, dtype=np.int64)


def _extent(value) -> tuple[int, int]:
    """The bytes `[low, high)` around an array's data pointer that its storage allows (abi.py);
    empty for a null pointer."""
    if value is None:
        return 0, 0
    array = describe(value)
    low = array.storage_base - array.data_ptr
    return low, low + array.storage_nbytes


def _expand_descriptors(bound: dict) -> dict:
    """Host TensorDescriptors as the parts the frontend passes (base, shape.i, stride.i)."""
    values = dict(bound)
    for name, value in bound.items():
        if isinstance(value, TensorDescriptor):
            values[name] = value.base
            for i, (size, stride) in enumerate(zip(value.shape, value.strides)):
                values[f"{name}.shape.{i}"] = int(size)
                values[f"{name}.stride.{i}"] = int(stride)
    return values


def _slot(name: str, kind: str, value) -> int:
    if kind == "ptr":
        if value is None:
            return 0
        if not is_array_like(value):
            raise TypeError(
                f"argument `{name}` is a pointer: pass an array, not {type(value).__name__}"
            )
        array = describe(value)
        if array.device != "cpu":
            raise ValueError(
                f"argument `{name}` is on {array.device}; a kernel compiled for the CPU reads "
                "host memory"
            )
        return _signed64(array.data_ptr)
    if isinstance(value, np.generic | np.ndarray):
        value = value.item()
    if kind in ("f32", "f64", "f16", "bf16"):
        return _float_bits(kind, float(value))
    return _signed64(int(value))


def _signed64(value: int) -> int:
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value


def _float_bits(kind: str, value: float) -> int:
    if kind == "f64":
        return _signed64(struct.unpack("<Q", struct.pack("<d", value))[0])
    if kind == "f32":
        return struct.unpack("<I", struct.pack("<f", value))[0]
    from ..ir.float_format import float_to_bits

    return float_to_bits(kind, value)
