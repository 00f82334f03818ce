"""The CPU targets Naiad compiles for: the host, and named ones compiled ahead of time.

`cpu` is this machine: its triple, CPU name and features as LLVM detects them, so the code uses
every vector extension the host has. `cpu:aarch64` is a generic 64-bit Arm Linux machine with
NEON (Advanced SIMD, present on every AArch64 core): its objects are produced and checked here and
run elsewhere. LLVM aborts the process on an unknown triple or feature, so every string passed to
it comes from the tables below or from LLVM's own description of the host.

A target's `description()` (triple, CPU, features) goes into the cache key of every compiled
kernel: an object built for one CPU is never loaded on another.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from . import llvm_tools

# The architectures the CPU back end generates code for, by the first part of a triple
# (`arm64` is Apple's spelling of AArch64).
_HOST_ARCHES = ("x86_64", "aarch64", "arm64")

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
        return llvm_tools.data_layout(self.machine)


@functools.cache
def host_target() -> CpuTarget:
    """The machine this process runs on."""
    triple = llvm_tools.host_triple()
    if triple.split("-", 1)[0] not in _HOST_ARCHES:
        raise NotImplementedError(
            f"the CPU back end generates x86-64 and AArch64 code; this host is {triple}"
        )
    return CpuTarget("cpu", triple, llvm_tools.host_cpu_name(), llvm_tools.host_cpu_features())


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
    return llvm_tools.create_target_machine(target.triple, target.cpu, target.features)
