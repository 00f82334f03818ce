"""Loads copied in runs read in place when one run is the whole block (codegen/chunked_loads.py).

Tutorial 03's tiles wrap their rows around M (`% M`): the Linalg form copies each run of rows
that does not wrap, in a loop. When one run is the whole block and the mask keeps it all, the
dot reads the block's view itself. Checked on seeded random inputs against NumPy in float64:
the plan (both tiles of the K loop's dot), the values where every block is whole, where the
last blocks wrap around M and N and the last K step is masked, and that reading in place
changes no bit of the result (against the same kernel with every run copied).
"""

import numpy as np
import pytest
from store_plans import planned

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.backends.cpu.codegen import lower_matmul, store_plan
from naiad.runtime import compiler


@pytest.fixture(autouse=True)
def compiled(cpu_fresh_cache):
    _forget_compiled()
    yield
    _forget_compiled()


def _forget_compiled():
    compiler._cache = None
    wrapped_matmul.forget_compiled()


@naiad.jit
def wrapped_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                   BK: tl.constexpr):  # fmt: skip
    pid = tl.program_id(0)
    pid_m, pid_n = pid // tl.cdiv(N, BN), pid % tl.cdiv(N, BN)
    rows = (pid_m * BM + tl.arange(0, BM)) % M
    cols = (pid_n * BN + tl.arange(0, BN)) % N
    ks = tl.arange(0, BK)
    a_ptrs = a_ptr + rows[:, None] * K + ks[None, :]
    b_ptrs = b_ptr + ks[:, None] * N + cols[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=ks[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=ks[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
        a_ptrs += BK
        b_ptrs += BK * N
    out_rows = pid_m * BM + tl.arange(0, BM)
    out_cols = pid_n * BN + tl.arange(0, BN)
    mask = (out_rows[:, None] < M) & (out_cols[None, :] < N)
    tl.store(c_ptr + out_rows[:, None] * N + out_cols[None, :], acc, mask=mask)


BLOCKS = {"BM": 32, "BN": 32, "BK": 16}


def _run(m, n, k, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = np.full((m, n), np.nan, np.float32)
    grid = (-(-m // BLOCKS["BM"]) * -(-n // BLOCKS["BN"]),)
    wrapped_matmul[grid](a, b, c, m, n, k, **BLOCKS)
    return a, b, c


def test_both_tiles_are_planned_in_place():
    plan = planned(wrapped_matmul, "*fp32", "*fp32", "*fp32", "i32", "i32", "i32", **BLOCKS)
    tensors = {value for value in plan.chunked if not hasattr(value, "name")}
    assert len(plan.chunked) == 4 and len(tensors) == 2


@pytest.mark.parametrize("m, n, k", [(64, 96, 48), (72, 40, 37)])
def test_values(m, n, k):
    """(64, 96, 48): every block whole; (72, 40, 37): the last row and column blocks wrap and
    the last K step keeps 5 of 16 columns."""
    a, b, c = _run(m, n, k, seed=m + n + k)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("m, n, k", [(64, 96, 48), (72, 40, 37)])
def test_reading_in_place_changes_no_bit(monkeypatch, tmp_path, m, n, k):
    *_, in_place = _run(m, n, k, seed=5)
    _forget_compiled()
    planned_functions = []
    monkeypatch.setattr(store_plan, "plan_chunked_loads", lambda *args: planned_functions.append(1))
    with knobs.override(NAIAD_CACHE_DIR=str(tmp_path / "copied")):
        *_, copied = _run(m, n, k, seed=5)
    assert planned_functions  # compiled again, every run copied
    np.testing.assert_array_equal(in_place.view(np.uint32), copied.view(np.uint32))


def test_tiles_are_copied_where_the_dot_has_fewer_or_narrower_registers():
    """Only AVX-512's 32 registers of 512 bits read in place (lower_matmul.reads_rows_in_place):
    NEON's 128-bit registers, and AVX2 measured slower in place, keep the copies."""
    assert not lower_matmul.reads_rows_in_place("aarch64-unknown-linux-gnu")
