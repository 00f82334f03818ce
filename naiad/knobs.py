"""Every `NAIAD_*` setting, read from the environment in this one module.

Settings are read when asked for (not at import), so a test can change the environment and see the
effect; `override()` sets them for a block of code without touching `os.environ`.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass

TRUE_WORDS = {"1", "true", "yes", "on", "y"}  # "y": as Triton reads them (TRITON_DEBUG=y)


def _raw(env: str) -> str:
    """The setting's text: an `override()` first, then the environment, else empty. While
    Naiad stands in for Triton (`install_as_triton`), an unset `NAIAD_*` setting reads its
    `TRITON_*` twin (TRITON_TWINS), so a Triton program's own settings still apply, and the
    few settings named after Triton's variables (TRITON_HOME) are read only then."""
    value = _overrides.get(env)
    if value is not None:
        return str(value)
    if not _as_triton[0]:  # Triton's own variables (TRITON_HOME) only then
        return "" if env.startswith("TRITON_") else os.environ.get(env, "")
    text = os.environ.get(env)
    if text is None:
        text = os.environ.get(TRITON_TWINS.get(env, ""))
    return text or ""


@dataclass(frozen=True)
class _Flag:
    """A boolean setting: `NAIAD_<NAME>=1` turns it on."""

    env: str
    doc: str

    def get(self) -> bool:
        return _raw(self.env).strip().lower() in TRUE_WORDS


@dataclass(frozen=True)
class _DefaultOn:
    """A boolean setting that is on unless set to something else than 1, true, yes or on."""

    env: str
    doc: str

    def get(self) -> bool:
        text = _raw(self.env).strip().lower()
        return not text or text in TRUE_WORDS


@dataclass(frozen=True)
class _Text:
    """A string setting; empty means unset."""

    env: str
    doc: str

    def get(self) -> str:
        return _raw(self.env)


@dataclass(frozen=True)
class _Int:
    """A non-negative integer setting; unset or empty gives `default`."""

    env: str
    doc: str
    default: int = 0

    def get(self) -> int:
        text = _raw(self.env).strip()
        if not text:
            return self.default
        try:
            value = int(text)
        except ValueError:
            value = -1
        if value < 0:
            raise ValueError(f"{self.env}={text!r}: expected a non-negative integer")
        return value


@dataclass(frozen=True)
class _Size:
    """A size in bytes: a non-negative integer, optionally with a K, M or G suffix (powers of
    1024, an optional trailing B or iB: `512M`, `2GiB`); unset or empty gives `default`."""

    env: str
    doc: str
    default: int = 0

    def get(self) -> int:
        text = _raw(self.env).strip()
        if not text:
            return self.default
        match = re.fullmatch(r"(\d+)\s*([KMG]?)(I?B)?", text.upper())
        if match is None:
            raise ValueError(f"{self.env}={text!r}: expected a size in bytes, such as 512M or 2G")
        digits, unit, _ = match.groups()
        return int(digits) << (10 * " KMG".index(unit or " "))


@dataclass(frozen=True)
class _Hook:
    """A function Naiad calls, set from Python only (`set_override`, or Triton's
    `triton.knobs.runtime.jit_cache_hook = f`): no environment variable names a function."""

    env: str
    doc: str

    def get(self):
        return _overrides.get(self.env)


_overrides: dict[str, object] = {}
# Whether `TRITON_*` twins are read (as_triton.py turns it on and off); a list, so that the
# one module that may change it does not rebind a global of this one.
_as_triton = [False]

