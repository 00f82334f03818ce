"""Scans write their loop's carried tensor in place on the CPU.

A scan lowers to a loop over the scanned axis that inserts one slice of the result an
iteration into a carried tensor (middle/linalg/emit_tensor.scan). The CPU back end copied the
whole carried tensor twice an iteration (into a fresh buffer for the insert, back at the
yield): a cumsum over 1024 lanes moved 8 KB per element. The insert now writes the loop's
buffer itself (codegen/in_place.inserts_in_place). Each kernel runs in the interpreter and
compiled on the same random integers, against NumPy: sums and products, both axes, reversed,
and a two-value combine (a running maximum with its position).
"""

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad.testing.differential import run_differential

EXECUTORS = ("interpreter", "cpu")


@naiad.jit
def scans(x_ptr, sums_ptr, products_ptr, backward_ptr, R: tl.constexpr, C: tl.constexpr,
          AXIS: tl.constexpr):  # fmt: skip
    rows, cols = tl.arange(0, R)[:, None], tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + rows * C + cols)
    tl.store(sums_ptr + rows * C + cols, tl.cumsum(x, AXIS))
    tl.store(products_ptr + rows * C + cols, tl.cumprod(x % 3 + 1, AXIS))
    tl.store(backward_ptr + rows * C + cols, tl.cumsum(x, AXIS, reverse=True))


@naiad.jit
def _larger(v1, i1, v2, i2):
    take = v2 > v1
    return tl.where(take, v2, v1), tl.where(take, i2, i1)


@naiad.jit
def running_maximum(x_ptr, values_ptr, where_ptr, C: tl.constexpr):
    cols = tl.arange(0, C)
    x = tl.load(x_ptr + cols)
    values, where = tl.associative_scan((x, cols), 0, _larger)
    tl.store(values_ptr + cols, values)
    tl.store(where_ptr + cols, where)


@pytest.mark.parametrize("axis", [0, 1])
def test_sums_products_and_reversed_scans_along_either_axis(axis):
    r, c = 4, 256

    def make_args(rng):
        return {
            "x_ptr": rng.integers(-50, 50, (r * c,), dtype=np.int32),
            "sums_ptr": np.empty(r * c, np.int32),
            "products_ptr": np.empty(r * c, np.int32),
            "backward_ptr": np.empty(r * c, np.int32),
            "R": r, "C": c, "AXIS": axis,
        }  # fmt: skip

    outputs = ("sums_ptr", "products_ptr", "backward_ptr")
    got = run_differential(scans, make_args, (1,), EXECUTORS, dict.fromkeys(outputs, "add"))
    x = got["x_ptr"].reshape(r, c)
    np.testing.assert_array_equal(got["sums_ptr"].reshape(r, c), np.cumsum(x, axis))
    remainders = np.fmod(x, 3) + 1  # the sign of x, as C and Triton
    products = np.cumprod(remainders.astype(np.int64), axis).astype(np.int32)  # wraps as i32
    np.testing.assert_array_equal(got["products_ptr"].reshape(r, c), products)
    backward = np.flip(np.cumsum(np.flip(x, axis), axis), axis)
    np.testing.assert_array_equal(got["backward_ptr"].reshape(r, c), backward)


def test_a_two_value_scan():
    c = 1024

    def make_args(rng):
        return {
            "x_ptr": rng.integers(-1000, 1000, (c,), dtype=np.int32),
            "values_ptr": np.empty(c, np.int32),
            "where_ptr": np.empty(c, np.int32),
            "C": c,
        }

    outputs = {"values_ptr": "add", "where_ptr": "add"}
    got = run_differential(running_maximum, make_args, (1,), EXECUTORS, outputs)
    x = got["x_ptr"]
    np.testing.assert_array_equal(got["values_ptr"], np.maximum.accumulate(x))
    first = [int(np.argmax(x[: k + 1])) for k in range(c)]  # strictly larger: the first wins
    np.testing.assert_array_equal(got["where_ptr"], first)


def test_the_scan_loop_copies_no_tile():
    """The compiled cumsum of a 1 x 1024 tile calls no memcpy: nothing copies the carried
    tensor (two 4 KB copies an element before)."""
    import torch

    x, out = torch.randn(1024), torch.empty(1024)
    compiled = _cumsum_tile.warmup(x, out, C=1024, grid=(1,), target="cpu")
    assert "llvm.memcpy" not in compiled.asm["llir"]


@naiad.jit
def _cumsum_tile(x_ptr, out_ptr, C: tl.constexpr):
    cols = tl.arange(0, C)[None, :]
    tl.store(out_ptr + cols, tl.cumsum(tl.load(x_ptr + cols), 1))
