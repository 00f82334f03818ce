"""Host time of the Llama-style training step under naiad.ops, on the CPU: the Python a GPU step
pays per op call, measured where kernels cost next to nothing (issue 19: the bf16 step on the
H200 took 16.6 ms against eager's 10.0 while Naiad's kernels took 5.9 ms of GPU time).

    PYTHONPATH=$PWD python bench/ops/step_host_time.py [--batches 15] [--steps 5]
        [--dtype bfloat16] [--profile forward|backward] [--ops] [--per-op] [--replay]
        [--no-kernels] [--cuda-stub]

The model is bench/ops/goal_cases.py's GPU one in its shape (TinyLlama: 4 layers, 16 heads over
4 key/value heads, a tied head), at tiny sizes (dim 64, hidden 128, vocab 64, 2x8 tokens), so
that the step calls the same ATen ops as the GPU's, each on a few hundred elements. The forward
(logits and loss) and the backward (`torch.autograd.grad` of every parameter) are timed apart,
in the thread's CPU time (on the CPU, torch's autograd engine runs the backward on the calling
thread), one thread each side; naiad.ops.use() and eager alternate in batches of `--steps`
steps, and each side keeps its best batch, in milliseconds per step. `--ops` counts the ATen
ops the step dispatches, the kernels torch runs for it (for the ops Naiad leaves to torch, and
those Naiad's ops call themselves: what is not a view or an allocation) and, with
`--cuda-stub`, Naiad's launches (the stand-in driver counts them): a GPU step's launches;
`--profile` runs 20 steps' forwards or
backwards under cProfile and prints the 30 costliest functions by own time. `--per-op` times
every call of Naiad's ATen implementations within 20 steps (thread CPU time, from the
switch's call to its return) and prints the median call by overload (an op that calls
another through the dispatcher counts it too). `--replay` records the calls of one step's
Naiad ops (their arguments as the switch received them) and calls each again, alone, 200
times in 5 rounds, keeping its best round: the step's op calls one by one, without the noise
a whole step meets; printed by overload, microseconds per call and per step. `--no-kernels`
runs no compiled CPU kernel, and a prepared CPU launch returns at once (the values are garbage,
which nothing in the step reads on the host): what remains of Naiad's side is the Python above
the back end's launch (the switch, the ops, their plans, the launch entry or bound launch),
which a GPU step pays as it is (its prepared CUDA launch is leaner than the CPU's, which reads
every array's extent); eager's side keeps its kernels. `--cuda-stub` (with any of the above)
routes Naiad's launches to the NVIDIA launcher's path as on an sm_90a GPU, over
bench/ops/attention_host.py's stand-in driver library (build it with that script's
`--make-stub DIR`, then run with LD_LIBRARY_PATH=DIR; no kernel runs, so the values are
garbage, as under `--no-kernels`): the GPU's host path per op call, its
bound CUDA launches and native call included, with no GPU.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import cProfile
import ctypes
import os
import platform
import pstats
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # bench/cpu/kernels.py says why
os.environ.setdefault("NAIAD_NUM_THREADS", "1")

import torch
from torch.utils._python_dispatch import TorchDispatchMode

import naiad.ops as ops
from naiad.backends.cpu import lanes, pool
from naiad.ops import registry
from naiad.runtime.cpu_fast_launch import FastCpuLaunch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "pytorch"))
from tiny_llama import TinyLlama

CONFIG = dict(vocab=64, dim=64, heads=16, kv_heads=4, hidden=128, layers=4)
BATCH, LENGTH = 2, 8


def _no_kernel(*args, **kwargs) -> None:
    """pool.run under --no-kernels: no program runs."""


def _no_prepared_launch(self, dims, values, arguments=None):
    """A prepared CPU launch under --no-kernels: nothing packed, nothing run."""
    return self._launchable.kernel


def model_and_tokens(dtype):
    torch.manual_seed(0)
    model = TinyLlama(**CONFIG).to(dtype=dtype)
    tokens, labels = (torch.randint(0, CONFIG["vocab"], (BATCH, LENGTH)) for _ in "tl")
    return model, tokens, labels


def timed_batch(model, tokens, labels, steps: int) -> tuple[float, float]:
    """(forward, backward) thread CPU seconds per step over `steps` steps."""
    parameters = list(model.parameters())
    forward = backward = 0.0
    for _ in range(steps):
        start = time.thread_time()
        _, loss = model(tokens, labels)
        middle = time.thread_time()
        torch.autograd.grad(loss, parameters)
        forward += middle - start
        backward += time.thread_time() - middle
    return forward / steps, backward / steps


# ATen ops that run no kernel on a GPU though their schemas are not views' (stack passes its
# work to cat, which the count sees apart).
_NO_KERNEL = frozenset(
    ("empty.memory_format", "empty_strided.default", "empty_like.default", "_unsafe_view.default",
     "new_empty.default", "new_empty_strided.default", "resize_.default", "lift_fresh.default",
     "stack.default")
)  # fmt: skip


def _torch_kernel(name: str, func) -> bool:
    """Whether torch runs a kernel of its own for the op: not Naiad's, not a view."""
    return name not in registry._TABLE and not func.is_view and name not in _NO_KERNEL


