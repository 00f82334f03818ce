"""Back ends by target name: what each declares, and the table that finds one.

A back end is an object registered here and found by the prefix of a target name (`cpu`,
`cpu:aarch64` → the CPU back end; `cuda:sm_90a` → the NVIDIA one). It declares:

- `parse_target(name)`: its one target type, parsed from a name (ValueError for a bad one);
- `language_target(target, options)`: the language's `TargetInfo` for it (dot shapes, fp8, ...),
  what the frontend and the semantic layer check against;
- `stages(target, options)`: the steps after TTIR, in order, each a `Stage` that advances a
  `Compilation` and records the text of what it made in `asm` (Triton's `add_stages`);
- `cache_facts(target, options)`: what, besides the kernel's TTIR and Naiad's own source,
  decides its artifacts (the target's description, the options it reads, tool versions);
- `device_type`: the kind of memory its kernels read (`"cpu"`, `"cuda"`), by which a launch on
  such arrays finds it, and `device_target(index)`, the target of one device;
- `launcher`: where the runtime finds its launcher, as `"module:attribute"` (None: it only
  compiles). Launchers are the runtime's, so the back end names it rather than importing it;
  `binary_stage`, the stage whose output the launcher loads (`CompiledKernel.binary`).

`runtime/compiler.py` runs frontend → TTIR pipeline → a back end's stages behind one disk cache,
for every launch, `warmup()`, tool and test. A back end outside the package registers with
`register_backend` when imported, or through the entry-point group `naiad.backends` (each entry
point names a module, or a callable returning a back end), loaded the first time a target or a
device no back end registered so far takes is looked up, or every back end is listed: finding
entry points reads every installed distribution's metadata (5-20 ms), which a launch on the
package's own back ends does not wait for. docs/architecture.md shows one.
"""

from __future__ import annotations

import contextlib
import importlib
import threading
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..fork_safety import hold_across_fork

if TYPE_CHECKING:
    from ..ir import Operation


@dataclass(frozen=True)
class CompileOptions:
    """The launch options stages may read (Triton's names), and debug mode.

    `debug` is Naiad's debug mode: assertions on and every access bounds-checked (on a GPU,
    against extents the launch passes, so such launches never take the hot path). `asserts`
    turns the assertions alone on: `tl.device_assert`, and integer overflow checks unless
    `sanitize_overflow` is False. That is what Triton's own `debug` option means, as
    `triton.compile` takes it (Inductor compiles every kernel so, for its indexing asserts)."""

    num_warps: int = 4
    num_ctas: int = 1
    num_stages: int = 3
    maxnreg: int | None = None
    debug: bool = False
    enable_fp_fusion: bool = True
    asserts: bool = False
    sanitize_overflow: bool = True
    extern_libs: tuple[tuple[str, str], ...] = ()  # (name, bitcode path), a CUDA kernel links
    # Source lines in the LLVM IR and what follows (debug_info.py): NAIAD_DISABLE_LINE_INFO
    # unset; and descriptions of the kernel's named values (NAIAD_EXTRACT_DI_LOCAL_VARIABLES).
    line_info: bool = True
    local_variables: bool = False

    @property
    def assertions(self) -> bool:
        """Whether the language compiles its assertions: in debug mode, or asked alone."""
        return self.debug or self.asserts


@dataclass
class Compilation:
    """One kernel on its way through a back end's stages: `module` is the IR the next stage
    reads (TTIR first; a stage may replace it by its own output, an LLVM module say), `asm`
    the text (or bytes) of every stage so far, `metadata` what a launch will need (JSON).
    `insertions` are the passes users added (passes/extensions.py), `dump` what writes the
    IR after every pass (NAIAD_DUMP_PASSES; None: off), `print_before` what prints it before
    every pass (NAIAD_PRINT_PASSES): a stage runs its pass lists through `run_passes`, which
    applies them all. `unlocked` is the context a stage makes LLVM's long calls in
    (optimization, emission: Naiad's IR untouched meanwhile): the runtime lets other threads
    take the compile lock for their turn, a launch whose kernel the interpreter runs among them
    (each LLVM call holds llvmlite's own lock, which a fork waits for: fork_safety.py)."""

    module: Operation | object
    target: object
    options: object
    asm: dict
    metadata: dict = field(default_factory=dict)
    insertions: tuple = ()
    dump: Callable | None = None
    print_before: Callable | None = None
    notes: dict = field(default_factory=dict)  # what a stage leaves a later one (not stored)
    unlocked: Callable = contextlib.nullcontext

    def run_passes(self, pipeline: str, passes) -> None:
        """Run the pass list `passes`, known to users as `pipeline`, on `module`."""
        # (imported here: the passes and their dialects load with the first compile, not with
        # every launch, which the interpreter may run first)
        from ..passes.extensions import extend
        from ..passes.pipeline import run_pipeline

        passes = extend(pipeline, passes, self.insertions)
        run_pipeline(passes, self.module, after_each=self.dump, before_each=self.print_before)


