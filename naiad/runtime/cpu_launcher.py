"""Launching `@naiad.jit` kernels compiled for this machine's CPU.

Each JIT function gets one `CpuLauncher` (jit.py keeps it). A launch specializes its arguments
(specialization.py) and finds the loaded kernel of that specialization (in memory), else
compiles it (runtime/compiler.py: TTIR → Linalg → LLVM → object code, through the disk cache;
the options the CPU's compile reads - debug mode, assertions - are part of the key,
`cpu_options`) and links the object into the process once. Each launch packs
the parameter block (cpu_parameters.py: grid size, then one 8-byte slot per argument of the
compiled function, then the extent of each pointer argument, then the bytes from which a
program streams its stores: cpu_streaming.py) and runs the grid on the worker pool. A global
the kernel read at compile time that has changed since is an error, as in Triton. Later
launches take the hot path (cpu_fast_launch.py); a small first launch may run in the
interpreter while the kernel compiles in the background (cpu_tiering.py).
"""

from __future__ import annotations

import math
import sys
import warnings
from dataclasses import dataclass

from .. import compile_profile
from ..backends.registry import CompileOptions
from ..errors import KernelNotImplementedError
from . import (
    cpu_compile_from_source,
    cpu_objects,  # noqa: F401  (the disk cache keeps the runtime's own objects)
    cpu_tiering,
    launch_hooks,
    ttir_work,
)
from .compile_lock import compile_lock, compiled_once
from .compiled_kernel import CompiledKernel
from .compiled_later import CompiledLater
from .compiler import begin_compile, compile_specialization, debug_info_options
from .cpu_fast_launch import FastCpuLaunch
from .cpu_inline_grid import inline_programs
from .cpu_run import host_pointers, run_launchable
from .cpu_streaming import stream_threshold
from .globals_check import check_globals
from .interpreter.launch import run_grid
from .jit_hooks import CompileSite
from .launchers import INTERPRET
from .specialization import launch_specialization
from .tuple_arguments import spread

_ABSENT = object()
_LAUNCH = CompileSite("cpu")  # a launch's compiles call the JIT hooks (jit_hooks.py)


@dataclass
class CpuLaunchable:
    """A compiled kernel linked into the process, with what a launch needs."""

    kernel: CompiledKernel
    entry: int
    loaded: object  # keeps the object code mapped
    _prepared: object = None  # its FastCpuLaunch, made on first request (False: none)
    _stream_threshold: int | None = None
    _inline_programs: int | None = None

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
    def stream_threshold(self) -> int:
        """The bytes a launch's stores must write for it to stream the kernel's unhinted
        stores (the knob is read once, at the first launch)."""
        if self._stream_threshold is None:
            self._stream_threshold = stream_threshold()
        return self._stream_threshold

    @property
    def inline_programs(self) -> int:
        """The largest grid run on the launching thread alone, without waking the pool's
        workers: any grid of a kernel that prints (its lines come in program order), else a
        grid whose work is small (cpu_inline_grid.py)."""
        if self._inline_programs is None:
            prints = self.kernel.metadata.get("prints")
            programs = sys.maxsize if prints else inline_programs(self.kernel.asm.get("ttgir"))
            self._inline_programs = programs
        return self._inline_programs

    @property
    def scratch_bytes(self) -> int:
        return self.kernel.metadata["scratch_bytes"]

    @property
    def sites(self) -> list:
        return self.kernel.metadata["sites"]

    def prepared(self, launcher):
        """Its hot-path launch (`FastCpuLaunch`); None where host descriptors are arguments."""
        if self._prepared is None:
            self._prepared = FastCpuLaunch.prepare(launcher, self) or False
        return self._prepared or None


def load_launchable(kernel: CompiledKernel) -> CpuLaunchable:
    """`kernel` (compiled for this CPU) linked into the process."""
    from ..backends.cpu.loader import load_object
    from ..backends.cpu.perf_map import kernel_label

    metadata, name = kernel.metadata, kernel.metadata["entry"]
    label = kernel_label(name, metadata.get("signature", {}), metadata.get("constexprs", {}))

    def load():
        loaded = load_object(kernel.binary, [name], name, label)
        return loaded, loaded.address(name)

    loaded, entry = launch_hooks.loading(kernel, load)  # between the load hooks, if set
    return CpuLaunchable(kernel, entry, loaded)


