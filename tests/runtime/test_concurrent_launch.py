"""Launching from many Python threads at once (issue 13).

Threads launching a kernel for the first time at once once each compiled and loaded their own
copy; the table kept the last and the others were unmapped while their prepared launches still
called them: a fresh process segfaulted. The stress runs (concurrent_launches.py) go in a
subprocess, so that a crash fails the test instead of killing pytest; the other tests check in
this process what the fix promises: one compile per specialization, however many threads ask,
and a prepared launch that keeps the code it calls.
"""

import gc
import os
import pathlib
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad.runtime import cpu_launcher

SCRIPT = pathlib.Path(__file__).with_name("concurrent_launches.py")
# The script's cases and the tuning keys of its autotuned kernel: quick, all of them.
CASES = {True: 3, False: 6}
TUNING_KEYS = {True: 1, False: 2}


def launch_from_threads(cache_dir: pathlib.Path, threads: int, rounds: int, quick: bool):
    """Run the script in a fresh process; fail with its output unless every result matched
    and the autotuner tuned each key once."""
    env = {**os.environ, "NAIAD_BACKEND": "cpu", "NAIAD_CACHE_DIR": str(cache_dir)}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(threads), str(rounds), "quick" if quick else "all"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    output = f"exit status {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert done.returncode == 0, output
    launches = threads * rounds * CASES[quick]
    assert done.stdout.split() == ["ok", str(launches), str(TUNING_KEYS[quick])], output


def test_first_launches_from_eight_threads(tmp_path):
    launch_from_threads(tmp_path / "cache", 8, 2, quick=True)  # an empty cache: compiles
    launch_from_threads(tmp_path / "cache", 8, 2, quick=True)  # a warm one: loads


@pytest.mark.full
@pytest.mark.parametrize("attempt", range(3))
def test_first_launches_from_many_threads(tmp_path, attempt):
    launch_from_threads(tmp_path / "cache", 16, 5, quick=False)
    launch_from_threads(tmp_path / "cache", 16, 5, quick=False)


@naiad.jit
def shift(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1.0, mask=mask)


@pytest.fixture
def compiled(cpu_fresh_cache):
    """Launches compile for the CPU, into an empty cache, with nothing of `shift` in memory."""
    shift.forget_compiled()
    shift._launches.clear()


def _launch_shift(rng, n: int, block: int = 64) -> None:
    x = rng.standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    shift[(naiad.cdiv(n, block),)](x, out, n, BLOCK=block)
    np.testing.assert_array_equal(out, x + 1)


def test_threads_wanting_one_specialization_compile_it_once(compiled, monkeypatch):
    loads = []
    load = cpu_launcher.load_launchable

    def slow_load(kernel):
        loads.append(kernel.metadata["constexprs"]["BLOCK"])
        time.sleep(0.05)  # every thread asks while the first compile runs
        return load(kernel)

    monkeypatch.setattr(cpu_launcher, "load_launchable", slow_load)
    barrier = threading.Barrier(8)
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        barrier.wait()
        try:
            for _ in range(3):
                _launch_shift(rng, 1000, block=64 if seed % 2 else 128)
        except Exception as error:  # reported below: pytest does not see other threads' errors
            errors.append(error)

    workers = [threading.Thread(target=work, args=(seed,)) for seed in range(8)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    assert sorted(loads) == ["128", "64"]  # one compile per key, the other threads waited
    assert len(shift._launchers["cpu"].kernels) == 2


def test_a_prepared_launch_keeps_the_code_it_calls(compiled):
    rng = np.random.default_rng(0)
    _launch_shift(rng, 1000)
    (prepared,) = shift._launches.values()
    # Drop every other reference to the loaded kernel (the table's entry, the launch table),
    # as a thread replacing the entry would: the table itself stays, so the launch runs.
    shift._launchers["cpu"].kernels.clear()
    shift._launches.clear()
    gc.collect()
    x = rng.standard_normal(1000).astype(np.float32)
    out = np.full(1000, np.nan, np.float32)
    assert prepared((16, 1, 1), (x.ctypes.data, out.ctypes.data, 1000), (x, out, 1000))
    np.testing.assert_array_equal(out, x + 1)
    _launch_shift(rng, 1000)  # the next launch takes the slow path again and compiles
    assert len(shift._launchers["cpu"].kernels) == 1
