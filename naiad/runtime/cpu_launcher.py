"""Launching `@naiad.jit` kernels compiled for this machine's CPU.

Each JIT function gets one `CpuLauncher` (jit.py keeps it). A launch specializes its arguments
(specialization.py) and finds the loaded kernel of that specialization (in memory), else
compiles it (runtime/compiler.py: TTIR → Linalg → LLVM → object code, through the disk cache;
debug mode is part of the key) and links the object into the process once. Each launch packs
the parameter block (abi.py: grid size, then one 8-byte slot per argument of the compiled
function, then the extent of each pointer argument, then whether the launch streams its
stores: cpu_streaming.py) and runs the grid on the worker pool. A global the kernel read at
compile time that has changed since is an error, as in Triton.

Every access is checked against its argument's extent (middle/linalg/bounds_checks.py), debug
mode or not, so the hot path reads each array's storage at every launch too: a NumPy array
that owns its data is its own storage, a torch tensor's is one call away (`extent`).
"""

from __future__ import annotations

import ctypes
import struct
import threading
import warnings
from dataclasses import dataclass

import numpy as np

from .. import compile_profile
from ..errors import KernelNotImplementedError
from . import (
    cpu_objects,  # noqa: F401  (the disk cache keeps the runtime's own objects)
    cpu_tiering,
)
from .binder import tensor_type
from .compiler import (
    CompiledKernel,
    begin_compile,
    compile_lock,
    compile_options,
    compile_specialization,
    compiled_once,
)
from .cpu_streaming import streaming_grid
from .globals_check import check_globals, globals_checker
from .host_arrays import describe, is_array_like
from .interpreter.launch import run_grid
from .launchers import INTERPRET
from .specialization import Specialization
from .tensor_descriptor import TensorDescriptor

_ABSENT = object()


@dataclass
class CpuLaunchable:
    """A compiled kernel linked into the process, with what a launch needs."""

    kernel: CompiledKernel
    entry: int
    loaded: object  # keeps the object code mapped
    _prepared: object = None  # its FastCpuLaunch, made on first request (False: none)
    _stream_from: int | None = None

    @property
    def arguments(self) -> list:
        """[name, kind] per argument of the compiled function."""
        return self.kernel.metadata["arguments"]

    @property
    def written(self) -> frozenset:
        """The pointer arguments it may store through."""
        return frozenset(self.kernel.metadata["written"])

    @property
    def globals_used(self) -> dict:
        return self.kernel.globals_used

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

    def prepared(self, launcher):
        """Its launch for the hot path (`FastCpuLaunch`), or None where its arguments are not
        all the binder's launch values (host tensor descriptors)."""
        if self._prepared is None:
            self._prepared = FastCpuLaunch.prepare(launcher, self) or False
        return self._prepared or None


def _load(kernel: CompiledKernel) -> CpuLaunchable:
    from ..backends.cpu.loader import load_object

    loaded = load_object(kernel.binary, [name := kernel.metadata["entry"]], name)
    return CpuLaunchable(kernel, loaded.address(name), loaded)


