"""`tl.abs` of fp8 blocks compiled for the GPU: the values travel as their bits, and the
absolute value clears the sign bit of each (no float intrinsic takes 8-bit floats); ptxas
assembles it. Values: the CPU against NumPy here (its own lowering)."""

import ml_dtypes
import numpy as np
import pytest
from test_toolchain import assemble, needs_ptxas

import naiad
import naiad.language as tl

FP8 = [ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2]


@naiad.jit
def _abs(x, z, SIZE: tl.constexpr):
    offsets = tl.arange(0, SIZE)
    tl.store(z + offsets, tl.abs(tl.load(x + offsets)))


@needs_ptxas
@pytest.mark.parametrize("dtype", FP8)
def test_fp8_abs_clears_the_sign_bits(dtype, tmp_path):
    x = np.zeros(256, dtype)
    compiled = _abs.warmup(x, x, 256, grid=(1,), target="cuda:sm_90a")
    ptx = compiled.asm["ptx"]
    assert "abs." not in ptx and ("32639" in ptx or "127" in ptx)  # 0x7f7f, two a register
    assemble(ptx, "sm_90a", tmp_path)


@pytest.mark.parametrize("dtype", FP8)
def test_fp8_abs_values(dtype):
    bits = np.random.default_rng(11).integers(0, 256, 256, dtype=np.uint8)
    x = bits.view(dtype)
    z = np.zeros(256, dtype)
    _abs[(1,)](x, z, 256)
    np.testing.assert_array_equal(z.view(np.uint8), bits & 0x7F)
