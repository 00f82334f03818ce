"""Shared helpers of the memory, shape, reduction, sort, dot and random tests of the interpreter.

Inputs are random and never zero (a zero hides a lost sign, a skipped lane or a missing add);
outputs are poisoned before a launch (NaN for floats, 0xAB bytes otherwise) so that a lane the
kernel forgot to write cannot pass for a right answer.
"""

from __future__ import annotations

import contextlib
import os

import ml_dtypes
import numpy as np
import pytest

from naiad.errors import CompilationError
from naiad.testing import check

BF16 = np.dtype(ml_dtypes.bfloat16)

# Triton's dtype names -> NumPy dtypes of the arrays passed to kernels.
NP_DTYPES = {
    "int1": np.dtype(bool),
    "int8": np.dtype(np.int8),
    "int16": np.dtype(np.int16),
    "int32": np.dtype(np.int32),
    "int64": np.dtype(np.int64),
    "uint8": np.dtype(np.uint8),
    "uint16": np.dtype(np.uint16),
    "uint32": np.dtype(np.uint32),
    "uint64": np.dtype(np.uint64),
    "float16": np.dtype(np.float16),
    "bfloat16": BF16,
    "float32": np.dtype(np.float32),
    "float64": np.dtype(np.float64),
}
INT_DTYPES = ["int8", "int16", "int32", "int64"]
UINT_DTYPES = ["uint8", "uint16", "uint32", "uint64"]
FLOAT_DTYPES = ["float16", "bfloat16", "float32", "float64"]
ALL_DTYPES = INT_DTYPES + UINT_DTYPES + FLOAT_DTYPES


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def random_array(shape, dtype, gen: np.random.Generator, low=None, high=None) -> np.ndarray:
    """Random values of `dtype` (a NumPy dtype or a Triton name), never zero.

    Floats are +-[0.5, 2) unless `low`/`high` are given; integers span [low, high] (a small range
    by default, so sums stay representable) with zeros replaced by 1.
    """
    dtype = np.dtype(NP_DTYPES.get(dtype, dtype)) if isinstance(dtype, str) else np.dtype(dtype)
    if dtype == np.bool_:
        return gen.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo = max(info.min, -100) if low is None else low
        hi = min(info.max, 100) if high is None else high
        values = gen.integers(
            lo, hi, size=shape, endpoint=True, dtype=np.int64 if dtype != np.uint64 else np.uint64
        )
        values = np.where(values == 0, 1, values)
        return values.astype(dtype)
    if low is None and high is None:
        values = gen.uniform(0.5, 2.0, shape) * gen.choice([-1.0, 1.0], shape)
    else:
        values = gen.uniform(low, high, shape)
        values = np.where(values == 0, 0.5, values)
    return values.astype(dtype)


def poisoned(shape, dtype) -> np.ndarray:
    """An output array of `dtype` whose every element is poison (NaN, or bytes 0xAB)."""
    dtype = np.dtype(NP_DTYPES.get(dtype, dtype)) if isinstance(dtype, str) else np.dtype(dtype)
    if dtype.kind == "f" or dtype == BF16:
        return np.full(shape, np.nan, dtype)
    out = np.empty(shape, dtype)
    out.view(np.uint8)[...] = 0xAB
    return out


def assert_exact(actual, expected, dtype=None):
    """Bit-identical (any NaN equals any NaN) in `dtype` (default: `expected`'s dtype)."""
    expected = np.asarray(expected)
    dtype = expected.dtype if dtype is None else dtype
    if np.dtype(dtype) == np.bool_:
        # Compare the stored bytes, so that an unwritten 0xAB byte never reads as True.
        actual = np.asarray(actual)
        assert actual.shape == expected.shape, (actual.shape, expected.shape)
        bad = actual.view(np.uint8) != expected.astype(np.uint8)
        assert not bad.any(), (
            f"{int(bad.sum())} of {bad.size} booleans differ: {actual} vs {expected}"
        )
        return
    check("load", actual, expected, "interpreter", dtype)


@contextlib.contextmanager
def kernel_error(match: str, kind=CompilationError):
    """Expect a kernel error of `kind` whose message matches `match`, located in this test file."""
    with pytest.raises(kind, match=match) as info:
        yield info
    error = info.value
    if isinstance(error, CompilationError) and error.location is not None:
        # Errors point at the user's own kernel line, never into Naiad.
        assert os.path.basename(error.location.filename).startswith("test_"), str(error)


ONLY_THE_INTERPRETER_CHECKS = (
    "only the interpreter checks tl.gather's indices (out of range is undefined compiled, as on "
    "the GPU)"
)
"""Why a test of an out-of-range error is `interpreter_only` (conftest.py). Out-of-bounds
memory accesses are checked on every back end in debug mode (`debug=True`)."""
