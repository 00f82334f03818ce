"""Autotuning kept on disk (`cache_results=True`) and the configs of a tuning compiled in
parallel (runtime/autotune_cache.py), with real kernels compiled for the CPU."""

import os
import subprocess
import sys
import textwrap
import threading

import numpy as np

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.runtime import autotune_cache
from naiad.runtime.autotuner import Config, autotune

BLOCKS = (16, 32, 64)


@naiad.jit
def _scale(x, out, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * factor, mask=offs < n)


def _grid(meta):
    return (-(-meta["n"] // meta["BLOCK"]),)


class CountingBench:
    """Timings that only depend on BLOCK (64 wins), and how many configs were timed."""

    def __init__(self):
        self.timed = 0

    def __call__(self, fn, quantiles):
        fn()
        self.timed += 1
        return [float(self.timed)] * len(quantiles) if self.timed != 3 else [0.1] * 3


def _tuner(bench, blocks=BLOCKS, cache_results=True):
    configs = [Config({"BLOCK": b}) for b in blocks]
    return autotune(configs, key=["n"], do_bench=bench, cache_results=cache_results)(_scale)


def _launch(tuner, n, gen):
    x = gen.standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    tuner[_grid](x, out, n, 1.5)
    np.testing.assert_array_equal(out, x * np.float32(1.5))


def test_a_stored_choice_is_taken_without_timing(cpu_fresh_cache):
    gen = np.random.default_rng(0)
    first = CountingBench()
    _launch(_tuner(first), 200, gen)
    assert first.timed == 3
    again = CountingBench()  # a new autotuner: nothing in memory, as in a new process
    tuner = _tuner(again)
    _launch(tuner, 200, gen)
    assert again.timed == 0 and tuner.best_config == Config({"BLOCK": 64})
    _launch(tuner, 300, gen)  # another key is timed
    assert again.timed == 3


def test_a_choice_is_not_taken_by_other_configs_or_without_cache_results(cpu_fresh_cache):
    gen = np.random.default_rng(1)
    _launch(_tuner(CountingBench()), 128, gen)
    other = CountingBench()
    _launch(_tuner(other, blocks=(16, 32, 128)), 128, gen)
    assert other.timed == 3
    plain = CountingBench()
    _launch(_tuner(plain, cache_results=False), 128, gen)
    assert plain.timed == 3


def test_a_second_process_reads_the_choice(cpu_fresh_cache):
    gen = np.random.default_rng(2)
    _launch(_tuner(CountingBench()), 96, gen)
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        import numpy as np
        from test_autotune_cache import CountingBench, _launch, _tuner
        bench = CountingBench()
        tuner = _tuner(bench)
        _launch(tuner, 96, np.random.default_rng(3))
        print(bench.timed, tuner.best_config.kwargs["BLOCK"])
        """
    )
    env = {**os.environ, "NAIAD_BACKEND": "cpu", "NAIAD_CACHE_DIR": str(cpu_fresh_cache)}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "64"]


def test_configs_compile_in_parallel_workers(cpu_fresh_cache, monkeypatch):
    monkeypatch.setattr(autotune_cache, "_cores", lambda: 2)
    tuner = _tuner(CountingBench(), cache_results=False)
    x, out = np.ones(64, np.float32), np.zeros(64, np.float32)
    tuner.nargs = {"x": x, "out": out, "n": 64, "factor": 2.0}
    configs = list(tuner.configs)
    assert autotune_cache.compile_in_parallel(tuner, (x, out, 64, 2.0), _grid, {}, configs) == 2
    entries = [p for p in cpu_fresh_cache.rglob("*") if p.is_file()]
    assert entries  # the workers wrote the compiled kernels
    with knobs.override(NAIAD_INTERPRET="1"):
        assert autotune_cache.compile_in_parallel(tuner, (x, out, 64, 2.0), _grid, {}, configs) == 0
    # Another Python thread (it could be importing a module the children would need): no fork.
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert autotune_cache.compile_in_parallel(tuner, (x, out, 64, 2.0), _grid, {}, configs) == 0
    finally:
        release.set()
        other.join()


def test_the_listener_hears_each_choice_timed_or_read(cpu_fresh_cache):
    """Triton's autotuning listener (runtime/autotune_report.py): once per new key, timed or
    read from the disk cache, never for a key in memory or a single config."""
    gen = np.random.default_rng(4)
    heard = []
    with knobs.override(NAIAD_AUTOTUNING_LISTENER=lambda **kw: heard.append(kw)):
        tuner = _tuner(CountingBench())
        _launch(tuner, 200, gen)
        _launch(tuner, 200, gen)  # in memory: nothing to tell
        _launch(_tuner(CountingBench()), 200, gen)  # a new autotuner reads the disk cache
        _launch(_tuner(CountingBench(), blocks=(32,)), 200, gen)
    assert [h["cache_hit"] for h in heard] == [False, True]
    timed, read = heard
    assert timed["fn"] is _scale and timed["key"][0] == 200
    assert timed["best_config"] == Config({"BLOCK": 64}) and len(timed["configs_timings"]) == 3
    assert timed["duration"] > 0 and read["duration"] is None
    assert read["best_config"] == Config({"BLOCK": 64}) and read["configs_timings"] is None


def test_the_setting_keeps_every_tuners_choice(cpu_fresh_cache):
    """NAIAD_CACHE_AUTOTUNING (Triton's `knobs.autotuning.cache`) makes tuners that did not
    ask for `cache_results` keep their choices on disk too."""
    gen = np.random.default_rng(5)
    with knobs.override(NAIAD_CACHE_AUTOTUNING="1"):
        first = CountingBench()
        _launch(_tuner(first, cache_results=False), 96, gen)
        again = CountingBench()
        tuner = _tuner(again, cache_results=False)
        _launch(tuner, 96, gen)
    assert (first.timed, again.timed) == (3, 0) and tuner.best_config == Config({"BLOCK": 64})
    plain = CountingBench()
    _launch(_tuner(plain, cache_results=False), 96, gen)  # the setting is off again
    assert plain.timed == 3
