"""`if` on a one-element block (`tl.load(p + tl.arange(0, 1)) > 42`) branches on its element,
with a warning, as Triton's `if` does; a block of more elements stays an error, and so does a
one-element block as the condition of a `while`."""

import numpy as np
import pytest
from memory_helpers import kernel_error

import naiad
import naiad.language as tl
from naiad import knobs


@naiad.jit
def store_if_above(x_ptr, out_ptr, limit, EXPLICIT: tl.constexpr):
    condition = tl.load(x_ptr + tl.arange(0, 1)) > limit
    if EXPLICIT:
        condition = condition.item()
    if condition:
        tl.store(out_ptr, tl.load(x_ptr) * 2)
    else:
        tl.store(out_ptr, -tl.load(x_ptr))


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
def test_a_one_element_block_is_read_as_its_element_and_warned_about(backend):
    rng = np.random.default_rng(23)
    values = rng.integers(-100, 100, 8).astype(np.int32)
    limit = int(np.median(values))
    # The compiler's warning comes from the first launch's compile (the disk cache would skip
    # it); the interpreter warns at every launch.
    settings = knobs.override(NAIAD_BACKEND=backend, NAIAD_ALWAYS_COMPILE="1")
    warned = pytest.warns(UserWarning, match=r"condition of `if` is a block of shape \[1\]")
    with settings, warned:
        for value in values:
            out = np.full(1, 12345, np.int32)
            store_if_above[(1,)](np.array([value], np.int32), out, limit, EXPLICIT=False)
            assert out[0] == (value * 2 if value > limit else -value)
            explicit = np.full(1, 12345, np.int32)
            store_if_above[(1,)](np.array([value], np.int32), explicit, limit, EXPLICIT=True)
            assert explicit[0] == out[0]


@naiad.jit
def branches_on_two_elements(x_ptr):
    if tl.load(x_ptr + tl.arange(0, 2)) > 0:
        tl.store(x_ptr, 0)


@naiad.jit
def loops_on_one_element(x_ptr):
    while tl.load(x_ptr + tl.arange(0, 1)) > 0:
        tl.store(x_ptr, tl.load(x_ptr) - 1)


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
@pytest.mark.parametrize("kernel", [branches_on_two_elements, loops_on_one_element])
def test_other_blocks_are_no_condition(backend, kernel):
    with knobs.override(NAIAD_BACKEND=backend), kernel_error("shape"):
        kernel[(1,)](np.ones(2, np.int32))
