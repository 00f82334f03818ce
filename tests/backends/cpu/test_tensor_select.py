"""`arith.select` on tensors by a scalar condition (codegen/lower_tensor.py): made after the Linalg
conversion, when canonicalization finds an `scf.if` whose branches yield values defined outside
it (CSE made the branch's constant the outer one). Generated kernel seed 102164 had this shape;
the CPU back end refused it and the kernel ran in the interpreter.

The kernel runs compiled (`NAIAD_BACKEND=cpu`, so a refusal would be an error) on both branches
and with random data, against NumPy; the Linalg text shows the select is on tensors, so the test
keeps exercising this lowering.
"""

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs


@naiad.jit
def zero_or_input(x_ptr, zero_ptr, out_ptr, f, BLOCK: tl.constexpr):
    """out = (f > 0 ? 0 : x) + 1; zero_ptr receives the zeros the branch shares with CSE."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(zero_ptr + offs, tl.full([BLOCK], 0, tl.int32))
    if f > 0.0:
        r = tl.full([BLOCK], 0, tl.int32)
    else:
        r = x
    tl.store(out_ptr + offs, r + 1)


def test_the_linalg_form_selects_tensors_by_a_scalar():
    x = np.zeros(64, np.int32)
    compiled = zero_or_input.warmup(x, x, x, 1.0, BLOCK=64, grid=(1,), target="cpu")
    selects = [line for line in compiled.asm["linalg"].splitlines() if "arith.select" in line]
    assert any(": tensor<64xi32> loc(" in line for line in selects), selects


@pytest.mark.parametrize("f", [1.5, -0.5, 0.0])
def test_select_on_tensors_runs_compiled(f):
    rng = np.random.default_rng(7)
    x = rng.integers(-1000, 1000, 64, dtype=np.int32)
    zero = np.full(64, 5, np.int32)
    out = np.full(64, -7, np.int32)
    with knobs.override(NAIAD_BACKEND="cpu"):
        zero_or_input[(1,)](x, zero, out, f, BLOCK=64)
    expected = (np.zeros_like(x) if f > 0 else x) + 1
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(zero, 0)
