"""Row kernels compiled for the CPU: masked loads read in place when their box is whole
(codegen/snapshots.py), and reductions over vectors of partial accumulators
(codegen/lower_reduce.py).

Each kernel runs compiled (`NAIAD_BACKEND=cpu`) on seeded random rows, with the rows full and
cut short by the mask, against NumPy; maxima, minima and argmax exactly, sums within a few ulp
of the row's magnitude. The plan is checked too: the loads of a softmax are read in place, and a
load that a store may overwrite before its last use keeps its snapshot.
"""

import numpy as np
import pytest
from fixture_kernels.propagating_extrema import maximum, minimum
from store_plans import planned

import naiad
import naiad.language as tl
from naiad import knobs


@pytest.fixture(autouse=True)
def compiled():
    with knobs.override(NAIAD_BACKEND="cpu"):
        yield


@naiad.jit
def softmax_rows(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


@naiad.jit
def store_then_sum(x_ptr, y_ptr, sums_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = row * n_cols + tl.arange(0, BLOCK)
    mask = tl.arange(0, BLOCK) < n_cols
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.store(x_ptr + offsets, tl.load(y_ptr + offsets, mask=mask), mask=mask)
    tl.store(sums_ptr + row, tl.sum(x, axis=0))  # the values loaded, not those stored


@naiad.jit
def reduce_rows(x_ptr, out_ptr, n_cols, OP: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0)
    if OP == "sum":
        result = tl.sum(x, axis=0)
    elif OP == "max":
        result = tl.max(x, axis=0)
    elif OP == "min":
        result = tl.min(x, axis=0)
    else:
        result = tl.argmax(x, axis=0)
    tl.store(out_ptr + row, result)


@naiad.jit
def propagating_extremum_rows(x_ptr, out_ptr, n_cols, MAX: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0)
    result = tl.reduce(x, 0, maximum) if MAX else tl.reduce(x, 0, minimum)
    tl.store(out_ptr + row, result)


@naiad.jit
def reduce_tile(x_ptr, out_ptr, AXIS: tl.constexpr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    tl.store(out_ptr + tl.arange(0, N if AXIS == 0 else M), tl.sum(x, axis=AXIS))


@naiad.jit
def offset_sum_rows(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.reduce(x, 0, _add_then_offset))


@naiad.jit
def _add_then_offset(a, b):
    return a + b + 0.5  # a constant in the region: combined lane by lane, not on vectors


@naiad.jit
def mean_and_variance(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    """Layer norm's statistics: zeroed accumulators carried by loops over the row, whose last
    iteration's load is partial when BLOCK does not divide n_cols."""
    row = tl.program_id(0)
    total = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        total += tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    mean = tl.sum(total, axis=0) / n_cols
    squares = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
        x = tl.where(cols < n_cols, x - mean, 0.0)
        squares += x * x
    tl.store(out_ptr + 2 * row, mean)
    tl.store(out_ptr + 2 * row + 1, tl.sum(squares, axis=0) / n_cols)


def _rows(gen, shape, dtype):
    if np.dtype(dtype).kind == "f":
        return (gen.standard_normal(shape) + 0.25).astype(dtype)
    return gen.integers(-1000, 1000, shape).astype(dtype)


@pytest.mark.parametrize("n_cols", [1024, 1000, 64])
def test_softmax_rows_match_numpy(n_cols):
    gen = np.random.default_rng(n_cols)
    x = _rows(gen, (37, n_cols), np.float32)
    out = np.full_like(x, np.nan)
    softmax_rows[(37,)](out, x, n_cols, BLOCK=naiad.next_power_of_2(n_cols))
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=2e-6, atol=1e-9)


def test_softmax_load_is_read_in_place():
    plan = planned(softmax_rows, "*fp32", "*fp32", "i32", BLOCK=1024)
    assert len(plan.snapshots) == 1


def test_a_store_before_the_last_use_keeps_the_snapshot():
    plan = planned(store_then_sum, "*fp32", "*fp32", "*fp32", "i32", BLOCK=256)
    assert not plan.snapshots
    gen = np.random.default_rng(7)
    for n_cols in (256, 200):
        x, y = _rows(gen, (5, n_cols), np.float32), _rows(gen, (5, n_cols), np.float32)
        original = x.copy()
        sums = np.full(5, np.nan, np.float32)
        store_then_sum[(5,)](x, y, sums, n_cols, BLOCK=256)
        np.testing.assert_array_equal(x, y)
        np.testing.assert_allclose(sums, original.astype(np.float64).sum(axis=1), rtol=1e-5)


@naiad.jit
def scale_shifted(p, n, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    x = tl.load(p + offsets, mask=offsets < n)
    tl.store(p + offsets + SHIFT, x * 2.0, mask=offsets < n)


@pytest.mark.parametrize("shift", [1, 0, -3, 40])
def test_a_store_overlapping_its_own_load_sees_the_snapshot(shift):
    """The store is computed from the loaded view in place only where the two regions are apart
    or the same elements; overlapping at an offset, the load's copy is made after all."""
    gen = np.random.default_rng(abs(shift))
    data = _rows(gen, 128, np.float32)
    out = data.copy()
    start = 8
    scale_shifted[(1,)](out[start:], 32, SHIFT=shift, BLOCK=32)
    expected = data.copy()
    expected[start + shift : start + shift + 32] = data[start : start + 32] * 2
    np.testing.assert_array_equal(out, expected)


@naiad.jit
def halve_into(p, q, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    x = tl.load(p + offsets, mask=offsets < n)
    tl.store(q + offsets, x.to(tl.float16), mask=offsets < n)


@pytest.mark.parametrize("byte_shift", [-64, -6, 0, 2, 40, 128])
def test_a_converting_store_over_its_own_load_sees_the_snapshot(byte_shift):
    """An f32 load stored as f16 into the same memory: read in place where the byte ranges are
    apart (-64: ends where the load starts; 128: starts where it ends), copied first where they
    overlap at any offset, the same first byte included."""
    gen = np.random.default_rng(abs(byte_shift) + 1)
    memory = np.zeros(512, np.uint8)
    start = 192
    memory[start : start + 128] = _rows(gen, 32, np.float32).view(np.uint8)
    loaded = memory[start : start + 128].view(np.float32).copy()
    written = start + byte_shift
    halve_into[(1,)](memory[start:].view(np.float32), memory[written:].view(np.float16), 32,
                     BLOCK=32)  # fmt: skip
    np.testing.assert_array_equal(
        memory[written : written + 64].view(np.float16), loaded.astype(np.float16)
    )


@naiad.jit
def reverse_into(p, q, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    x = tl.load(p + (n - 1 - offsets), mask=offsets < n)
    tl.store(q + offsets, x, mask=offsets < n)


def test_a_load_stored_as_it_is_is_copied_from_where_it_lies():
    plan = planned(reverse_into, "*fp32", "*fp32", "i32", BLOCK=32)
    assert len(plan.copy_stores) == 1 and not plan.snapshots


@pytest.mark.parametrize("shift", [0, 5, -7, 40, -40])
@pytest.mark.parametrize("n", [32, 29])
def test_a_load_stored_as_it_is_over_itself_sees_the_snapshot(shift, n):
    """A row read backwards and stored as it is (the store copies from the loaded view): into
    itself (0: the same bytes, other strides), overlapping at an offset, and apart (±40); a
    full and a partial box."""
    gen = np.random.default_rng(n + shift + 100)
    data = _rows(gen, 128, np.float32)
    out = data.copy()
    start = 48
    reverse_into[(1,)](out[start:], out[start + shift :], n, BLOCK=32)
    expected = data.copy()
    expected[start + shift : start + shift + n] = data[start : start + n][::-1]
    np.testing.assert_array_equal(out, expected)


REDUCTIONS = [
    ("sum", np.float32),
    ("sum", np.float64),
    ("sum", np.int32),
    ("max", np.float32),
    ("min", np.float64),
    ("max", np.int64),
    ("min", np.int32),
    ("max", np.float16),
    ("argmax", np.float32),
]


@pytest.mark.parametrize("op, dtype", REDUCTIONS)
@pytest.mark.parametrize("n_cols, block", [(1024, 1024), (1000, 1024), (48, 64), (32, 32)])
def test_row_reductions_match_numpy(op, dtype, n_cols, block):
    gen = np.random.default_rng(n_cols + block)
    x = _rows(gen, (9, n_cols), dtype)
    if dtype == np.float32 and op == "max":
        x[1, 3], x[2, :] = np.nan, -0.0  # maximum ignores NaN; -0 orders below +0
        x[2, 5] = 0.0
    result_type = np.int32 if op == "argmax" else dtype
    out = np.zeros(9, result_type)
    reduce_rows[(9,)](x, out, n_cols, OP=op, BLOCK=block)
    padded = np.zeros((9, block), dtype)  # `other` is 0 past n_cols
    padded[:, :n_cols] = x
    if op == "sum" and np.dtype(dtype).kind == "f":
        exact = padded.astype(np.float64).sum(axis=1)
        scale = np.abs(padded.astype(np.float64)).sum(axis=1)
        assert np.all(np.abs(out - exact) <= 8 * np.finfo(dtype).eps * scale)
        return
    expected = {"sum": np.sum, "max": np.fmax.reduce, "min": np.fmin.reduce}.get(op, np.argmax)
    reference = expected(padded, axis=1).astype(result_type)
    np.testing.assert_array_equal(out, reference)
    if dtype == np.float32 and op == "max":
        assert not np.signbit(out[2])


@pytest.mark.parametrize("axis", [0, 1])
def test_tile_reductions_along_either_axis(axis):
    gen = np.random.default_rng(axis)
    x = _rows(gen, (64, 128), np.float32)
    out = np.full(128 if axis == 0 else 64, np.nan, np.float32)
    reduce_tile[(1,)](x, out, AXIS=axis, M=64, N=128)
    np.testing.assert_allclose(out, x.astype(np.float64).sum(axis=axis), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("n_cols", [512, 300])
def test_a_region_with_constants_combines_lane_by_lane(n_cols):
    gen = np.random.default_rng(n_cols)
    x = _rows(gen, (3, n_cols), np.float32)
    out = np.full(3, np.nan, np.float32)
    offset_sum_rows[(3,)](x, out, n_cols, BLOCK=512)
    # 511 combines, each adding 0.5, whatever their order.
    expected = x.astype(np.float64).sum(axis=1) + 0.5 * 511
    np.testing.assert_allclose(out, expected, rtol=1e-5)


@pytest.mark.parametrize("n_cols", [1024, 2048, 1500, 700])
def test_carried_accumulators_match_numpy(n_cols):
    gen = np.random.default_rng(n_cols)
    x = _rows(gen, (6, n_cols), np.float32)
    out = np.full((6, 2), np.nan, np.float32)
    mean_and_variance[(6,)](x, out, n_cols, BLOCK=512)
    wide = x.astype(np.float64)
    np.testing.assert_allclose(out[:, 0], wide.mean(axis=1), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(out[:, 1], wide.var(axis=1), rtol=1e-4)


def test_zeroed_accumulators_are_stored_inline():
    """A zero fill of a few KiB is `llvm.memset.inline`, never a call of the C library's
    memset (which cost as much as the rest of a layer norm's row)."""
    compiled = mean_and_variance.warmup(
        "*fp32", "*fp32", "i32", grid=(1,), target="cpu", BLOCK=1024
    )
    assert "llvm.memset.inline" in compiled.asm["llir"]
    assert "memset" not in compiled.asm["asm"]


def _float_rule_extremum(row: np.ndarray, is_max: bool) -> np.float32:
    """maxnumf / minnumf by the float rules, folded in float64: NaN loses to a number, -0
    orders below +0 (NaN only when every element is one)."""
    numbers = row[~np.isnan(row)].astype(np.float64)
    if numbers.size == 0:
        return np.float32(np.nan)
    best = numbers.max() if is_max else numbers.min()
    if best == 0:
        signs = np.signbit(numbers[numbers == 0])
        negative = signs.all() if is_max else signs.any()
        return np.float32(-0.0 if negative else 0.0)
    return np.float32(best)


def _special_rows(gen, n: int) -> np.ndarray:
    """Rows where a NaN, an infinity or the sign of a zero decides a maximum or minimum."""
    negative_nan = np.array([0xFFC00001], np.uint32).view(np.float32)[0]
    rows = [
        gen.standard_normal(n),
        -np.abs(gen.standard_normal(n)),  # every sign set: a maximum is the nearest to zero
        np.abs(gen.standard_normal(n)),  # every sign clear: a minimum is the nearest to zero
        np.full(n, -0.0),
        np.where(gen.random(n) < 0.5, -0.0, 0.0),
        np.concatenate([-np.abs(gen.standard_normal(n - 1)), [-0.0]]),
        np.concatenate([np.abs(gen.standard_normal(n - 1)), [0.0]]),
        np.full(n, np.nan),
        np.full(n, negative_nan),
        np.where(gen.random(n) < 0.1, np.nan, gen.standard_normal(n)),
        np.where(gen.random(n) < 0.1, negative_nan, gen.standard_normal(n)),
        np.where(gen.random(n) < 0.1, negative_nan, -np.abs(gen.standard_normal(n))),
        np.where(gen.random(n) < 0.1, np.nan, np.abs(gen.standard_normal(n))),
        np.where(gen.random(n) < 0.5, np.inf, -np.inf),
        np.full(n, -np.inf),
    ]
    return np.stack(rows).astype(np.float32)


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("n_cols", [256, 200])
def test_f32_extrema_on_bits_keep_the_float_rules(op, n_cols):
    """An f32 tl.max / tl.min folds the elements' bits as integers (lower_reduce.py); signed
    zeros, NaNs of either sign and infinities give the float rules' result, bit for bit."""
    gen = np.random.default_rng(7 + n_cols)
    x = _special_rows(gen, n_cols)
    for permuted in (x, x[:, gen.permutation(n_cols)].copy()):
        out = np.full(len(x), 1.5, np.float32)
        reduce_rows[(len(x),)](permuted, out, n_cols, OP=op, BLOCK=256)
        padded = np.zeros((len(x), 256), np.float32)  # `other` is 0 past n_cols
        padded[:, :n_cols] = permuted
        expected = np.array([_float_rule_extremum(r, op == "max") for r in padded])
        assert np.array_equal(np.isnan(out), np.isnan(expected))
        numbers = ~np.isnan(expected)
        np.testing.assert_array_equal(
            out[numbers].view(np.uint32), expected[numbers].view(np.uint32)
        )


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("n_cols", [256, 200, 1024])
def test_f32_nan_propagating_extrema_on_bits_keep_the_float_rules(op, n_cols):
    """tl.maximum / tl.minimum with propagate_nan over a row (maximumf / minimumf) fold the
    bits with a third accumulator (lower_reduce.py): NaN wherever a NaN of either sign is in
    the row, else the float rules' result bit for bit (-0 below +0)."""
    gen = np.random.default_rng(11 + n_cols)
    x = _special_rows(gen, n_cols)
    block = max(256, n_cols)
    for permuted in (x, x[:, gen.permutation(n_cols)].copy()):
        out = np.full(len(x), 1.5, np.float32)
        propagating_extremum_rows[(len(x),)](permuted, out, n_cols, MAX=op == "max", BLOCK=block)
        padded = np.zeros((len(x), block), np.float32)  # `other` is 0 past n_cols
        padded[:, :n_cols] = permuted
        has_nan = np.isnan(padded).any(axis=1)
        np.testing.assert_array_equal(np.isnan(out), has_nan)
        expected = np.array([_float_rule_extremum(r, op == "max") for r in padded])
        np.testing.assert_array_equal(
            out[~has_nan].view(np.uint32), expected[~has_nan].view(np.uint32)
        )
    compiled = propagating_extremum_rows.warmup(
        "*fp32", "*fp32", "i32", grid=(1,), target="cpu", MAX=op == "max", BLOCK=block
    )
    assert "-8388608" in compiled.asm["llir"]  # -inf's bits: the NaN test of the integer fold
