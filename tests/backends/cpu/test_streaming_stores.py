"""Streaming (non-temporal) stores on the CPU: the store hints reach the code, a launch chooses
for unhinted stores by the bytes it writes (a store in a loop counted by the loop's trips), and
results never depend on the choice."""

import ctypes
import itertools
import platform
import re
import types

import numpy as np
import pytest
from host_code import load_ir
from launch_kernels import add_kernel
from llvmlite import ir

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.backends.cpu import lanes, pool
from naiad.backends.cpu.codegen.loops import ForLoop
from naiad.backends.cpu.codegen.streaming import MAX_COUNTED_TRIPS, launch_flag
from naiad.runtime import cpu_streaming

pytestmark = pytest.mark.usefixtures("cpu_fresh_cache")

X86 = platform.machine() in ("x86_64", "AMD64")


@naiad.jit
def hinted_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, CACHE: tl.constexpr, EVICT: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + 1, mask=mask, cache_modifier=CACHE, eviction_policy=EVICT)


@naiad.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """A store of a loaded block (a plain copy, no elementwise generic)."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)


@naiad.jit
def rows_kernel(x_ptr, out_ptr, m, n, stride, ROWS: tl.constexpr, COLS: tl.constexpr):
    """A 2-D block under a box mask: each row streams on its own."""
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)[:, None]
    cols = tl.arange(0, COLS)[None, :]
    mask = (rows < m) & (cols < n)
    x = tl.load(x_ptr + rows * stride + cols, mask=mask)
    tl.store(out_ptr + rows * stride + cols, x * x - 3, mask=mask)


@naiad.jit
def indexed_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """A stored value that reads the lanes' offsets (computed into scratch, then streamed)."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + offsets.to(tl.float32), mask=mask)


@naiad.jit
def shift_kernel(p_ptr, n, BLOCK: tl.constexpr):
    """Writes where it reads, one element on: the whole block is read before it is written."""
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(p_ptr + offsets, mask=mask)
    tl.store(p_ptr + offsets + 1, x * 2, mask=mask)


def _forget(*kernels):
    """Drop the loaded kernels, so the next launch prepares again (and reads the knob)."""
    for kernel in kernels:
        kernel.forget_compiled()


def _run(kernel, grid, args, stream_bytes, **constexprs):
    _forget(kernel)
    with knobs.override(NAIAD_CPU_STREAM_BYTES=stream_bytes):
        kernel[grid](*args, **constexprs)
        kernel[grid](*args, **constexprs)  # the prepared (hot path) launch too
    _forget(kernel)


def _interpreted(kernel, grid, args, **constexprs):
    with knobs.override(NAIAD_BACKEND="interpreter"):
        kernel[grid](*args, **constexprs)


ALWAYS, NEVER = "1", str(1 << 62)


def _unaligned(rng, n, dtype, shift):
    """`n` elements `shift` elements past an aligned start: the heads and tails differ."""
    data = np.empty(n + 64, dtype)
    return data[shift : shift + n]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int8])
@pytest.mark.parametrize("n, shift", [(1, 0), (1000, 1), (4096, 0), (10001, 3)])
def test_add_streams_the_same_as_the_interpreter(dtype, n, shift):
    rng = np.random.default_rng(n + shift)
    x = (rng.standard_normal(n) * 20).astype(dtype)
    y = (rng.standard_normal(n) * 20).astype(dtype)
    grid = (naiad.cdiv(n, 512),)
    expected = _unaligned(rng, n, dtype, shift)
    _interpreted(add_kernel, grid, (x, y, expected, n), BLOCK=512)
    for mode in (ALWAYS, NEVER):
        out = _unaligned(rng, n, dtype, shift)
        out[:] = rng.standard_normal(n).astype(dtype)
        _run(add_kernel, grid, (x, y, out, n), mode, BLOCK=512)
        np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("n, shift", [(777, 5), (8192, 0)])
def test_copy_and_rows_stream_the_same(n, shift):
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(np.float32)
    expected = _unaligned(rng, n, np.float32, shift)
    _interpreted(copy_kernel, (naiad.cdiv(n, 1024),), (x, expected, n), BLOCK=1024)
    for mode in (ALWAYS, NEVER):
        out = _unaligned(rng, n, np.float32, shift)
        out[:] = 7
        _run(copy_kernel, (naiad.cdiv(n, 1024),), (x, out, n), mode, BLOCK=1024)
        np.testing.assert_array_equal(out, expected)

    m, cols, stride = 37, 100, 131
    a = rng.standard_normal(m * stride).astype(np.float32)
    expected = np.full(m * stride, 5, np.float32)
    args = (a, expected, m, cols, stride)
    _interpreted(rows_kernel, (naiad.cdiv(m, 8),), args, ROWS=8, COLS=128)
    for mode in (ALWAYS, NEVER):
        out = np.full(m * stride, 5, np.float32)
        _run(rows_kernel, (naiad.cdiv(m, 8),), (a, out, m, cols, stride), mode, ROWS=8, COLS=128)
        np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("n", [300, 1000])