interpret = _Flag("NAIAD_INTERPRET", "run @naiad.jit kernels in the NumPy interpreter")
debug = _Flag("NAIAD_DEBUG", "kernel debug mode: device_assert on, every access bounds-checked")
traceback = _Flag("NAIAD_TRACEBACK", "show Naiad's own frames in kernel errors")
print_autotuning = _Flag("NAIAD_PRINT_AUTOTUNING", "print the best config and the tuning time")
verify = _Flag("NAIAD_VERIFY", "run the IR verifier after every compiler pass")
dump_dir = _Text("NAIAD_DUMP_DIR", "write every stage's IR per kernel under this folder")
dump_passes = _Flag(
    "NAIAD_DUMP_PASSES", "with NAIAD_DUMP_DIR, also write the IR after every pass, numbered"
)
profile_compile = _Flag(
    "NAIAD_PROFILE_COMPILE", "print each compile's time per stage (AST to TTIR ... load) on stderr"
)
always_compile = _Flag("NAIAD_ALWAYS_COMPILE", "compile every kernel again, ignoring the caches")
default_fp_fusion = _DefaultOn(
    "NAIAD_DEFAULT_FP_FUSION",
    "whether a launch that does not say `enable_fp_fusion` lets float multiplies and adds fuse "
    "into fma (on unless 0); read when a kernel is first launched with given arguments",
)
backend = _Text(
    "NAIAD_BACKEND",
    "where kernels on host arrays run: unset (compiled for the CPU where it can be), 'cpu' "
    "(compiled, strictly) or 'interpreter'",
)
cpu_tiering = _Text(
    "NAIAD_CPU_TIERING",
    "'auto' (unset): a small launch of a kernel not compiled yet runs in the interpreter while "
    "it compiles in the background; 'off' or 'always-compile': every launch waits for its "
    "compiled kernel",
)
jit_cache_hook = _Hook(
    "NAIAD_JIT_CACHE_HOOK",
    "called before a JIT function compiles a specialization it has not loaded (runtime/"
    "jit_hooks.py, Triton's arguments); a true result skips the compile and the launch",
)
jit_post_compile_hook = _Hook(
    "NAIAD_JIT_POST_COMPILE_HOOK",
    "called after a JIT function compiled a specialization, with the cache hook's arguments",
)
launch_enter_hook = _Hook(
    "NAIAD_LAUNCH_ENTER_HOOK",
    "called before every launch with its metadata (runtime/launch_hooks.py); while set, "
    "launches take the full path",
)
launch_exit_hook = _Hook(
    "NAIAD_LAUNCH_EXIT_HOOK", "called after every launch, as NAIAD_LAUNCH_ENTER_HOOK before it"
)
autotuning_listener = _Hook(
    "NAIAD_AUTOTUNING_LISTENER",
    "called when the autotuner chose a config for a new key, by timing or from the disk cache "
    "(runtime/autotune_report.py)",
)
kernel_load_start_hook = _Hook(
    "NAIAD_KERNEL_LOAD_START_HOOK",
    "called before a compiled kernel is linked into the process or loaded on a GPU "
    "(runtime/launch_hooks.py)",
)
kernel_load_end_hook = _Hook(
    "NAIAD_KERNEL_LOAD_END_HOOK", "called after a compiled kernel is loaded, with its module"
)
compilation_listener = _Hook(
    "NAIAD_COMPILATION_LISTENER",
    "called once per compile that gives a kernel, with its source, metadata and times "
    "(runtime/compile_listener.py)",
)
disable_line_info = _Flag(
    "NAIAD_DISABLE_LINE_INFO",
    "compile kernels without source lines: no LLVM debug locations, no PTX `.loc`, no line "
    "table in CPU objects (line info is on unless set); read when a kernel is first launched "
    "with given arguments, and by warmup",
)
extract_di_local_variables = _Flag(
    "NAIAD_EXTRACT_DI_LOCAL_VARIABLES",
    "with line info on, describe the values the kernel names (its Python locals) to debuggers: "
    "a DILocalVariable and debug value records each, in `asm['llir']` and the binary",
)
cache_dir = _Text("NAIAD_CACHE_DIR", "where compiled kernels are cached on disk")
# Triton's own variables, read under their names (only while Naiad stands in for Triton).
triton_home = _Text("TRITON_HOME", "holds .triton/cache and .triton/dump (unset: the home)")
kernel_dump = _Flag("TRITON_KERNEL_DUMP", "NAIAD_DUMP_DIR unset: dump under TRITON_DUMP_DIR")
triton_dump_dir = _Text("TRITON_DUMP_DIR", "TRITON_KERNEL_DUMP's folder (runtime/compile_dumps)")
cache_autotuning = _Flag("NAIAD_CACHE_AUTOTUNING", "autotuners keep their choices on disk")
print_passes = _Text(
    "NAIAD_PRINT_PASSES",
    "print the module before every compiler pass on stderr ('IR Dump Before <pass>'): 1, true, "
    "on: every compile; a name: those whose module defines it (runtime/compile_dumps.py)",
)
cache_max_size = _Size(
    "NAIAD_CACHE_MAX_SIZE",
    "the most bytes the disk cache keeps (K, M, G suffixes: powers of 1024; 0: no limit); past "
    "it, the entries used least recently are deleted",
    default=1 << 30,
)
cuda_home = _Text("CUDA_HOME", "a CUDA toolkit: where libdevice is found when no wheel has it")
cuda_arch = _Text(
    "NAIAD_CUDA_ARCH",
    "compile CUDA kernels for this older architecture (e.g. sm_80 or Triton's sm80: mma.sync "
    "and cp.async, no wgmma or TMA) instead of the device's own; the driver compiles their PTX "
    "for the device; read when a kernel is first launched with given arguments, and by warmup",
)
cuda_native_launch = _DefaultOn(
    "NAIAD_CUDA_NATIVE_LAUNCH",
    "a prepared CUDA launch and a tensor map's encode each make their driver calls in one native "
    "call (runtime/cuda_native_launch.py, cuda_native_encode.py); 0: through cuda-bindings; "
    "read when a launch is prepared and when a descriptor's maps are first encoded",
)
host_cpu = _Text(
    "NAIAD_HOST_CPU",
    "compile host code for this CPU model instead of the one detected (e.g. x86-64-v2: no AVX, "
    "no F16C); it must be one this machine can run",
)
cpu_amx = _DefaultOn(
    "NAIAD_CPU_AMX",
    "multiply bf16 and int8 dots on AMX tiles (`tdpbf16ps`, `tdpbssd`) where the CPU has AMX "
    "and the OS grants the process the tile state (on unless 0); read once per process, with "
    "the host's CPU",
)
cpu_loader = _Text(
    "NAIAD_CPU_LOADER",
    "how CPU object code is linked into the process: 'auto' (unset): Naiad's own linker where it "
    "handles the object, else LLVM's ORC JIT; 'naiad': Naiad's linker only (an object it cannot "
    "link is an error); 'orc': LLVM's always",
)
cpu_perf_map = _Flag(
    "NAIAD_CPU_PERF_MAP",
    "describe each CPU object loaded to `perf` (backends/cpu/perf_map.py): its functions in "
    "/tmp/perf-<pid>.map, their code and source lines in /tmp/jit-<pid>.dump (perf record -k "
    "mono, then perf inject --jit); read at each load",
)
num_threads = _Int(
    "NAIAD_NUM_THREADS", "threads running a CPU kernel's programs (0: one per available CPU)"
)
stream_bytes = _Int(
    "NAIAD_CPU_STREAM_BYTES",
    "bytes a CPU launch's stores must write for its unhinted stores to stream past the caches "
    "(0: half the last-level cache); read when a kernel is first launched",
)
as_triton = _Flag(
    "NAIAD_AS_TRITON",
    "when naiad is imported, make `import triton` resolve to Naiad (as install_as_triton()); "
    "`python -m naiad.run` sets it for the processes a program starts",
)

