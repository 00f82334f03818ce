"""Float semantics of the NVIDIA lowering that the language tier found on the GPU, checked here
through ptxas without one:

- `tl.clamp(..., propagate_nan=ALL)` must give NaN for a NaN `x`: min.NaN / max.NaN, never the
  number-returning min / max (the attribute prints as its integer, which once hid `all`);
- float `%` is LLVM's frem, as Triton's: div.rn, cvt.rzi, one fused fma.rn, x where y is
  infinite. tests/language/exact_arithmetic.py's `gpu_float_rem` is the reference of exactly this
  sequence, so a change here must change it too;
- float -> int is PTX's saturating `cvt.rzi` even where LLVM could prove nothing wrong with a
  shortcut: `x.to(f32).to(int16)` of an int32 x was once folded into a truncation of x (LLVM
  may assume fptosi's result in range), so 505472381 became -2691 instead of 32767.
"""

import numpy as np
import pytest
from test_lowering import assembled_ptx, count
from test_toolchain import needs_ptxas

import naiad
import naiad.language as tl


@naiad.jit
def _clamp_kernel(x_ptr, lo_ptr, hi_ptr, z_ptr, N: tl.constexpr, NAN: tl.constexpr):
    offs = tl.arange(0, N)
    x, lo, hi = tl.load(x_ptr + offs), tl.load(lo_ptr + offs), tl.load(hi_ptr + offs)
    tl.store(z_ptr + offs, tl.clamp(x, lo, hi, propagate_nan=NAN))


@needs_ptxas
@pytest.mark.parametrize("dtype, suffix", [(np.float32, "f32"), (np.float64, "f64")])
def test_clamp_propagates_nan_when_asked(dtype, suffix, tmp_path):
    args = [np.ones(128, dtype) for _ in range(4)]
    for nan, want in ((tl.PropagateNan.ALL, 1), (tl.PropagateNan.NONE, 0)):
        for arch, ptx in assembled_ptx(
            _clamp_kernel, args, {"N": 128, "NAN": nan}, tmp_path
        ).items():
            if suffix == "f32":
                assert (count(r"\b(?:min|max)\.NaN\.f32", ptx) > 0) == bool(want), (arch, nan)
                assert (count(r"\b(?:min|max)\.f32", ptx) > 0) != bool(want), (arch, nan)
            else:
                # No min.NaN.f64 in PTX: LLVM expands llvm.maximum.f64 with a NaN select.
                assert (count(r"setp\.(?:nan|num)\.f64", ptx) > 0) == bool(want), (arch, nan)


@naiad.jit
def _rem_kernel(x_ptr, y_ptr, z_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(z_ptr + offs, tl.load(x_ptr + offs) % tl.load(y_ptr + offs))


@needs_ptxas
@pytest.mark.parametrize("dtype, suffix", [(np.float32, "f32"), (np.float64, "f64")])
def test_float_rem_is_the_fused_frem_expansion(dtype, suffix, tmp_path):
    args = [np.ones(128, dtype) for _ in range(3)]
    for arch, ptx in assembled_ptx(_rem_kernel, args, {"N": 128}, tmp_path).items():
        for instruction in ("div.rn", "cvt.rzi", "fma.rn", "testp.infinite"):
            assert count(rf"\b{instruction}(?:\.ftz)?\.{suffix}", ptx) > 0, (arch, instruction)
        assert count(rf"\bsub(?:\.rn)?\.{suffix}", ptx) == 0, arch


@naiad.jit
def _int_through_float_kernel(x_ptr, z_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(z_ptr + offs, tl.load(x_ptr + offs).to(tl.float32).to(tl.int16))


@needs_ptxas
def test_float_to_int_saturates_even_after_an_int_to_float(tmp_path):
    args = [np.ones(128, np.int32), np.ones(128, np.int16)]
    for arch, ptx in assembled_ptx(_int_through_float_kernel, args, {"N": 128}, tmp_path).items():
        assert count(r"cvt\.rn\.f32\.s32", ptx) > 0, arch
        assert count(r"cvt\.rzi\.s16\.f32", ptx) > 0, arch