class _Counts(TorchDispatchMode):
    """The ATen ops dispatched, by name; `kernels`: those for which torch runs a kernel."""

    def __init__(self, decompose: bool = False):
        super().__init__()
        self.counts = collections.Counter()
        self.kernels = collections.Counter()
        self.decompose = decompose

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = str(func).removeprefix("aten.")
        if (
            self.decompose
            and name not in registry._TABLE
            and func.has_kernel_for_dispatch_key(torch._C.DispatchKey.CompositeImplicitAutograd)
        ):  # within Naiad's ops (below autograd) a reshape comes whole: its parts tell a copy
            with self:  # (the mode is off within its own handler)
                decomposed = func.decompose(*args, **kwargs)
            if decomposed is not NotImplemented:
                return decomposed
        self.counts[name] += 1
        if _torch_kernel(name, func):
            self.kernels[name] += 1
        return func(*args, **kwargs)


def _inside(inner: _Counts, fn):
    """`fn` (a Naiad op) run under `inner`, which counts torch's kernels it runs itself."""

    def call(*args, **kwargs):
        with inner:
            return fn(*args, **kwargs)

    return call


@contextlib.contextmanager
def _cuda_launches():
    """Naiad's launches under --cuda-stub: the stand-in driver's cuLaunchKernel calls (every
    bound and prepared launch) and the slow path's (route_to_cuda runs nothing there)."""
    from naiad.backends.nvidia.cubin_kernel import CubinKernel

    counted = ctypes.CDLL("libcuda.so.1").naiad_stub_launches
    counted.restype = ctypes.c_ulong
    slow, first = CubinKernel.launch, counted()
    counts = collections.Counter()

    def slow_counting(*args):
        counts["slow"] += 1
        return slow(*args)

    CubinKernel.launch = slow_counting
    try:
        yield counts
    finally:
        CubinKernel.launch = slow
        counts["launches"] = counted() - first + counts["slow"]


def print_ops(model, tokens, labels, cuda_stub: bool) -> None:
    """The ATen ops of the forward and of the backward, the kernels torch runs for them (those
    Naiad does not handle, and those Naiad's ops call themselves) and, under --cuda-stub,
    Naiad's launches: a GPU step's launches, summed."""
    inner = _Counts(decompose=True)
    original = dict(registry._TABLE)
    registry._TABLE.update({name: _inside(inner, fn) for name, fn in original.items()})
    try:
        with ops.use():
            timed_batch(model, tokens, labels, 2)  # compiles
            loss = None
            for part in ("forward", "backward"):
                inner.kernels.clear()
                launching = _cuda_launches() if cuda_stub else contextlib.nullcontext({})
                with _Counts() as mode, launching as launches:
                    if part == "forward":
                        _, loss = model(tokens, labels)
                    else:
                        torch.autograd.grad(loss, list(model.parameters()))
                _print_part(part, mode, inner, launches)
    finally:
        registry._TABLE.update(original)


def _print_part(part: str, mode: _Counts, inner: _Counts, launches) -> None:
    shown = ", ".join(f"{k} {v}" for k, v in mode.counts.most_common())
    print(f"{part}: {sum(mode.counts.values())} ATen ops: {shown}")
    for kind, kernels in (("torch's own", mode.kernels), ("within Naiad's ops", inner.kernels)):
        shown = ", ".join(f"{k} {v}" for k, v in kernels.most_common())
        print(f"  torch kernels, {kind}: {sum(kernels.values())} ({shown})")
    if launches:
        print(f"  Naiad launches: {launches['launches']} ({launches['slow']} slow)")


