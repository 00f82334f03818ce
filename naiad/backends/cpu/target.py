"""The CPU targets Naiad compiles for: the host, and named ones compiled ahead of time.

`cpu` is this machine: its triple, CPU name and features as LLVM detects them, so the code uses
every vector extension the host has. `cpu:aarch64` is a generic 64-bit Arm Linux machine with
NEON (Advanced SIMD, present on every AArch64 core): its objects are produced and checked here and
run elsewhere. LLVM aborts the process on an unknown triple or feature, so every string passed to
it comes from the tables below or from LLVM's own description of the host.

A target's `description()` (triple, CPU, features) goes into the cache key of every compiled
kernel: an object built for one CPU is never loaded on another. The host's comes from
host_facts.py, which asks LLVM once and remembers; LLVM itself (llvm_tools.py) is imported only
to compile, when a target machine is made.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ... import knobs
from . import host_facts, tile_state

if TYPE_CHECKING:
    from . import llvm_tools

# The architectures the CPU back end generates code for, by the first part of a triple
# (`arm64` is Apple's spelling of AArch64).
_HOST_ARCHES = ("x86_64", "aarch64", "arm64")

# CPU models host code may be compiled for instead of the detected one (NAIAD_HOST_CPU), by
# architecture, with the features Naiad's code generators read (vector width, FMA, F16C, the
# AVX-512 conversions); LLVM adds the rest from the model. They span CPUs with and without F16C,
# AVX-512, AVX512-BF16 and AVX512-FP16, so the suite can run as it would on such a machine.
_V3 = "+avx,+avx2,+f16c,+fma"
_V4 = _V3 + ",+avx512f"
HOST_CPU_MODELS = {
    "x86_64": {
        "x86-64": "+sse2",
        "x86-64-v2": "+popcnt,+sse4.2",
        "x86-64-v3": _V3,
        "x86-64-v4": _V4,
        "haswell": _V3,
        "skylake-avx512": _V4,
        "icelake-server": _V4,
        "sapphirerapids": _V4 + ",+avx512bf16,+avx512fp16,+amx-tile,+amx-bf16,+amx-int8",
        "znver3": _V3,
        "znver4": _V4 + ",+avx512bf16",
    },
    "aarch64": {model: "+neon" for model in ("generic", "neoverse-n1", "neoverse-v2")},
}
HOST_CPU_MODELS["arm64"] = HOST_CPU_MODELS["aarch64"]

# Targets compiled ahead of time: name → (triple, CPU, features).
_NAMED_TARGETS = {
    "cpu:aarch64": ("aarch64-unknown-linux-gnu", "generic", "+neon"),
}


@dataclass(frozen=True)
class CpuTarget:
    """One CPU target: what LLVM needs to emit code for it."""

    name: str
    triple: str
    cpu: str
    features: str

    @property
    def arch(self) -> str:
        """The triple's architecture (`x86_64`, `aarch64`)."""
        return self.triple.split("-", 1)[0]

    @property
    def is_host(self) -> bool:
        """Whether code for this target runs in this process."""
        return self == host_target()

    def description(self) -> dict[str, str]:
        """What the cache key records of the target."""
        return {"triple": self.triple, "cpu": self.cpu, "features": self.features}

    @property
    def machine(self) -> llvm_tools.TargetMachine:
        """The LLVM target machine (-O3, PIC), made once per target."""
        return _target_machine(self)

    @property
    def data_layout(self) -> str:
        """The data layout LLVM IR for this target carries."""
        from . import llvm_tools

        return llvm_tools.data_layout(self.machine)


@functools.cache
def host_target() -> CpuTarget:
    """The machine this process runs on (as NAIAD_HOST_CPU names it, where it is set)."""
    facts = host_facts.facts()
    if "triple" not in facts:
        raise ImportError("the CPU back end needs llvmlite, which is not installed")
    triple = facts["triple"]
    arch = triple.split("-", 1)[0]
    if arch not in _HOST_ARCHES:
        raise NotImplementedError(
            f"the CPU back end generates x86-64 and AArch64 code; this host is {triple}"
        )
    model = knobs.host_cpu.get().strip()
    if not model:
        return CpuTarget("cpu", triple, facts["cpu"], _granted(_full_width(facts["features"])))
    if model not in HOST_CPU_MODELS[arch]:
        known = ", ".join(HOST_CPU_MODELS[arch])
        raise ValueError(f"NAIAD_HOST_CPU={model!r} is not a {arch} CPU model Naiad knows: {known}")
    return CpuTarget("cpu", triple, model, _granted(_full_width(HOST_CPU_MODELS[arch][model])))


def _full_width(features: str) -> str:
    """`features` with LLVM's preference for 256-bit vectors turned off where the CPU has
    AVX-512 (`-prefer-256-bit`). LLVM's models of Intel's server cores (Skylake-SP to Emerald
    Rapids) prefer 256 bits, to spare early AVX-512 cores their lower clock, so on them the loops
    LLVM vectorizes ran on ymm registers beside the dot's micro-kernel on zmm ones, whose
    clock the kernel pays anyway; AMD's Zen 4 model prefers 512 bits already. On an Emerald Rapids
    Xeon, one thread (bench/RESULTS.md): layer norm 0.51-0.63 -> 0.89-0.92 of torch, softmax
    0.82-0.88 -> 1.07-1.09, the tutorial matmul 0.57 -> 0.67, bf16 attention 0.60 -> 0.73."""
    if "+avx512f" not in features.split(","):
        return features
    return features + ",-prefer-256-bit"


def _granted(features: str) -> str:
    """`features` with AMX's turned off (`-amx-tile`, ...) unless NAIAD_CPU_AMX (on by
    default) lets kernels use the tiles and the OS grants them to this process (tile_state.py):
    an AMX instruction without the grant kills the process, and a CPU model such as
    `sapphirerapids` implies AMX to LLVM unless its features say otherwise. The features go
    into every cache key, so code made with the tiles is never loaded by a process that may
    not run it."""
    present = features.split(",")
    if "+amx-tile" not in present or (knobs.cpu_amx.get() and tile_state.tiles_granted()):
        return features
    return ",".join("-" + f[1:] if f.startswith("+amx-") else f for f in present)


def host_has(features: tuple[str, ...], triple: str | None = None) -> bool:
    """Whether code for `triple` (the host's when None) runs on a CPU with every one of
    `features` (LLVM's names, `+avx512bf16`): code for another triple never runs here."""
    host = host_target()
    if triple is not None and host.triple != triple:
        return False
    present = host.features.split(",")
    return all(feature in present for feature in features)


def target_names() -> list[str]:
    """Every name `cpu_target` accepts."""
    return ["cpu", *_NAMED_TARGETS]


def cpu_target(name: str = "cpu") -> CpuTarget:
    """The target called `name`: `cpu` (the host) or one of the named ahead-of-time targets."""
    if name == "cpu":
        return host_target()
    try:
        triple, cpu, features = _NAMED_TARGETS[name]
    except KeyError:
        known = ", ".join(target_names())
        raise ValueError(f"unknown CPU target {name!r}; known targets: {known}") from None
    return CpuTarget(name, triple, cpu, features)


@functools.cache
def _target_machine(target: CpuTarget) -> llvm_tools.TargetMachine:
    from . import llvm_tools

    return llvm_tools.create_target_machine(target.triple, target.cpu, target.features)
