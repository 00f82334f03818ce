"""`do_bench`: time a callable as Triton does, with warmup and repetitions as time budgets.

The budgets make one call fit fast and slow functions alike: a first call (compilation, caches),
an estimate of the time per call from a few runs, then as many warmup and timed runs as fit in
`warmup` and `rep` milliseconds.

Two clocks. On the host, each call is bracketed by `time.perf_counter` (the function's work is done
when it returns). When the work is on a CUDA device, each call is bracketed by CUDA events and a
256 MB buffer is cleared before it, so every run starts with a cold L2 cache, as Triton measures.
The CPU clock leaves caches warm: clearing a buffer larger than the last-level cache would cost
more than most kernels being timed.
"""

from __future__ import annotations

import sys
from time import perf_counter

import numpy as np

from .cpu_tiering import waiting_for_compiled

RETURN_MODES = ("min", "max", "mean", "median", "all")
_ESTIMATE_RUNS = 5
_L2_FLUSH_BYTES = 256 * 1024 * 1024


class _HostClock:
    """Times calls whose work is finished when they return."""

    def sync(self) -> None:
        """Nothing is in flight on the host."""

    def estimate(self, fn, runs: int) -> float:
        start = perf_counter()
        for _ in range(runs):
            fn()
        return (perf_counter() - start) * 1e3 / runs

    def time_each(self, fn, runs: int, before) -> list[float]:
        times = []
        for _ in range(runs):
            before()
            start = perf_counter()
            fn()
            times.append((perf_counter() - start) * 1e3)
        return times


class _CudaClock:
    """Times calls that queue work on the current CUDA stream, with a cold L2 before each."""

    def __init__(self, torch):
        self.torch = torch
        self.cache = torch.empty(_L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")

    def sync(self) -> None:
        self.torch.cuda.synchronize()

    def estimate(self, fn, runs: int) -> float:
        start, end = self._event(), self._event()
        start.record()
        for _ in range(runs):
            self.cache.zero_()
            fn()
        end.record()
        self.sync()
        return start.elapsed_time(end) / runs

    def time_each(self, fn, runs: int, before) -> list[float]:
        starts = [self._event() for _ in range(runs)]
        ends = [self._event() for _ in range(runs)]
        for start, end in zip(starts, ends):
            before()
            self.cache.zero_()
            start.record()
            fn()
            end.record()
        self.sync()
        return [start.elapsed_time(end) for start, end in zip(starts, ends)]

    def _event(self):
        return self.torch.cuda.Event(enable_timing=True)


def _pick_clock(device: str | None):
    """CUDA events when asked for, or by default when this process already uses CUDA via torch."""
    if device not in (None, "cpu", "cuda"):
        raise ValueError(f"device must be None, 'cpu' or 'cuda', got {device!r}")
    torch = sys.modules.get("torch")
    cuda_ready = torch is not None and torch.cuda.is_available()
    if device == "cuda" and not cuda_ready:
        raise RuntimeError("do_bench(device='cuda') needs torch with a CUDA device")
    if device == "cuda" or (device is None and cuda_ready and torch.cuda.is_initialized()):
        return _CudaClock(torch)
    return _HostClock()


def do_bench(
    fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, return_mode="median", *, device=None
):
    """Time `fn()` and return milliseconds.

    Args:
        fn: the callable to time; called with no arguments.
        warmup: time budget in ms for untimed warmup runs (at least one).
        rep: time budget in ms for timed runs (at least one).
        grad_to_none: tensors whose `.grad` is reset to None before every timed run, so that
            backward passes do not accumulate into them.
        quantiles: if given, return these quantiles of the timings (linear interpolation); a
            single quantile is returned as a number, as in Triton.
        return_mode: "min", "max", "mean", "median" (the default; Triton's is "mean") or "all"
            (the list of timings).
        device: "cpu" or "cuda" to choose the clock; None uses CUDA events when torch has already
            initialized CUDA in this process, else the host clock.
    """
    if return_mode not in RETURN_MODES:
        raise ValueError(f"return_mode must be one of {RETURN_MODES}, got {return_mode!r}")
    clock = _pick_clock(device)
    with waiting_for_compiled():  # a CPU kernel is timed compiled, never interpreted first
        fn()
        clock.sync()
        # A floor keeps the run counts finite if the clock cannot resolve the call.
        estimate_ms = max(clock.estimate(fn, _ESTIMATE_RUNS), 1e-6)
        n_warmup = max(1, int(warmup / estimate_ms))
        n_repeat = max(1, int(rep / estimate_ms))
        for _ in range(n_warmup):
            fn()
        clock.sync()

        def before():
            for tensor in grad_to_none or ():
                tensor.grad = None

        times = clock.time_each(fn, n_repeat, before)
    return _summarize(times, quantiles, return_mode)


def _summarize(times: list[float], quantiles, return_mode: str):
    if quantiles is not None:
        values = [float(v) for v in np.quantile(np.asarray(times), list(quantiles))]
        return values[0] if len(values) == 1 else values
    if return_mode == "all":
        return list(times)
    return float(getattr(np, return_mode)(np.asarray(times)))


def do_bench_cudagraph(fn, rep=20, grad_to_none=None, quantiles=None, return_mode="mean"):
    """Time `fn()` replayed from a CUDA graph, in milliseconds per call, as Triton's
    `do_bench_cudagraph`: the calls that fit in `rep` ms are captured once on a side stream,
    and the graph is replayed ten times, so launch overhead on the host is not timed.

    Where torch has not initialized CUDA in this process there is no graph to capture: the
    calls are timed on the host as `do_bench` times them (docs/compat.md).
    """
    if return_mode not in RETURN_MODES:
        raise ValueError(f"return_mode must be one of {RETURN_MODES}, got {return_mode!r}")
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return do_bench(fn, 1, rep, grad_to_none, quantiles, return_mode=return_mode, device="cpu")

    def call():
        for tensor in grad_to_none or ():
            tensor.grad = None
        fn()

    def event():
        return torch.cuda.Event(enable_timing=True)

    with torch.cuda.stream(torch.cuda.Stream()):
        call()  # compiles and loads: nothing of that may happen during the capture
        start, end = event(), event()
        start.record()
        for _ in range(_ESTIMATE_RUNS):
            call()
        end.record()
        torch.cuda.synchronize()
        estimate_ms = start.elapsed_time(end) / _ESTIMATE_RUNS
        n_repeat = 1000 if estimate_ms == 0 else max(1, int(rep / estimate_ms))
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):  # no L2 flush in between: the graph holds only `fn`
            for _ in range(n_repeat):
                call()
        torch.cuda.synchronize()
        times = []
        for _ in range(10):
            start, end = event(), event()
            start.record()
            graph.replay()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) / n_repeat)
    return _summarize(times, quantiles, return_mode)