class CpuLauncher:
    """The CPU kernels of one JIT function, loaded, by specialization and debug mode; each
    compiled and loaded once, however many threads launch it first (`compiled_once`), whether
    it compiles in the launching thread or in the background (cpu_tiering.py: `_compiling`
    holds the background compiles under way, by key, until their kernel is in the table)."""

    def __init__(self, jit_function, backend=None):
        self.jit_function = jit_function
        self.kernels: dict = {}
        self._compiling: dict = {}

    def forget(self) -> None:
        """Drop every loaded kernel: prepared launches of the old ones decline from now on
        (they compare tables), so the next launch compiles or loads again."""
        self.kernels = {}
        self._compiling = {}

    def kernel(
        self, bound: dict, debug: bool, strict: bool = True, n_programs: int | None = None
    ) -> CpuLaunchable | None:
        """The loaded kernel of this specialization (compiled on first use). Unless `strict`,
        a kernel using something the CPU back end does not compile yet gives None (run it in
        the interpreter), with a warning naming it, once. Given the launch's `n_programs`,
        unless `strict` and where tiering is on, a small launch of a kernel not compiled yet
        gives INTERPRET (cpu_tiering.py), its compile under way in the background."""
        spec = Specialization.of(self.jit_function, bound)
        key = (spec.key, debug)
        found = self.kernels.get(key, _ABSENT)
        if found is not _ABSENT:
            return found
        tiered = not strict and n_programs is not None and cpu_tiering.mode() == "auto"
        if tiered and not compile_lock.held_here():
            return self._tiered(key, spec, debug, n_programs)
        return self._wait_for_background(key) or compiled_once(
            self.kernels, key, lambda: self._make(spec, debug, strict)
        )

    def _make(self, spec, debug: bool, strict: bool, begun=None):
        """Compile (or finish `begun`, an UnfinishedCompile) and load; see `kernel`."""
        jit_function, options = self.jit_function, compile_options(None, debug)
        try:
            with compile_profile.compiling(jit_function.__name__, "cpu"):
                if begun is None:
                    return _load(compile_specialization(jit_function, spec, "cpu", options))
                return _load(begun.finish())
        except KernelNotImplementedError as error:
            if strict:
                raise
            warnings.warn(
                f"`{jit_function.__name__}` runs in the interpreter: {error}",
                RuntimeWarning,
                stacklevel=6,  # the user's launch: entry, run, _run_slow, _launch, launch, ...
            )
            return None

    def _wait_for_background(self, key):
        """The kernel of `key` once its background compile (if one is under way) is done;
        None when there is none, or it failed (the caller compiles, and meets the error), or
        this thread holds the compile lock, which the background compile needs."""
        job = self._compiling.get(key)
        if job is None or not job.current() or compile_lock.held_here():
            return None
        return cpu_tiering.finish_here(job)

    def _tiered(self, key, spec, debug: bool, n_programs: int):
        """`kernel` for a launch that tiering may run in the interpreter: only the first launch
        of a specialization does; a second one while it compiles takes the compile over (or
        waits for it), so a kernel launched many times at once costs at most one interpreted
        launch more than without tiering."""
        while True:
            job = self._compiling.get(key)
            if job is not None and job.current():  # launched again: the compiled kernel now
                found = cpu_tiering.finish_here(job)
                if found is not None:
                    return found
                with compile_lock:  # failed or dropped: this launch compiles instead
                    if self._compiling.get(key) is job:
                        del self._compiling[key]
                if not job.dropped:  # failed: compile here, where its error is met
                    return compiled_once(self.kernels, key, lambda: self._make(spec, debug, False))
            found = self._begin(key, spec, debug, n_programs)
            if found is not _ABSENT:
                return found

    def _begin(self, key, spec, debug: bool, n_programs: int):
        """Under the compile lock: the kernel of `key` when loaded or when its compile is not
        worth tiering (compiled here), INTERPRET when its compile goes to the background, or
        _ABSENT when another thread's background compile of it began meanwhile."""
        table, compiling = self.kernels, self._compiling
        name = self.jit_function.__name__
        with compile_lock, compile_profile.compiling(name, "cpu"):
            found = table.get(key, _ABSENT)
            if found is not _ABSENT:
                return found
            job = compiling.get(key)
            if job is not None and job.current():
                return _ABSENT
            try:
                begun = begin_compile(self.jit_function, spec, "cpu", compile_options(None, debug))
            except KernelNotImplementedError:  # compiled again by `_make`, which warns
                begun = None
            if isinstance(begun, CompiledKernel):  # the disk cache had it
                table[key] = found = _load(begun)
                return found
            if begun is None:
                table[key] = found = self._make(spec, debug, False)
                return found
            if not cpu_tiering.is_small(begun.ttir, n_programs):
                table[key] = found = self._make(spec, debug, False, begun)
                return found
            job = cpu_tiering.BackgroundJob(
                lambda background: self._finish(table, compiling, key, begun, background)
            )
            compiling[key] = job
        cpu_tiering.submit(job)
        return INTERPRET

    @staticmethod
    def _finish(table: dict, compiling: dict, key, begun, background: bool) -> CpuLaunchable:
        """The job of a tiered compile: finish it, load it, and put it in `table` before taking
        the job out of `compiling` (so that a launch finds one or the other)."""
        launchable = _load(begun.finish(background=background))
        with compile_lock:
            table[key] = launchable
            compiling.pop(key, None)
        return launchable

    def compiled(self, bound: dict, options, debug: bool):
        """The CompiledKernel a launch with these arguments ran (None: the interpreter did,
        for want of a compiled kernel). A launch that tiering ran in the interpreter while the
        kernel compiles gets the kernel to come (`cpu_tiering.CompiledLater`), as Triton's
        launch returns the compiled kernel: reading it waits for the compile."""
        key = (Specialization.of(self.jit_function, bound).key, debug)
        launchable = self.kernels.get(key)
        if launchable is not None:
            return launchable.kernel
        job = self._compiling.get(key)
        if job is None or not job.current():
            return None
        return cpu_tiering.CompiledLater(lambda: self._kernel_of(key, bound, debug))

    def _kernel_of(self, key, bound: dict, debug: bool) -> CompiledKernel:
        """The CompiledKernel of `key`, compiled or waited for now (CompiledLater)."""
        launchable = self.kernel(bound, debug, strict=False)
        if launchable is None:
            raise AttributeError(f"`{self.jit_function.__name__}` runs in the interpreter")
        return launchable.kernel

    def launch(self, bound: dict, grid, options, debug: bool, strict: bool = True):
        """Run over `grid` with `bound` arguments; return the launch prepared for the hot path
        (None: none), or INTERPRET (and nothing run) when an array argument is not in host
        memory, or, unless `strict`, when the kernel uses what the CPU back end does not
        compile yet. A launch that tiering runs in the interpreter (cpu_tiering.py) runs
        there under the CPU's language rules, and returns None (nothing prepared)."""
        from ..backends.cpu import pool

        pointers = _host_pointers(bound)
        if pointers is None:
            return INTERPRET
        addresses, read_only = pointers
        n_programs = grid[0] * grid[1] * grid[2]
        launchable = self.kernel(bound, debug, strict, n_programs)
        if launchable is INTERPRET:
            run_grid(self.jit_function, bound, grid, debug, _cpu_language(debug))
            return None
        if launchable is None:
            return INTERPRET
        for name in read_only & launchable.written:
            raise ValueError(
                f"argument `{name}` is read-only, and `{self.jit_function.__name__}` stores "
                "through it"
            )
        if launchable.globals_used:
            check_globals(self.jit_function, launchable.globals_used)
        stream = n_programs >= launchable.stream_from
        params = pack_parameters(launchable.arguments, bound, grid, addresses, stream)
        threads = 1 if launchable.kernel.metadata.get("prints") else None  # prints in order
        pool.run(
            launchable.entry,
            params,
            n_programs,
            launchable.scratch_bytes,
            launchable.sites,
            threads,
        )
        if debug:  # debug launches pass extents the slow path computes: never the hot path
            return None
        return launchable.prepared(self)