# The Triton setting each Naiad setting stands for, read while Naiad stands in for Triton.
# Only settings that mean the same thing are twins: Triton's TRITON_DUMP_DIR is written only
# with TRITON_KERNEL_DUMP=1, so it is not NAIAD_DUMP_DIR's (compile_dumps.py reads both). Naiad's
# cache may share Triton's folder: it reads and evicts only its own two-hex-digit shards.
TRITON_TWINS = {
    interpret.env: "TRITON_INTERPRET",
    debug.env: "TRITON_DEBUG",
    traceback.env: "TRITON_FRONT_END_DEBUGGING",
    cache_autotuning.env: "TRITON_CACHE_AUTOTUNING",
    print_passes.env: "MLIR_ENABLE_DUMP",  # MLIR's, which Triton's pass managers read
    print_autotuning.env: "TRITON_PRINT_AUTOTUNING",
    always_compile.env: "TRITON_ALWAYS_COMPILE",
    default_fp_fusion.env: "TRITON_DEFAULT_FP_FUSION",
    cache_dir.env: "TRITON_CACHE_DIR",
    cuda_arch.env: "TRITON_OVERRIDE_ARCH",
    disable_line_info.env: "TRITON_DISABLE_LINE_INFO",
    # Triton reads this one under LLVM's prefix, as LLVM's own tools name it.
    extract_di_local_variables.env: "LLVM_EXTRACT_DI_LOCAL_VARIABLES",
}


def triton_cache_dir() -> str:
    """`TRITON_CACHE_DIR` itself (empty where unset), whatever `NAIAD_CACHE_DIR` says: where
    Triton's compile leaves each kernel's files, and where tools built on Triton look for a
    compiled kernel's binary (triton/compiler/binary_files.py)."""
    return os.environ.get("TRITON_CACHE_DIR", "")


def reading_triton_twins() -> bool:
    """Whether Naiad stands in for Triton (read_triton_twins)."""
    return _as_triton[0]


