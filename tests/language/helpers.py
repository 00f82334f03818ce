"""What the language's arithmetic tests share beyond their dtypes, inputs and references
(dtype_tables.py, inputs.py, exact_arithmetic.py, promotion.py): the back end a test runs on and
the tolerance row it is checked with, and the kernels several test files launch."""

from __future__ import annotations

import contextlib
import os

import numpy as np
import pytest
from dtype_tables import tl_dtype
from inputs import poisoned

import naiad
import naiad.language as tl
from naiad.errors import CompilationError
from naiad.testing import check

# The back end a test runs on, as conftest.py's `backend` fixture names it, and as the tolerance
# table does: a bound that is exact in the interpreter may be k ulp on the GPU (fp32 `/`).
_TABLE_NAME = {"interpreter": "interpreter", "cpu": "cpu", "tiered": "cpu", "cuda": "gpu"}
_running_on = {"backend": "interpreter"}


def set_backend(name: str) -> None:
    """Called by the `backend` fixture before each test, so that the checks use its bounds."""
    _running_on["backend"] = name


def running_on() -> str:
    """The fixture's name of the back end this test runs on: "interpreter", "cpu", "tiered" or
    "cuda"."""
    return _running_on["backend"]


def cpu_rules() -> bool:
    """Whether this test's launches follow the CPU's language rules: compiled for it, or tiered
    (a first launch interpreted under those rules while it compiles)."""
    return running_on() in ("cpu", "tiered")


def table_backend() -> str:
    """The tolerance table's name of the back end this test runs on ("gpu" for "cuda")."""
    return _TABLE_NAME[running_on()]


def assert_exact(actual, expected, op: str = "cast"):
    """Bit-identical in `expected`'s dtype (any NaN equals any NaN), or within the bound that
    naiad.testing's table gives `op` on the back end this test runs on."""
    expected = np.asarray(expected)
    actual = np.asarray(actual)
    if expected.dtype == bool:
        assert actual.shape == expected.shape, (actual.shape, expected.shape)
        # Compare stored bytes, so that an unwritten 0xAB byte never reads as True.
        bad = actual.view(np.uint8) != expected.astype(np.uint8)
        assert not bad.any(), (
            f"{int(bad.sum())} of {bad.size} differ; first at "
            f"{np.argwhere(bad)[0]}: {actual[bad][:4]} vs {expected[bad][:4]}"
        )
        return
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    check(op, actual, expected, table_backend(), expected.dtype)


@contextlib.contextmanager
def kernel_error(match: str, kind=CompilationError):
    """Expect a kernel error of `kind` matching `match`, located at a kernel line of these tests
    (never inside Naiad)."""
    with pytest.raises(kind, match=match) as info:
        yield info
    error = info.value
    if isinstance(error, CompilationError) and error.location is not None:
        here = os.path.dirname(os.path.abspath(__file__))
        assert os.path.dirname(os.path.abspath(error.location.filename)) == here, str(error)


# -------------------------------------------------------------------------------------------------
# kernels shared by the test files
# -------------------------------------------------------------------------------------------------
@naiad.jit
def apply_binary(x, y, OP: tl.constexpr):
    """`x OP y` for an operator spelled as in Python source."""
    if OP == "+":
        z = x + y
    elif OP == "-":
        z = x - y
    elif OP == "*":
        z = x * y
    elif OP == "/":
        z = x / y
    elif OP == "//":
        z = x // y
    elif OP == "%":
        z = x % y
    elif OP == "<":
        z = x < y
    elif OP == "<=":
        z = x <= y
    elif OP == ">":
        z = x > y
    elif OP == ">=":
        z = x >= y
    elif OP == "==":
        z = x == y
    elif OP == "!=":
        z = x != y
    elif OP == "&":
        z = x & y
    elif OP == "|":
        z = x | y
    elif OP == "^":
        z = x ^ y
    elif OP == "<<":
        z = x << y
    elif OP == ">>":
        z = x >> y
    else:
        tl.static_assert(False, "unknown operator")
    return z


@naiad.jit
def binary_kernel(x_ptr, y_ptr, z_ptr, N: tl.constexpr, OP: tl.constexpr, RESULT: tl.constexpr):
    """z = x OP y over N elements, whose dtype must be RESULT."""
    offs = tl.arange(0, N)
    z = apply_binary(tl.load(x_ptr + offs), tl.load(y_ptr + offs), OP)
    tl.static_assert(z.dtype == RESULT, "unexpected result dtype")
    tl.store(z_ptr + offs, z)


def run_binary(op: str, x: np.ndarray, y: np.ndarray, result: str) -> np.ndarray:
    """Launch `binary_kernel` on 1-D arrays and return z, an array of the `result` dtype."""
    z = poisoned(x.shape, result)
    binary_kernel[(1,)](x, y, z, N=x.shape[0], OP=op, RESULT=tl_dtype(result))
    return z
