"""Where streamed stores are fenced (codegen/publish.py): once at the end of the entry point's
range of programs and before each atomic, never inside a loop of programs or of rows; and what
another program reads after an atomic is what the streamed stores wrote."""

import platform
import re

import numpy as np
import pytest
from asm_loops import innermost_loop_counts

import naiad
import naiad.language as tl
from naiad import knobs

X86 = platform.machine() in ("x86_64", "AMD64")
ALWAYS = 1  # NAIAD_CPU_STREAM_BYTES: every launch streams
x86_only = pytest.mark.skipif(not X86, reason="sfence is x86's")


@naiad.jit
def rows_kernel(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    """Programs striding over rows, storing one row per iteration (tutorial 02's shape)."""
    cols = tl.arange(0, BLOCK)
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0)):
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols)
        tl.store(out_ptr + row * n_cols + cols, x * 2.0 + 1.0, mask=cols < n_cols)


@naiad.jit
def gather_kernel(x_ptr, parts_ptr, total_ptr, count_ptr, BLOCK: tl.constexpr, EVICT: tl.constexpr):
    """Each program streams its block of x·3 into `parts`, then counts itself in; the last one
    in sums every program's part (written by other threads) into `total`. Both stores stream
    or neither, as EVICT says."""
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(parts_ptr + offsets, tl.load(x_ptr + offsets) * 3.0, eviction_policy=EVICT)
    if tl.atomic_add(count_ptr, 1) == tl.num_programs(0) - 1:
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for p in range(0, tl.num_programs(0)):
            acc += tl.load(parts_ptr + p * BLOCK + tl.arange(0, BLOCK))
        tl.store(total_ptr + tl.arange(0, BLOCK), acc, eviction_policy=EVICT)


@x86_only
def test_a_row_loop_fences_after_its_programs_not_per_row():
    kernel = rows_kernel.warmup("*fp32", "*fp32", 64, 1024, BLOCK=1024, grid=(4,), target="cpu")
    asm = kernel.asm["asm"]
    assert re.search(r"\bv?movntps\b", asm)
    assert "sfence" in asm
    assert innermost_loop_counts(asm, kernel.metadata["entry"], "sfence", ["sfence"]) == {}


@x86_only
@pytest.mark.parametrize("evict, fenced", [("evict_first", True), ("evict_last", False)])
def test_an_atomic_fences_only_a_kernel_that_streams(evict, fenced):
    kernel = gather_kernel.warmup(
        "*fp32", "*fp32", "*fp32", "*i32", BLOCK=256, EVICT=evict, grid=(8,), target="cpu"
    )
    llir = kernel.asm["llir"]
    assert ("sfence" in llir) == fenced
    if fenced:
        assert llir.index("sfence") < llir.index("atomicrmw")


@pytest.mark.parametrize("threads", [1, 2])
def test_streamed_rows_are_whole_after_the_launch(threads):
    rng = np.random.default_rng(threads)
    rows, cols = 96, 1000
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    out = np.empty_like(x)
    rows_kernel.forget_compiled()
    with knobs.override(NAIAD_CPU_STREAM_BYTES=ALWAYS, NAIAD_NUM_THREADS=threads):
        rows_kernel[(4,)](x, out, rows, cols, BLOCK=1024)
    np.testing.assert_allclose(out, x.astype(np.float64) * 2 + 1, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("threads", [1, 2])
def test_the_last_program_reads_what_the_others_streamed(threads):
    rng = np.random.default_rng(10 + threads)
    programs, block = 16, 256
    x = rng.standard_normal(programs * block).astype(np.float32)
    parts = np.empty_like(x)
    total = np.empty(block, np.float32)
    count = np.zeros(1, np.int32)
    gather_kernel.forget_compiled()
    with knobs.override(NAIAD_NUM_THREADS=threads):
        gather_kernel[(programs,)](x, parts, total, count, BLOCK=block, EVICT="evict_first")
    expected = (x.astype(np.float64) * 3).reshape(programs, block)
    np.testing.assert_allclose(parts, expected.ravel(), rtol=1e-6)
    np.testing.assert_allclose(total, expected.sum(axis=0), rtol=1e-5, atol=1e-5)
    assert count[0] == programs