def read_triton_twins(on: bool) -> None:
    """Read (or stop reading) the `TRITON_*` twins of unset settings (as_triton.py)."""
    _as_triton[0] = bool(on)


def export_to_child_processes(env: str, value: str, *, prepend_path: bool = False) -> None:
    """Set `env` in this process's environment, which the processes it starts inherit (run.py);
    with `prepend_path`, put `value` first in the path list `env` holds instead."""
    if prepend_path:
        value = os.pathsep.join(p for p in (value, os.environ.get(env, "")) if p)
    os.environ[env] = value


# The settings a launch reads to choose where and how a kernel runs (launch_settings).
_LAUNCH_SETTINGS = (interpret.env, backend.env, debug.env)
_INTERPRET, _BACKEND, _DEBUG = _LAUNCH_SETTINGS
# The environment's own table of encoded names and values, behind os.environ's Mapping layer:
# looking a missing name up through os.environ costs a raised KeyError (about 0.5 us), which
# every launch would pay three times.
_ENVIRON_TABLE = getattr(os.environ, "_data", None)
_ENCODED_LAUNCH_SETTINGS = tuple(os.environ.encodekey(env) for env in _LAUNCH_SETTINGS)
_ENCODED_TWINS = tuple(
    os.environ.encodekey(TRITON_TWINS[env]) for env in (interpret.env, debug.env)
)


def launch_settings() -> tuple:
    """The raw values of the settings that steer a launch (NAIAD_INTERPRET, NAIAD_BACKEND,
    NAIAD_DEBUG; while Naiad stands in for Triton, an unset one's TRITON_* twin) as one
    hashable tuple, in tens of nanoseconds: the launch hot path keys its prepared launches by
    it, so that changing one (in the environment or with `override()`) sends the next launch
    through the full path again. Read from the environment's own table, the values are bytes
    (text only where `override()` sets one of them: an override of another setting, such as
    NAIAD_NUM_THREADS, leaves this path as fast, where it cost each launch three `_raw` reads,
    about 1 us)."""
    if _ENVIRON_TABLE is None or (
        _overrides and (_INTERPRET in _overrides or _BACKEND in _overrides or _DEBUG in _overrides)
    ):
        return tuple(_raw(env) for env in _LAUNCH_SETTINGS)
    get = _ENVIRON_TABLE.get
    interpret_name, backend_name, debug_name = _ENCODED_LAUNCH_SETTINGS
    if _as_triton[0]:  # as `_raw` reads them (every Triton program under `naiad.run` is here)
        interpret, debug = get(interpret_name), get(debug_name)
        interpret_twin, debug_twin = _ENCODED_TWINS
        return (
            get(interpret_twin) if interpret is None else interpret,
            get(backend_name),
            get(debug_twin) if debug is None else debug,
        )
    return (get(interpret_name), get(backend_name), get(debug_name))


def set_override(env: str, value) -> None:
    """Set the knob `env` to `value` from now on (None: back to the environment's), as a
    program assigning `triton.knobs.runtime.interpret = True` does; `override()` blocks
    restore what was set before them."""
    if value is None:
        _overrides.pop(env, None)
    else:
        _overrides[env] = value


def current_override(env: str):
    """What `set_override` or an `override()` block set `env` to, or None where nothing is set:
    for triton.knobs, whose groups keep the settings in effect when a test swaps them out."""
    return _overrides.get(env)


def launch_hooks_set() -> bool:
    """Whether a launch hook is set (an empty HookChain is not): every launch asks
    (runtime/launch_hooks.py), in tens of nanoseconds where no setting is overridden."""
    if not _overrides:
        return False
    return bool(_overrides.get(launch_enter_hook.env) or _overrides.get(launch_exit_hook.env))


def read_environment(env: str) -> str | None:
    """The environment's raw text for `env`, or None: for the few settings of other tools that
    Naiad reports (triton.knobs), so that the environment is read here only."""
    return os.environ.get(env)


def write_environment(env: str, text: str | None) -> None:
    """Set (None: remove) the variable `env` of this process's environment, as a Triton
    program setting a knob does (triton.knobs' `propagate_env`), and its scopes undo."""
    if text is not None:
        os.environ[env] = text
    else:
        os.environ.pop(env, None)


@contextlib.contextmanager
def override(**settings):
    """Set knobs for the duration of a `with` block, e.g. `override(NAIAD_INTERPRET=1)`."""
    saved = dict(_overrides)
    _overrides.update(settings)
    try:
        yield
    finally:
        _overrides.clear()
        _overrides.update(saved)