def _cpu_language(debug: bool):
    """The language's rules for this machine's CPU (what a compiled launch would have)."""
    from ..backends import registry

    backend, target = registry.lookup("cpu")
    return backend.language_target(target, compile_options(None, debug))


def _host_pointers(bound: dict):
    """The data address of every array argument, and the names of the read-only ones; None
    when an array is not in host memory."""
    addresses, read_only = {}, set()
    for name, value in bound.items():
        if not is_array_like(value) or isinstance(value, TensorDescriptor):
            continue
        array = describe(value)
        if array.device != "cpu":
            return None
        addresses[name] = array.data_ptr
        if not array.writable:
            read_only.add(name)
    return addresses, read_only


class FastCpuLaunch:
    """A CPU specialization's launch on the hot path (jit.py): the binder's launch values
    (binder.py) become the parameter block of abi.py, and the grid runs on the pool. It lives
    as long as its launcher's table of loaded kernels (`CpuLauncher.forget` replaces it, so
    the next launch takes the slow path and loads them again), and checks the kernel's
    globals at every launch. It holds its kernel (`_launchable`, which
    holds the loaded object): the code it calls stays mapped while anyone can call it, even
    when another thread drops the table, or the table's entry, between the check and the run.
    It reads the extent of each array argument at every launch (`extent`), from the arguments
    as given. Debug launches are never prepared: they run seldom, and should stay simple."""

    __slots__ = (
        "_block",
        "_check",
        "_entry",
        "_launchable",
        "_launcher",
        "_local",
        "_pack",
        "_pointers",
        "_run",
        "_scratch",
        "_select",
        "_sites",
        "_stream_from",
        "_table",
        "_tensor",
        "_threads",
    )

    def __init__(self, launcher: CpuLauncher, launchable: CpuLaunchable, select, pointers):
        from ..backends.cpu import pool

        jit_function = launcher.jit_function
        self._launcher = launcher
        self._table = launcher.kernels
        self._check = globals_checker(jit_function, launchable.globals_used)
        slots = 3 + len(launchable.arguments) + 2 * len(pointers) + 1
        self._block = ctypes.c_int64 * slots
        self._pack = struct.Struct(f"={slots}q").pack_into  # native: the kernel reads it
        self._local = threading.local()
        self._pointers = pointers  # the runtime index of each pointer argument, in slot order
        self._tensor = tensor_type()
        self._stream_from = launchable.stream_from
        self._select = select
        self._run = pool.run
        self._entry = launchable.entry
        self._launchable = launchable  # keeps `_entry` mapped
        self._scratch = launchable.scratch_bytes
        self._sites = launchable.sites
        self._threads = 1 if launchable.kernel.metadata.get("prints") else None

    @classmethod
    def prepare(cls, launcher: CpuLauncher, launchable: CpuLaunchable):
        """The launch of `launchable`, or None when one of its arguments is not a launch value
        of the binder (the parts of a tensor descriptor)."""
        jit_function = launcher.jit_function
        runtime = [p.name for p in jit_function.params if not p.is_constexpr]
        slots = []
        for name, kind in launchable.arguments:
            if name not in runtime:
                return None
            param = jit_function.params_by_name[name]
            slots.append((runtime.index(name), _slot_converter(kind, param.annotation)))
        pointers = [runtime.index(name) for name, kind in launchable.arguments if kind == "ptr"]
        if [index for index, _ in slots] == list(range(len(runtime))) and not any(
            convert for _, convert in slots
        ):
            return cls(launcher, launchable, None, pointers)

        def select(values):
            return [values[i] if convert is None else convert(values[i]) for i, convert in slots]

        return cls(launcher, launchable, select, pointers)

    def __call__(self, dims, values, arguments=None):
        """Run over `dims` (three sizes) with the binder's `values` and the `arguments` they
        come from (binder.py); return the CompiledKernel, or False (nothing run) when the kernel
        has been forgotten since it was prepared, or no arguments give the arrays' extents."""
        if self._launcher.kernels is not self._table or arguments is None:
            return False
        if self._check is not None:
            self._check()
        extents = []
        tensor = self._tensor
        for i in self._pointers:  # `extent`, its two common cases inline (this is per launch)
            value = arguments[i]
            kind = type(value)
            if kind is np.ndarray and value.base is None:
                extents += (0, value.nbytes)
            elif kind is tensor:
                storage = value.untyped_storage()
                low = storage.data_ptr() - values[i]
                extents += (low, low + storage.nbytes())
            else:
                extents += extent(value, values[i], tensor)
        if self._select is not None:
            values = self._select(values)
        n_programs = dims[0] * dims[1] * dims[2]
        stream = n_programs >= self._stream_from
        block = self._block_of_this_thread()
        try:  # one pack into a block made once per thread: 3x faster than a new ctypes array
            self._pack(block, 0, dims[0], dims[1], dims[2], *values, *extents, stream)
        except struct.error:  # not an int64 (an unsigned one past 2**63): as ctypes converts it
            block = self._block(dims[0], dims[1], dims[2], *values, *extents, stream)
        self._run(self._entry, block, n_programs, self._scratch, self._sites, self._threads)
        return self._launchable.kernel  # the CompiledKernel that ran: what a launch returns

    def _block_of_this_thread(self):
        """This thread's parameter block: the pool reads it during the launch, which another
        thread's launch must not overwrite."""
        try:
            return self._local.block
        except AttributeError:
            block = self._local.block = self._block()
            return block