class CpuLauncher:
    """The CPU kernels of one JIT function, loaded, by specialization and compile options; each
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
        self, bound: dict, options, strict: bool = True, grid: tuple | None = None
    ) -> CpuLaunchable | None:
        """The loaded kernel of this specialization (compiled on first use). Unless `strict`,
        a kernel using something the CPU back end does not compile yet gives None (run it in
        the interpreter), with a warning naming it, once. Given the launch's 3-D `grid`,
        unless `strict` and where tiering is on, a small launch of a kernel not compiled yet
        gives INTERPRET (cpu_tiering.py), its compile under way in the background."""
        spec = launch_specialization(self.jit_function, bound)
        key = (spec.key, options)
        found = self.kernels.get(key, _ABSENT)
        if found is not _ABSENT:
            return found
        tiered = not strict and grid is not None and cpu_tiering.mode() == "auto"
        if tiered and not compile_lock.held_here():
            return self._tiered(key, spec, options, grid, bound)
        return self._wait_for_background(key) or compiled_once(
            self.kernels, key, lambda: self._make(spec, options, strict)
        )

    def _make(self, spec, options, strict: bool, begun=None):
        """Compile (or finish `begun`, an UnfinishedCompile) and load; see `kernel`."""
        jit_function = self.jit_function
        try:
            with compile_profile.compiling(jit_function.__name__, "cpu"):
                if begun is None:
                    return load_launchable(
                        compile_specialization(jit_function, spec, "cpu", options, _LAUNCH)
                    )
                return load_launchable(begun.finish())
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

    def _tiered(self, key, spec, options, grid: tuple, bound: dict):
        """`kernel` for a launch that tiering may run in the interpreter: the first launch of a
        specialization does; a later one while it compiles takes the compile over (or waits for
        it), unless it comes after a pause with the compile not begun (`interpret_again`), so
        a kernel launched many times at once costs at most one interpreted launch more than
        without tiering."""
        while True:
            job = self._compiling.get(key)
            if job is not None and job.current():  # launched again: the compiled kernel now
                if cpu_tiering.interpret_again(job, bound, grid):
                    return INTERPRET  # (unless it comes at once, or the worker began it)
                found = cpu_tiering.finish_here(job)
                if found is not None:
                    return found
                with compile_lock:  # failed or dropped: this launch compiles instead
                    if self._compiling.get(key) is job:
                        del self._compiling[key]
                if not job.dropped:  # failed: compile here, where its error is met
                    return compiled_once(
                        self.kernels, key, lambda: self._make(spec, options, False)
                    )
            found = self._begin(key, spec, options, grid, bound)
            if found is not _ABSENT:
                return found

    def _begin(self, key, spec, options, grid: tuple, bound: dict):
        """Under the compile lock: the kernel of `key` when loaded or when its compile is not
        worth tiering (compiled here), INTERPRET when its compile goes to the background, or
        _ABSENT when another thread's background compile of it began meanwhile. A launch the
        kernel's AST says is small goes to the background before its TTIR is built
        (cpu_first_launch.py); any other is decided from the TTIR (`_begin_from_ttir`)."""
        table, compiling = self.kernels, self._compiling
        name = self.jit_function.__name__
        with compile_lock, compile_profile.compiling(name, "cpu"):
            found = table.get(key, _ABSENT)
            if found is not _ABSENT:
                return found
            job = compiling.get(key)
            if job is not None and job.current():
                return _ABSENT
            tiered = cpu_compile_from_source.tiered_from_source(
                self.jit_function, spec, options, grid, bound, _LAUNCH
            )
            if tiered is None:
                tiered = self._begin_from_ttir(key, spec, options, grid, bound)
                if not isinstance(tiered, tuple):
                    return tiered
            begun, small = tiered
            job = cpu_tiering.BackgroundJob(
                lambda background: self._finish(table, compiling, key, begun, background), small
            )
            compiling[key] = job
        cpu_tiering.submit(job)
        return INTERPRET

    def _begin_from_ttir(self, key, spec, options, grid: tuple, bound: dict):
        """`_begin` once the TTIR is built: the kernel (compiled here: read from the disk cache,
        or not worth tiering), or (the UnfinishedCompile, its `small` test) to tier."""
        table = self.kernels
        try:
            begun = begin_compile(self.jit_function, spec, "cpu", options, _LAUNCH)
        except KernelNotImplementedError:  # compiled again by `_make`, which warns
            begun = None
        if isinstance(begun, CompiledKernel):  # the disk cache had it
            table[key] = found = load_launchable(begun)
            return found
        if begun is None:
            table[key] = found = self._make(spec, options, False)
            return found
        ttir = begun.ttir
        if not ttir_work.is_small(ttir, math.prod(grid), bound, grid):
            table[key] = found = self._make(spec, options, False, begun)
            return found
        # The module is made here, not by the worker: CPython 3.11's `ast.parse` (the
        # frontend's) is not safe in two threads at once, and this thread may be in it
        # (pytest formatting a failure: "AST constructor recursion depth mismatch").
        begun.with_module()
        return begun, lambda arguments, grid: ttir_work.is_small(
            ttir, math.prod(grid), arguments, grid
        )

    @staticmethod
    def _finish(table: dict, compiling: dict, key, begun, background: bool) -> CpuLaunchable:
        """The job of a tiered compile: finish it, load it, and put it in `table` before taking
        the job out of `compiling` (so that a launch finds one or the other)."""
        stop = cpu_tiering.between_stages if background else None
        compiled = begun.finish(background, stop)
        if stop is not None:  # (as the process exits: the kernel is stored in the cache only)
            stop()
        launchable = load_launchable(compiled)
        with compile_lock:
            table[key] = launchable
            compiling.pop(key, None)
        return launchable

    def compiled(self, bound: dict, options, debug: bool):
        """The CompiledKernel a launch with these arguments ran (None: the interpreter did,
        for want of a compiled kernel). A launch that tiering ran in the interpreter while the
        kernel compiles gets the kernel to come (`CompiledLater`), as Triton's
        launch returns the compiled kernel: reading it waits for the compile."""
        options = cpu_options(options, debug)
        key = (launch_specialization(self.jit_function, bound).key, options)
        launchable = self.kernels.get(key)
        if launchable is not None:
            return launchable.kernel
        job = self._compiling.get(key)
        if job is None or not job.current():
            return None
        return CompiledLater(lambda: self._kernel_of(key, bound, options))

    def _kernel_of(self, key, bound: dict, options) -> CompiledKernel:
        """The CompiledKernel of `key`, compiled or waited for now (CompiledLater)."""
        launchable = self.kernel(bound, options, strict=False)
        if launchable is None:
            raise AttributeError(f"`{self.jit_function.__name__}` runs in the interpreter")
        return launchable.kernel

    def launch(self, bound: dict, grid, options, debug: bool, strict: bool = True):
        """Run over `grid` with `bound` arguments; return the launch prepared for the hot path
        (None: none), or INTERPRET (and nothing run) when an array argument is not in host
        memory, or, unless `strict`, when the kernel uses what the CPU back end does not
        compile yet. A launch that tiering runs in the interpreter (cpu_tiering.py) runs
        there under the CPU's language rules, and returns None (nothing prepared)."""
        arguments = spread(bound, self.jit_function.params)
        pointers = host_pointers(arguments)
        if pointers is None:
            return INTERPRET
        compiling = cpu_options(options, debug)
        launchable = self.kernel(bound, compiling, strict, grid)
        if launchable is INTERPRET:
            failure = None
            with cpu_tiering.interpreted_launch():
                try:
                    run_grid(self.jit_function, bound, grid, debug, _cpu_language(compiling))
                except Exception as exc:  # (raised below, outside this handler's context)
                    failure = exc
            if failure is not None:  # the compile's own error first, if it meets one
                spec = launch_specialization(self.jit_function, bound)
                cpu_compile_from_source.raise_compile_error(self.jit_function, spec, compiling)
                raise failure
            return None
        if launchable is None:
            return INTERPRET
        if launchable.globals_used:
            check_globals(self.jit_function, launchable.globals_used)
        run_launchable(launchable, arguments, grid, pointers, self.jit_function.__name__)
        if debug:  # debug launches pass extents the slow path computes: never the hot path
            return None
        return launchable.prepared(self)


def cpu_options(options, debug: bool) -> CompileOptions:
    """The compile options of a CPU launch with launch `options` (LaunchOptions; None: the
    defaults) in debug mode or not: only those the CPU's compile reads, the assertions and
    `num_warps`, which a kernel may read (`tl.extra.cuda.num_warps()`, `num_threads()`).
    Launches differing in the others (`num_stages`) share one kernel; launches differing in
    `num_warps` build their TTIR apart and share the compiled code wherever it does not read
    it (the disk cache keys the code by its TTIR). The debug info settings are read too."""
    return CompileOptions(
        debug=debug,
        asserts=bool(getattr(options, "asserts", False)),
        sanitize_overflow=bool(getattr(options, "sanitize_overflow", True)),
        num_warps=getattr(options, "num_warps", None) or 4,
        **debug_info_options(),
    )


def _cpu_language(options: CompileOptions):
    """The language's rules for this machine's CPU (what a compiled launch would have)."""
    from ..backends import registry

    backend, target = registry.lookup("cpu")
    return backend.language_target(target, options)
