"""What a compile gives: `CompiledKernel`, a kernel compiled for one specialization, with its
stages' text, its metadata and its loadable binary, as Triton's compiled kernel reads.

Its own module because everyone holds one: the compiler makes it (compiler.py), the TTIR cache
rebuilds it (ttir_cache.py), the launchers return it from a launch, and the Triton surface
relaunches it (relaunch.py). A CPU target has no registers or shared memory to count, so what
it reports for them here is what makes occupancy computed as for a GPU come out right.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..backends.registry import CompileOptions
from .relaunch import TritonCompiledKernel

# A CPU program occupies its worker thread whole: all of the registers and all of the scratch
# memory that the CPU driver's device properties count (driver.py), so occupancy computed as
# for a GPU (tutorial 02: registers // (n_regs * warp size * num_warps), and shared memory //
# metadata.shared) gives one program per worker thread. The scratch is a megabyte, a server
# core's L2, where a program's blocks stay close; the worker's arena grows to what a kernel
# needs anyway, so programs that size their blocks by `max_shared_mem` (test_core's dot3d skips
# a batch of operands larger than it) should not see a GPU's 64 KiB.
CPU_REGISTERS = 1 << 16
CPU_SCRATCH_BYTES = 1 << 20


class Metadata(dict):
    """A compiled kernel's metadata: a dict whose keys also read as attributes, as Triton's
    (`compiled.metadata.shared`)."""

    def __getattr__(self, name: str):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


@dataclass
class CompiledKernel(TritonCompiledKernel):
    """A kernel compiled for one specialization: `asm[stage]` text, `metadata`, `name`; the
    back end's loadable `binary` (CPU object code, cubin); for a GPU target with a linker,
    `n_regs` and `n_spills` of its cubin (None otherwise). `globals_used` are the globals its
    code read when it was built (checked again at every launch). `fn`, `constants` and
    `options` (its JIT function, constexpr values and CompileOptions) relaunch it through
    Triton's surface (relaunch.py), which runs it for arguments its `specialization` admits."""

    name: str
    asm: dict
    metadata: Metadata = field(default_factory=Metadata)
    binary: bytes | None = None
    globals_used: dict = field(default_factory=dict)
    fn: object = field(default=None, repr=False)
    constants: dict = field(default_factory=dict, repr=False)
    options: CompileOptions = field(default_factory=CompileOptions, repr=False)
    specialization: object = field(default=None, repr=False)

    def __post_init__(self):
        self.metadata = Metadata(self.metadata)
        if self._on_cpu:
            self.metadata.setdefault("shared", CPU_SCRATCH_BYTES)

    @property
    def _on_cpu(self) -> bool:
        """Whether the target is a CPU: named so before the back end ran, its triple after."""
        target = self.metadata.get("target", "")
        if isinstance(target, dict):
            return not str(target.get("triple", "nvptx")).startswith("nvptx")
        return str(target).startswith("cpu")

    @property
    def n_regs(self) -> int | None:
        regs = self.metadata.get("n_regs")
        if regs is None and self._on_cpu:
            return CPU_REGISTERS // max(1, self.options.num_warps)
        return regs

    @property
    def n_spills(self) -> int | None:
        spills = self.metadata.get("n_spills")
        return 0 if spills is None and self.n_regs is not None else spills
