"""Triton's compilation listener on Naiad (runtime/compile_listener.py): called once per compile
that gives a kernel, with its source, its metadata (hash, GPUTarget), and where the time went
(CompileTimes, microseconds); a kernel read from the disk cache is a cache hit with no
lowering or store time, and a kernel found in memory calls nothing. Through `triton.knobs` the
listener gets Triton's ASTSource. Kernels compiled for this machine's CPU, values checked
against NumPy."""

import numpy as np

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.runtime.compile_listener import CompiledSource, CompileTimes
from naiad.runtime.driver import GPUTarget
from naiad.triton import knobs as triton_knobs
from naiad.triton.compiler.compiler import ASTSource


@naiad.jit
def cumulative(x, N: tl.constexpr):
    block = x + tl.arange(0, N)
    tl.store(block, tl.cumsum(tl.load(block), 0))


def test_the_listener_hears_each_compile_and_cache_hit(cpu_fresh_cache):
    heard = []
    x = np.random.default_rng(3).standard_normal(32).astype(np.float32)
    expected = np.cumsum(x.astype(np.float64))
    with knobs.override(NAIAD_COMPILATION_LISTENER=lambda **kw: heard.append(kw)):
        cumulative.forget_compiled()
        cumulative[(1,)](x, 32)
        cumulative[(1,)](x.copy(), 32)  # in memory: nothing
        cumulative.device_caches.clear()
        cumulative[(1,)](x.copy(), 32)  # from the disk cache
    np.testing.assert_allclose(x, expected, rtol=1e-5, atol=1e-5)
    assert [h["cache_hit"] for h in heard] == [False, True]
    fresh, hit = heard
    assert isinstance(fresh["src"], CompiledSource) and fresh["src"].fn is cumulative
    assert fresh["src"].constants == {"N": 32} and fresh["src"].signature["x"] == "*fp32"
    assert fresh["metadata"]["hash"] == hit["metadata"]["hash"]
    assert isinstance(fresh["metadata"]["target"], GPUTarget)
    assert fresh["metadata"]["target"].backend == "cpu" and fresh["metadata_group"] == {}
    times, hit_times = fresh["times"], hit["times"]
    assert isinstance(times, CompileTimes) and times.ir_initialization > 0
    assert times.total_lowering > 0 and times.store_results > 0
    assert times.total == times.ir_initialization + times.total_lowering + times.store_results
    assert [name for name, _ in times.lowering_stages][-1] == "obj"
    assert hit_times.total_lowering == 0 and hit_times.store_results == 0 and hit_times.total > 0


def test_through_triton_knobs_the_listener_gets_an_ast_source(cpu_fresh_cache):
    heard = []

    def listener(src, metadata, metadata_group, times, cache_hit):
        heard.append(src)

    x = np.random.default_rng(4).standard_normal(16).astype(np.float32)
    expected = np.cumsum(x.astype(np.float64))
    with knobs.override():
        triton_knobs.compilation.listener = listener
        assert triton_knobs.compilation.listener is listener
        cumulative.forget_compiled()
        cumulative[(1,)](x, 16)
    np.testing.assert_allclose(x, expected, rtol=1e-5, atol=1e-5)
    (source,) = heard
    assert isinstance(source, ASTSource) and source.fn is cumulative
    assert source.constants == {"N": 16} and source.name == "cumulative"