def _slot_converter(kind: str, annotation):
    """How a launch value of a compiled argument of `kind` becomes its 8-byte slot: None when
    it already is one (a pointer's address, an int the binder keyed as 32-bit)."""
    if kind in ("f32", "f64", "f16", "bf16"):
        return lambda value: _float_bits(kind, float(value))
    if kind == "i64" or (kind != "ptr" and annotation is not None):
        return lambda value: _signed64(int(value))
    return None


def pack_parameters(arguments, bound: dict, grid, addresses=None, stream=False) -> np.ndarray:
    """The parameter block of abi.py: grid size, then one slot per compiled argument
    (`addresses`: the data addresses of array arguments, when already known), then the extent
    of each pointer argument, then whether the launch streams its stores."""
    values = _expand_descriptors(bound)
    slots = [grid[0], grid[1], grid[2]]
    for name, kind in arguments:
        known = None if addresses is None else addresses.get(name)
        slots.append(_signed64(known) if known is not None else _slot(name, kind, values[name]))
    for name, kind in arguments:
        if kind == "ptr":
            slots += extent(values[name])
    slots.append(int(stream))
    return np.array(slots, dtype=np.int64)


def extent(value, address: int | None = None, tensor: type | None = None) -> tuple[int, int]:
    """The bytes `[low, high)` around an array's data pointer (`address`, when known) that its
    storage allows (abi.py); empty for a null pointer. Quick where the hot path meets them: a
    NumPy array that owns its data (no base) is exactly its storage, and a `tensor` (torch's
    class, when imported: binder.tensor_type) has its storage read directly; anything else is
    described (host_arrays.py)."""
    if value is None:
        return 0, 0
    kind = type(value)
    if kind is np.ndarray and value.base is None:
        return 0, value.nbytes
    if kind is tensor and address is not None:
        storage = value.untyped_storage()
        low = storage.data_ptr() - address
        return low, low + storage.nbytes()
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
