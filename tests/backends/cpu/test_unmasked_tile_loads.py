"""Loads without a mask read in place (codegen/snapshots.py): the Linalg form copies the whole
view into a fresh buffer, and where no store, atomic or call may write memory before the block's
last read, every reader (a transpose, a dot, a generic) reads the view itself, as a masked load
whose box is whole does. Attention's key and value tiles were copied every iteration.

Checked on seeded random inputs against NumPy: the plan (which copies are skipped), and the
values of a dot of a tile by the transpose of a window of a wider array (a run-time row stride),
in f32 and f16, and of a load a store overwrites before its last read (its copy stays).
"""

import numpy as np
import pytest
from store_plans import planned

import naiad
import naiad.language as tl
from naiad import knobs


@pytest.fixture(autouse=True)
def compiled():
    with knobs.override(NAIAD_BACKEND="cpu"):
        yield


@naiad.jit
def tile_times_window(a_ptr, b_ptr, out_ptr, stride_b, M: tl.constexpr, N: tl.constexpr,
                      K: tl.constexpr):  # fmt: skip
    rows, cols, ks = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rows[:, None] * K + ks[None, :])
    b = tl.load(b_ptr + cols[:, None] * stride_b + ks[None, :])
    product = tl.dot(a, tl.trans(b), input_precision="ieee")
    tl.store(
        out_ptr + rows[:, None] * N + cols[None, :], product + tl.sum(a.to(tl.float32), 1)[:, None]
    )


@naiad.jit
def store_over_then_sum(p, sums, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    x = tl.load(p + offsets)
    tl.store(p + offsets, x * 3.0)
    tl.store(sums, tl.sum(x))


@pytest.mark.parametrize("dtype, name", [(np.float32, "fp32"), (np.float16, "fp16")])
def test_tiles_are_read_in_place(dtype, name):
    M, N, K = 16, 32, 16
    plan = planned(tile_times_window, f"*{name}", f"*{name}", "*fp32", "i32", M=M, N=N, K=K)
    assert len(plan.snapshots) == 2
    rng = np.random.default_rng(11)
    a = rng.standard_normal((M, K)).astype(dtype)
    wide = rng.standard_normal((N, K + 24)).astype(dtype)  # b: its first K columns
    out = np.full((M, N), np.nan, np.float32)
    tile_times_window[(1,)](a, wide, out, K + 24, M=M, N=N, K=K)
    a64, b64 = a.astype(np.float64), wide[:, :K].astype(np.float64)
    want = a64 @ b64.T + a64.sum(axis=1)[:, None]
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_a_load_stored_over_keeps_its_copy():
    plan = planned(store_over_then_sum, "*fp32", "*fp32", BLOCK=64)
    assert not plan.snapshots
    x = np.random.default_rng(3).standard_normal(64).astype(np.float32)
    p, sums = x.copy(), np.full(1, np.nan, np.float32)
    store_over_then_sum[(1,)](p, sums, BLOCK=64)
    np.testing.assert_array_equal(p, x * np.float32(3))
    np.testing.assert_allclose(sums[0], x.astype(np.float64).sum(), rtol=1e-5)