@dataclass(frozen=True)
class Stage:
    """A step of a back end: `run(compilation)` advances it and writes `asm[name]`."""

    name: str
    run: Callable[[Compilation], None]


class Backend:
    """The base of every back end (see the module doc); subclasses set the class attributes
    and implement `parse_target`, `language_target` and `stages`."""

    name: str = ""
    prefixes: tuple[str, ...] = ()
    device_type: str | None = None
    launcher: str | None = None
    binary_stage: str | None = None  # the stage whose output the launcher loads
    # Whether its `ttgir` stage lays out for a GPU, so that a `.ttgir` file (a kernel laid out
    # by Triton's or Naiad's TTGIR passes) goes on from the stages after it (ir_files.py).
    compiles_ttgir_files: bool = False

    def matches(self, target_name: str) -> bool:
        """Whether `target_name` is one of this back end's (by its prefix)."""
        return any(
            target_name == prefix or target_name.startswith(prefix + ":")
            for prefix in self.prefixes
        )

    def parse_target(self, name: str):
        raise NotImplementedError

    def language_target(self, target, options):
        raise NotImplementedError

    def stages(self, target, options) -> list[Stage]:
        raise NotImplementedError

    def cache_facts(self, target, options) -> dict:
        return {}

    def device_target(self, index: int) -> str:
        """The target name of device `index` of this back end's kind."""
        raise NotImplementedError(f"the {self.name} back end runs on no device")

    def kernel_asm(self, asm: dict, target) -> dict:
        """A compiled kernel's `asm` as users read it (a back end may add stages made on
        demand, such as assembly printed from LLVM IR)."""
        return asm


_BACKENDS: list[Backend] = []
_builtin_loaded = False
_entry_points_loaded = False
_lock = threading.Lock()

# The back ends of the package, imported on first lookup (they are large).
_BUILTIN = ("naiad.backends.cpu.backend", "naiad.backends.nvidia.backend")


def register_backend(backend: Backend) -> Backend:
    """Add `backend` to the table (a back end of the same name is replaced: reloading a
    plugin module registers it again)."""
    if not backend.name or not backend.prefixes:
        raise ValueError("a back end needs a name and at least one target-name prefix")
    with _lock:
        _BACKENDS[:] = [b for b in _BACKENDS if b.name != backend.name]
        _BACKENDS.append(backend)
    return backend


def unregister_backend(name: str) -> None:
    """Remove the back end called `name` (tests, plugins that unload)."""
    with _lock:
        _BACKENDS[:] = [b for b in _BACKENDS if b.name != name]


def backends() -> list[Backend]:
    """Every registered back end, the package's own first."""
    _load(entry_points=True)
    return list(_BACKENDS)


def lookup(target_name: str) -> tuple[Backend, object]:
    """The back end of `target_name` and the target it parses from it."""
    name = str(target_name)
    backend = _first(lambda backend: backend.matches(name))
    if backend is not None:
        return backend, backend.parse_target(name)
    known = ", ".join(f"'{p}'" for b in backends() for p in b.prefixes)
    raise ValueError(f"unknown target {target_name!r}: no back end takes it (prefixes: {known})")


def for_device(device_type: str) -> Backend | None:
    """The back end whose kernels run on memory of `device_type` ('cpu', 'cuda'), if any."""
    return _first(lambda backend: backend.device_type == device_type)


def _first(takes: Callable[[Backend], bool]) -> Backend | None:
    """The first registered back end `takes`, the entry points' loaded only if none of those
    registered so far is one (see the module's docstring)."""
    _load(entry_points=False)
    for backend in list(_BACKENDS):
        if takes(backend):
            return backend
    if _entry_points_loaded:
        return None
    _load(entry_points=True)
    return next((backend for backend in list(_BACKENDS) if takes(backend)), None)


# Importing the back ends, which the first lookup does in whatever thread: a fork waits until it
# is done (fork_safety.py), since a child forked while another thread holds a module's import
# lock would wait for that lock forever (an autotuner's compile workers are forked children).
_importing = threading.RLock()
hold_across_fork(_importing, 5)


def _load(entry_points: bool) -> None:
    """Import the package's back ends and, with `entry_points`, those the entry points name."""
    if _entry_points_loaded or (_builtin_loaded and not entry_points):
        return
    with _importing:
        _import_builtin()
        if entry_points:
            _import_entry_points()


def _import_builtin() -> None:
    global _builtin_loaded
    if _builtin_loaded:
        return
    for module in _BUILTIN:
        importlib.import_module(module)
    _builtin_loaded = True


def _import_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    from importlib import metadata  # 10-20 ms to import: only where it is needed

    for entry in metadata.entry_points(group="naiad.backends"):
        loaded = entry.load()  # a module registers its back end as it is imported
        if isinstance(loaded, Backend):
            register_backend(loaded)
        elif callable(loaded) and not isinstance(loaded, types.ModuleType):
            register_backend(loaded())
    _entry_points_loaded = True