def per_op(model, tokens, labels, steps: int = 20) -> None:
    """Naiad's time per ATen overload within the step (see the module doc): the median call
    of each (this shared machine's neighbours make means jump), and those medians summed."""
    spent = collections.defaultdict(list)
    clock = time.thread_time

    def timed(name, fn):
        def call(*args, **kwargs):
            start = clock()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[name].append(clock() - start)

        call.__name__ = fn.__name__
        return call

    original = dict(registry._TABLE)
    registry._TABLE.update({name: timed(name, fn) for name, fn in original.items()})
    try:
        with ops.use():
            timed_batch(model, tokens, labels, 2)
            spent.clear()
            timed_batch(model, tokens, labels, steps)
    finally:
        registry._TABLE.update(original)
    rows = []
    for name, times in spent.items():
        median = statistics.median(times) * 1e6
        rows.append((median * len(times) / steps, name, len(times) // steps, median))
    rows.sort(reverse=True)
    print(f"Naiad's ops, the median call's time: {sum(r[0] for r in rows):.0f} us per step")
    print(f"{'overload':<36} {'calls':>6} {'us/call':>8} {'us/step':>8}")
    for per_step, name, calls, median in rows:
        print(f"{name:<36} {calls:>6} {median:>8.1f} {per_step:>8.0f}")


def replay(model, tokens, labels, calls: int = 200, rounds: int = 5) -> None:
    """Each Naiad op call of one step again, alone (see the module doc)."""
    recorded = []

    def recording(name, fn):
        def call(*args, **kwargs):
            recorded.append((name, fn, args, kwargs))
            return fn(*args, **kwargs)

        return call

    original = dict(registry._TABLE)
    registry._TABLE.update({name: recording(name, fn) for name, fn in original.items()})
    try:
        with ops.use():
            timed_batch(model, tokens, labels, 2)
            recorded.clear()
            timed_batch(model, tokens, labels, 1)
    finally:
        registry._TABLE.update(original)
    by_name = collections.defaultdict(list)
    with ops.use(), torch.no_grad():
        for name, fn, args, kwargs in recorded:
            best = float("inf")
            for _ in range(rounds):
                start = time.thread_time()
                for _ in range(calls):
                    fn(*args, **kwargs)
                best = min(best, (time.thread_time() - start) / calls)
            by_name[name].append(best * 1e6)
    rows = sorted(((sum(t), name, len(t)) for name, t in by_name.items()), reverse=True)
    print(f"Naiad's ops of one step, each call alone: {sum(r[0] for r in rows):.0f} us "
          f"over {len(recorded)} calls")  # fmt: skip
    print(f"{'overload':<36} {'calls':>6} {'us/call':>8} {'us/step':>8}")
    for total, name, count in rows:
        print(f"{name:<36} {count:>6} {total / count:>8.1f} {total:>8.0f}")


def profile(model, tokens, labels, part: str) -> None:
    parameters = list(model.parameters())
    recorder = cProfile.Profile()
    for _ in range(20):
        if part == "forward":
            recorder.enable()
        _, loss = model(tokens, labels)
        recorder.disable()
        if part == "backward":
            recorder.enable()
        torch.autograd.grad(loss, parameters)
        recorder.disable()
    pstats.Stats(recorder).sort_stats("tottime").print_stats(30)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=15)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--dtype", default="bfloat16")
    parser.add_argument("--profile", choices=("forward", "backward"), default="")
    parser.add_argument("--ops", action="store_true", help="count the ATen ops of a step")
    parser.add_argument("--per-op", action="store_true", help="Naiad's time per overload")
    parser.add_argument("--replay", action="store_true", help="each op call of a step alone")
    parser.add_argument("--no-kernels", action="store_true", help="skip Naiad's CPU kernels")
    parser.add_argument("--cuda-stub", action="store_true", help="the CUDA path, stand-in driver")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.cuda_stub:
        from attention_host import route_to_cuda

        os.environ.setdefault("NAIAD_BACKEND", "auto")
        route_to_cuda()
    if args.no_kernels:
        pool.run = _no_kernel
        lanes.direct_launch = lambda *made: _no_kernel
        FastCpuLaunch.__call__ = _no_prepared_launch
    model, tokens, labels = model_and_tokens(getattr(torch, args.dtype))
    if args.per_op or args.replay:
        (per_op if args.per_op else replay)(model, tokens, labels)
        return
    if args.ops:
        print_ops(model, tokens, labels, args.cuda_stub)
        return
    with ops.use():
        timed_batch(model, tokens, labels, 2)  # compiles
        if args.profile:
            profile(model, tokens, labels, args.profile)
            return
    best = {"naiad": (float("inf"),) * 2, "eager": (float("inf"),) * 2}
    timed_batch(model, tokens, labels, 2)
    for _ in range(args.batches):
        for side in best:
            with ops.use() if side == "naiad" else contextlib.nullcontext():
                times = timed_batch(model, tokens, labels, args.steps)
            best[side] = tuple(map(min, best[side], times))
    where = platform.processor() or platform.machine()
    print(f"# {where}, torch {torch.__version__}, {args.dtype}, one thread, thread CPU time, "
          f"best of {args.batches} batches of {args.steps} steps, ms per step"
          f"{', no Naiad kernels' if args.no_kernels else ''}")  # fmt: skip
    print(f"{'side':<6} {'forward':>8} {'backward':>9} {'step':>8}")
    for side, (forward, backward) in best.items():
        print(f"{side:<6} {forward * 1e3:>8.2f} {backward * 1e3:>9.2f} "
              f"{(forward + backward) * 1e3:>8.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
