"""Reductions of lines shorter than two vectors on the CPU (codegen/lower_reduce.py,
`_Fold.neighbours`): one vector whose neighbours combine level by level, the interpreter's order.

A combine whose result depends on the order is where it shows: argmax and argmin meeting a NaN
(every comparison with NaN is false, so the combine keeps its right operand when the left is
NaN, and the NaN when the right is). Rows of seeded random values, NaNs at random places in
most of them, are reduced compiled for the CPU and checked against that tree of neighbours
computed in Python, and against the interpreter's run; rows without NaN against NumPy's
argmax/argmin and max, and sums against float64.
"""

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs

ROWS = 16


@naiad.jit
def short_rows(x_ptr, index_ptr, value_ptr, BLOCK: tl.constexpr, OP: tl.constexpr):
    """Each of the ROWS rows of one [ROWS, BLOCK] tile reduced along its last axis."""
    rows = tl.arange(0, 16)
    x = tl.load(x_ptr + rows[:, None] * BLOCK + tl.arange(0, BLOCK)[None, :])
    if OP == "argmax":
        value, index = tl.max(x, axis=1, return_indices=True)
    elif OP == "argmax_fast":
        value, index = tl.max(x, axis=1, return_indices=True, return_indices_tie_break_left=False)
    elif OP == "argmin":
        value, index = tl.min(x, axis=1, return_indices=True)
    else:
        value, index = tl.min(x, axis=1, return_indices=True, return_indices_tie_break_left=False)
    tl.store(index_ptr + rows, index)
    tl.store(value_ptr + rows, value)


@naiad.jit
def short_sums(x_ptr, out_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    tl.store(out_ptr + row, tl.sum(tl.load(x_ptr + row * BLOCK + tl.arange(0, BLOCK)), axis=0))


def _combine(op: str, left: tuple, right: tuple) -> tuple:
    """The language's argmax/argmin combine on (value, index) pairs, NaN compares false."""
    (v1, i1), (v2, i2) = left, right
    wins = v1 > v2 if op.startswith("argmax") else v1 < v2
    if not op.endswith("_fast"):
        wins = wins or (v1 == v2 and i1 < i2)
    return left if wins else right


def _neighbours(op: str, row) -> tuple:
    items = [(v, i) for i, v in enumerate(row)]
    while len(items) > 1:
        items = [_combine(op, items[j], items[j + 1]) for j in range(0, len(items), 2)]
    return items[0]


def _run(x, op, backend):
    index = np.full(ROWS, -1, np.int32)
    value = np.full(ROWS, 7.0, x.dtype)
    with knobs.override(NAIAD_BACKEND=backend):
        short_rows[(1,)](x, index, value, BLOCK=x.shape[1], OP=op)
    return index, value


@pytest.mark.parametrize("op", ["argmax", "argmax_fast", "argmin", "argmin_fast"])
@pytest.mark.parametrize("block", [2, 4, 8, 16])
def test_arg_extrema_with_nans_take_the_interpreters_order(op, block):
    gen = np.random.default_rng(block * 10 + len(op))
    x = gen.standard_normal((ROWS, block)).astype(np.float32)
    x[:, block // 2 :][gen.random((ROWS, block - block // 2)) < 0.2] = 1.5  # ties
    nans = gen.random((ROWS, block)) < 0.3
    nans[: ROWS // 4] = False
    x[nans] = np.nan
    index, value = _run(x, op, "cpu")
    expected = [_neighbours(op, row.tolist()) for row in x]
    np.testing.assert_array_equal(index, [i for _, i in expected])
    np.testing.assert_array_equal(value, np.array([v for v, _ in expected], np.float32))
    interpreted, _ = _run(x, op, "interpreter")
    np.testing.assert_array_equal(index, interpreted)
    plain = x[: ROWS // 4]
    numpy_arg = np.argmax if op.startswith("argmax") else np.argmin
    if not op.endswith("_fast"):
        np.testing.assert_array_equal(index[: ROWS // 4], numpy_arg(plain, axis=1))
    chosen = plain[np.arange(ROWS // 4), index[: ROWS // 4]]
    extremum = np.max if op.startswith("argmax") else np.min
    np.testing.assert_array_equal(chosen, extremum(plain, axis=1))


def test_argmax_over_a_nan_takes_the_neighbours_tree():
    """Triton's test_argmax_argmin_with_nan: a fold from the left gave the -inf's index."""
    x = np.full((ROWS, 4), -np.inf, np.float32)
    x[:, :3] = [3.0, 5.0, np.nan]
    index, value = _run(x, "argmax", "cpu")
    assert np.all(index == 1) and np.all(value == 5.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("block", [2, 8, 16])
def test_short_sums_match_float64(dtype, block):
    gen = np.random.default_rng(block)
    x = (gen.standard_normal((5, block)) * 100).astype(dtype)
    out = np.zeros(5, dtype)
    with knobs.override(NAIAD_BACKEND="cpu"):
        short_sums[(5,)](x, out, BLOCK=block)
    exact = x.astype(np.float64).sum(axis=1)
    if np.dtype(dtype).kind == "i":
        np.testing.assert_array_equal(out, exact.astype(dtype))
        return
    scale = np.abs(x.astype(np.float64)).sum(axis=1)
    assert np.all(np.abs(out - exact) <= 4 * np.finfo(dtype).eps * scale)
