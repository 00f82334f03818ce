"""Triton's compilation listener: a function a program sets (`triton.knobs.compilation.listener`;
Naiad's NAIAD_COMPILATION_LISTENER, set from Python), called once per compile that gives a
kernel (a launch's, a warmup's, `triton.compile`'s), whether the disk cache had it or not:

    def listener(*, src, metadata, metadata_group, times, cache_hit): ...

`src` is the compiled source (a `CompiledSource` with ASTSource's attributes; the Triton
surface hands a listener set through `triton.knobs` Triton's own ASTSource), `metadata` the
kernel's metadata with its `hash` and its `target` (a GPUTarget), `metadata_group` empty
(Naiad's cache keeps a kernel's files in one entry), `times` a `CompileTimes` in
microseconds, and `cache_hit` whether the stages were read from the disk cache.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from .. import knobs
from .driver import GPUTarget


@dataclass
class CompileTimes:
    """Where a compile's time went, in microseconds: building the TTIR (`ir_initialization`),
    each back end stage (`lowering_stages`: (name, time); none on a cache hit), writing the
    cache entry (`store_results`; 0 on a cache hit)."""

    ir_initialization: int = 0
    lowering_stages: list = field(default_factory=list)
    store_results: int = 0

    @property
    def total_lowering(self) -> int:
        return sum(spent for _, spent in self.lowering_stages)

    @property
    def total(self) -> int:
        return self.ir_initialization + self.total_lowering + self.store_results


@dataclass(frozen=True)
class CompiledSource:
    """What was compiled: the JIT function and its specialization, by ASTSource's names."""

    fn: object
    name: str
    signature: dict
    constants: dict
    attrs: dict


def microseconds_since(started_ns: int) -> int:
    """The whole microseconds since `started_ns` (time.perf_counter_ns), at least 1."""
    return max(1, (time.perf_counter_ns() - started_ns) // 1000)


def tell(jit_function, spec, kernel, times: CompileTimes, cache_hit: bool) -> None:
    """Call the listener, if one is set, of `jit_function`'s compile of `spec` to `kernel`."""
    listener = knobs.compilation_listener.get()
    if listener is None:
        return
    source = CompiledSource(
        jit_function,
        getattr(jit_function, "__name__", kernel.name),
        dict(spec.signature),
        dict(spec.constexprs),
        dict(spec.attrs),
    )
    metadata = {**kernel.metadata, "hash": kernel.hash, "target": _target(kernel)}
    listener(src=source, metadata=metadata, metadata_group={}, times=times, cache_hit=cache_hit)


def _target(kernel) -> GPUTarget:
    """The GPUTarget a kernel was compiled for (its metadata's target: a CPU's triple or a
    CUDA architecture's name)."""
    target = kernel.metadata.get("target")
    if isinstance(target, dict):  # a CPU target, after its back end ran
        return GPUTarget("cpu", target.get("triple", ""), 1)
    found = re.search(r"sm_?(\d+)", str(target))
    if found is not None:
        return GPUTarget("cuda", int(found.group(1)), 32)
    return GPUTarget(str(target), 0, 1)