def test_indexed_and_overlapping_stores_stream_the_same(n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(np.float32)
    grid = (naiad.cdiv(n, 512),)
    expected = np.empty(n, np.float32)
    _interpreted(indexed_kernel, grid, (x, expected, n), BLOCK=512)
    data = rng.standard_normal(n + 1).astype(np.float32)
    shifted = data.copy()
    _interpreted(shift_kernel, (1,), (shifted, n), BLOCK=1024)
    for mode in (ALWAYS, NEVER):
        out = np.full(n, 9, np.float32)
        _run(indexed_kernel, grid, (x, out, n), mode, BLOCK=512)
        np.testing.assert_array_equal(out, expected)
        p = data.copy()
        _forget(shift_kernel)
        with knobs.override(NAIAD_CPU_STREAM_BYTES=mode):
            shift_kernel[(1,)](p, n, BLOCK=1024)
        np.testing.assert_array_equal(p, shifted)


@pytest.mark.parametrize(
    "cache, evict, attribute",
    [
        (".cs", "", "{naiad.nontemporal = true}"),
        ("", "evict_first", "{naiad.nontemporal = true}"),
        ("", "evict_last", "{naiad.nontemporal = false}"),
        (".wb", "", None),
    ],
)
def test_store_hints_reach_the_linalg_and_the_code(cache, evict, attribute):
    kernel = hinted_kernel.warmup(
        "*fp32", "*fp32", 4096, grid=(1,), BLOCK=1024, CACHE=cache, EVICT=evict, target="cpu"
    )
    store = next(line for line in kernel.asm["ttir"].splitlines() if "tt.store" in line)
    assert (f"cacheModifier = {cache[1:]}" in store) == bool(cache)
    assert (f"evictionPolicy = {evict}" in store) == bool(evict)
    materialize = [line for line in kernel.asm["linalg"].splitlines() if "materialize" in line]
    assert all((attribute or "naiad.nontemporal") in line for line in materialize) == (
        attribute is not None
    )
    # Streamed always when asked; never when asked to keep; else the launch chooses.
    stream_bytes = kernel.metadata["stream_bytes"]
    assert stream_bytes == (4096 if attribute is None else 0)
    if X86:
        streams = re.search(r"\bv?movntps\b", kernel.asm["asm"]) is not None  # SSE or AVX
        assert streams == (attribute != "{naiad.nontemporal = false}")
        assert ("sfence" in kernel.asm["asm"]) == streams


def test_hinted_store_honoured_on_small_launches():
    rng = np.random.default_rng(5)
    n = 3000
    x = rng.standard_normal(n).astype(np.float32)
    out = _unaligned(rng, n, np.float32, 2)
    with knobs.override(NAIAD_CPU_STREAM_BYTES=NEVER):
        hinted_kernel[(naiad.cdiv(n, 1024),)](x, out, n, BLOCK=1024, CACHE=".cs", EVICT="")
    np.testing.assert_array_equal(out, x + 1)


def test_short_rows_never_stream():
    kernel = add_kernel.warmup("*fp32", "*fp32", "*fp32", 64, grid=(1,), BLOCK=32, target="cpu")
    assert kernel.metadata["stream_bytes"] == 0
    if X86:
        assert "vmovntps" not in kernel.asm["asm"]


def _flags(monkeypatch):
    """The stream slot (the last) of every parameter block the pool runs, or a prepared
    launch runs on the calling thread (lanes.direct_launch: grids of little work)."""
    seen = []
    run, direct_launch = pool.run, lanes.direct_launch

    def spy(entry, params, *rest):
        seen.append(int(params[len(params) - 1]))
        return run(entry, params, *rest)

    def direct_spy(*made):
        launch = direct_launch(*made)

        def spied(params, end):
            seen.append(int(params[len(params) - 1]))
            return launch(params, end)

        return spied

    monkeypatch.setattr(pool, "run", spy)
    monkeypatch.setattr(lanes, "direct_launch", direct_spy)
    return seen


def test_the_launch_passes_the_bytes_each_program_must_store(monkeypatch):
    rng = np.random.default_rng(9)
    n = 1 << 16
    x, y = rng.standard_normal(n, np.float32), rng.standard_normal(n, np.float32)
    out = np.empty(n, np.float32)
    seen = _flags(monkeypatch)
    _forget(add_kernel)
    # 1024-element blocks store 4 KiB each: 16 programs reach 64 KiB, 15 do not.
    with knobs.override(NAIAD_CPU_STREAM_BYTES=str(64 << 10)):
        for programs in (15, 16, 64, 15, 16):  # the slow path first, then the hot path
            add_kernel[(programs,)](x, y, out, programs * 1024, BLOCK=1024)
    _forget(add_kernel)
    assert seen == [4370, 4096, 1024, 4370, 4096]
    np.testing.assert_array_equal(out, x * 2 + y)


def test_the_default_threshold_is_half_the_last_level_cache():
    cache = cpu_streaming.last_level_cache_bytes()
    assert cache >= 1 << 20
    with knobs.override(NAIAD_CPU_STREAM_BYTES=""):
        assert cpu_streaming.stream_threshold() == cache // 2
    with knobs.override(NAIAD_CPU_STREAM_BYTES="1"):
        assert cpu_streaming.stream_threshold() == 1
    assert cpu_streaming.program_threshold(1, 64) == 1
    assert cpu_streaming.program_threshold(1 << 24, 64) == 1 << 18


@naiad.jit
def row_loop_kernel(x_ptr, out_ptr, m, n, BLOCK: tl.constexpr):
    """Programs striding over the rows, one store per row, as tutorial 02's softmax does."""
    cols = tl.arange(0, BLOCK)
    for row in tl.range(tl.program_id(0), m, tl.num_programs(0)):
        x = tl.load(x_ptr + row * n + cols, mask=cols < n)
        tl.store(out_ptr + row * n + cols, x * 3 - 1, mask=cols < n)


def test_a_row_loop_streams_the_same():
    rng = np.random.default_rng(12)
    m, n = 37, 300
    x = rng.standard_normal(m * n).astype(np.float32)
    expected = np.empty_like(x)
    _interpreted(row_loop_kernel, (4,), (x, expected, m, n), BLOCK=512)
    # 4 programs of 9 or 10 rows of 2 KiB blocks: 64 KiB streams only with the rows counted.
    for mode in (ALWAYS, NEVER, str(64 << 10)):
        out = np.full_like(x, 5)
        _run(row_loop_kernel, (4,), (x, out, m, n), mode, BLOCK=512)
        np.testing.assert_array_equal(out, expected)


def _decision_module(depth: int) -> ir.Module:
    """`i1 decide(i64 flag, i64 threshold, i64 lower, i64 upper, i64 step, ...)`: whether a
    4 KiB store streams under `depth` nested loops of those bounds (the last slot's
    threshold, the program's flag)."""
    i64 = ir.IntType(64)
    module = ir.Module(name="decide")
    function = ir.Function(
        module, ir.FunctionType(ir.IntType(8), [i64] * (2 + 3 * depth)), "decide"
    )
    b = ir.IRBuilder(function.append_basic_block("entry"))
    flag, threshold, *bounds = function.args
    loops = [ForLoop(None, None, *bounds[3 * d : 3 * d + 3], False) for d in range(depth)]
    fl = types.SimpleNamespace(
        builder=b,
        loops=loops,
        stream=b.icmp_signed("!=", flag, i64(0)),
        stream_threshold=threshold,
    )
    b.ret(b.zext(launch_flag(fl, 4096), ir.IntType(8)))
    return module


@pytest.mark.parametrize("depth", [1, 2])
def test_a_store_in_loops_counts_their_trips(depth):
    loaded = load_ir(str(_decision_module(depth)), ["decide"], name=f"decide{depth}")
    decide = ctypes.CFUNCTYPE(ctypes.c_int8, *[ctypes.c_int64] * (2 + 3 * depth))(
        loaded.address("decide")
    )
    loops = [(0, 64, 1), (3, 4096, 64), (5, 5, 1), (9, 2, 1), (0, 10, 0), (-7, 7, 3)]
    for bounds in itertools.product(loops, repeat=depth):
        trips = 1
        for lower, upper, step in bounds:
            trips *= max(0, -(-(upper - lower) // max(step, 1)))
        flat = [v for triple in bounds for v in triple]
        for threshold in (1, max(1, 4096 * trips), 4096 * trips + 1, 1 << 62):
            for flag in (0, 1):
                expected = flag or 4096 * trips >= threshold
                assert decide(flag, threshold, *flat) == expected, (bounds, threshold, flag)
    # The trips count up to MAX_COUNTED_TRIPS, so the bytes stay within an i64.
    huge = [0, 1 << 40, 1] * depth
    assert decide(0, 4096 * MAX_COUNTED_TRIPS, *huge) == 1
    assert decide(0, 4096 * MAX_COUNTED_TRIPS + 1, *huge) == 0


def test_aarch64_streams_with_stnp():
    kernel = hinted_kernel.warmup(
        "*fp32", "*fp32", 4096, grid=(1,), BLOCK=1024, CACHE=".cs", EVICT="", target="cpu:aarch64"
    )
    assert "stnp" in kernel.asm["asm"]
    assert "sfence" not in kernel.asm["llir"]
    assert kernel.binary[:4] == b"\x7fELF"
