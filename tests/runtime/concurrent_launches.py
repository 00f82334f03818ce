"""Many Python threads launching several kernels at once, from the first launch on: the script
test_concurrent_launch.py runs in a subprocess (a crash there must not take pytest with it).

    python concurrent_launches.py THREADS ROUNDS [quick|all]

Every thread waits at a barrier, then launches each kernel of `cases()` ROUNDS times (each
thread in its own order, small grids that run inline and large ones that go to the worker
pool) and checks every result against NumPy; `quick` (the default tier's) takes the first
three cases only, which compile in half the time. Exit status 0 and `ok LAUNCHES TUNINGS`
on stdout when every result matched; 1 and the first errors otherwise; a signal when a
launch crashed the process. Kernels compile for the CPU, into the cache NAIAD_CACHE_DIR names.
"""

import random
import sys
import threading

import numpy as np

import naiad
import naiad.language as tl

sys.setswitchinterval(1e-5)  # switch threads often: more interleavings per run


@naiad.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + tl.load(y_ptr + offs, mask=mask), mask=mask)


@naiad.jit
def scale(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, alpha * tl.load(x_ptr + offs, mask=mask), mask=mask)


@naiad.jit
def row_sum(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
    tl.store(out_ptr + row, tl.sum(x, axis=0))


class CountingBench:
    """A do_bench for the autotuner that runs each config once, and counts the tunings."""

    def __init__(self):
        self.tunings = 0
        self.lock = threading.Lock()

    def __call__(self, fn, quantiles):
        fn()
        return [1.0] * len(quantiles)


BENCH = CountingBench()


def _tuning_started(configs, named_args, **kwargs):
    with BENCH.lock:
        BENCH.tunings += 1
    return configs


@naiad.autotune(
    configs=[naiad.Config({"BLOCK": 64}), naiad.Config({"BLOCK": 128})],
    key=["n"],
    do_bench=BENCH,
    prune_configs_by={"early_config_prune": _tuning_started},
)
@naiad.heuristics({"SQUARE": lambda args: args["n"] % 2 == 0})
@naiad.jit
def tuned_square(x_ptr, out_ptr, n, BLOCK: tl.constexpr, SQUARE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * x if SQUARE else x + x, mask=mask)


def _vector(rng, n):
    return rng.standard_normal(n).astype(np.float32)


def run_add(rng, n, block):
    x, y = _vector(rng, n), _vector(rng, n)
    out = np.full(n, np.nan, np.float32)
    add[(naiad.cdiv(n, block),)](x, y, out, n, BLOCK=block)
    np.testing.assert_array_equal(out, x + y)


def run_scale(rng, n, block):
    x, alpha = _vector(rng, n), float(rng.standard_normal())
    out = np.full(n, np.nan, np.float32)
    scale[lambda meta: (naiad.cdiv(n, meta["BLOCK"]),)](x, out, n, alpha, BLOCK=block)
    np.testing.assert_array_equal(out, np.float32(alpha) * x)


def run_row_sum(rng, rows, block):
    x = rng.standard_normal((rows, 100)).astype(np.float32)
    out = np.full(rows, np.nan, np.float32)
    row_sum[(rows,)](x, out, 100, BLOCK=block)
    np.testing.assert_allclose(out, x.sum(axis=1), rtol=1e-5, atol=1e-5)


def run_tuned(rng, n, _):
    x = _vector(rng, n)
    out = np.full(n, np.nan, np.float32)
    tuned_square[lambda meta: (naiad.cdiv(n, meta["BLOCK"]),)](x, out, n)
    np.testing.assert_array_equal(out, x * x if n % 2 == 0 else x + x)


def cases(quick: bool = False):
    """(launch, size, block): two specializations of `add` (two keys of one kernel), small and
    large grids, an autotuned kernel under heuristics, then a float scalar argument, a
    reduction, and another tuning key."""
    every = [
        (run_add, 1000, 64),
        (run_add, 300_000, 128),
        (run_tuned, 4096, None),
        (run_scale, 5000, 128),
        (run_row_sum, 64, 128),
        (run_tuned, 777, None),
    ]
    return every[:3] if quick else every


def main(threads: int, rounds: int, quick: bool) -> int:
    barrier = threading.Barrier(threads)
    errors, launches = [], []

    def work(seed):
        rng = np.random.default_rng(seed)
        order = cases(quick)
        random.Random(seed).shuffle(order)
        barrier.wait()
        try:
            for _ in range(rounds):
                for launch, size, block in order:
                    launch(rng, size, block)
                    launches.append(1)
        except Exception as error:  # reported below: the main thread does not see it
            errors.append(f"thread {seed}: {type(error).__name__}: {error}")

    workers = [threading.Thread(target=work, args=(seed,)) for seed in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    if errors:
        print("\n".join(errors[:5]))
        return 1
    print("ok", len(launches), BENCH.tunings)
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:] == ["quick"]))
