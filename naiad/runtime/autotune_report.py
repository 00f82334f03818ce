"""What a tuning tells when it has chosen: NAIAD_PRINT_AUTOTUNING's lines, and Triton's
autotuning listener (`triton.knobs.autotuning.listener`, Naiad's NAIAD_AUTOTUNING_LISTENER,
set from Python), called once per key the autotuner chose a config for by timing or read
from the disk cache, never for a key found in memory or a single config left to run:

    def listener(*, fn, key, best_config, configs_timings, duration, cache_hit): ...

`fn` is the JIT function under the wrappers, `key` the tuning key, `configs_timings` every
timed config's timings (None on a disk cache hit), `duration` the tuning's seconds (None on a
disk cache hit), `cache_hit` whether the choice came from the disk cache.
"""

from __future__ import annotations

from .. import knobs
from .kernel_interface import KernelInterface


def tuned(autotuner, key: tuple, best, timings: dict | None, seconds: float, timed: bool):
    """Tell of `autotuner`'s choice `best` for `key`: `timings` None when read from disk,
    `timed` False when one config was left and nothing was timed."""
    if knobs.print_autotuning.get():
        report(_base_name(autotuner.fn), best, timings, seconds)
    listener = knobs.autotuning_listener.get()
    if listener is not None and (timed or timings is None):
        listener(
            fn=_jit_function(autotuner.fn),
            key=key,
            best_config=best,
            configs_timings=timings,
            duration=None if timings is None else seconds,
            cache_hit=timings is None,
        )


def report(name: str, best, timings: dict | None, seconds: float) -> None:
    """NAIAD_PRINT_AUTOTUNING: every config's timings (ms: median, 20th and 80th percentiles),
    then the choice; `timings` None when it was read from disk."""
    for config, values in (timings or {}).items():
        shown = ", ".join(f"{t:.4f}" for t in values)
        print(f"Naiad autotuning {name}: {config}: {shown} ms")
    how = "loaded from disk" if timings is None else f"finished after {seconds:.2f}s"
    print(f"Naiad autotuning for function {name} {how}; best config selected: {best};")


def _jit_function(fn):
    """The JIT function under the autotuner's wrappers (heuristics, ...)."""
    while isinstance(fn, KernelInterface) and not hasattr(fn, "cache_key") and hasattr(fn, "fn"):
        fn = fn.fn
    return fn


def _base_name(fn) -> str:
    while isinstance(fn, KernelInterface):
        fn = fn.fn
    return getattr(fn, "__name__", repr(fn))
