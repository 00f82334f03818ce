"""`tl.where` with a condition that is not boolean reads it as `condition != 0` and warns, as
Triton does: an integer mask where a comparison was meant is a common slip."""

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs


@naiad.jit
def select_by_integers(c_ptr, x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    condition = tl.load(c_ptr + offs)
    tl.store(out_ptr + offs, tl.where(condition, tl.load(x_ptr + offs), tl.load(y_ptr + offs)))


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
def test_an_integer_condition_is_compared_with_zero_and_warned_about(backend):
    rng = np.random.default_rng(19)
    condition = rng.integers(0, 3, 64).astype(np.uint32)  # zeros and non-zeros
    x, y = (rng.standard_normal(64).astype(np.float32) for _ in range(2))
    out = np.full(64, np.nan, np.float32)
    # The warning comes from the compile: the disk cache would skip it on a later run.
    settings = knobs.override(NAIAD_BACKEND=backend, NAIAD_ALWAYS_COMPILE="1")
    with settings, pytest.warns(UserWarning, match="boolean condition; a uint32 one is read as"):
        select_by_integers[(1,)](condition, x, y, out, BLOCK=64)
    np.testing.assert_array_equal(out, np.where(condition != 0, x, y))
