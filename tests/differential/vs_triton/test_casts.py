"""Casts against Triton's interpreter: x.to(dst) for every pair of types (fp8 e4m3fn / e5m2 and
int1 included) with each rounding, bitcasts, tl.cast of Python scalars."""

import pytest

from naiad.language import dtype
from naiad.language.target import CUDA_HOPPER

from .gpu_model import gpu_convert, literal_type, scalar_constant
from .harness import (
    ALL,
    FP8,
    PYTESTMARK,
    WIDTH,
    Mismatches,
    N,
    both_dtype,
    compare,
    is_float,
    is_int,
    tensor_of,
    values_of,
)

pytestmark = PYTESTMARK


def cast_reason(src, dst, rounding):
    if "bf16" in (src, dst):
        return "bf16"
    if src in FP8 or dst in FP8:
        return "fp8"
    if rounding == "rtz":
        return "rtz"
    if is_float(src) and is_int(dst) and dst != "int1":
        return "fptoint"
    return None


def nvidia_refuses(src, dst, rounding) -> bool:
    """Float conversions NVIDIA does not lower: Naiad refuses them as its compiler does, while
    Triton's interpreter (which has no target) runs them."""
    if not (is_float(src) and is_float(dst)) or src == dst:
        return False
    if rounding is not None and WIDTH[src] <= WIDTH[dst]:
        return False  # refused by both front ends: a rounding on a widening conversion
    return not CUDA_HOPPER.fp_conversion_supported(dtype(src), dtype(dst), rounding or "rtne")


@pytest.mark.parametrize("src", ALL)
def test_cast(kernels, src):
    """x.to(dst, fp_downcast_rounding=r) for every pair, fp8 (e4m3fn, e5m2) and int1 included."""
    mism = Mismatches()
    x = values_of(src)
    xt = tensor_of(x, src)
    for dst in ALL:
        for rounding in (None, "rtne", "rtz"):
            t, n = both_dtype(kernels, "cast", dst, xt, N=N, ROUNDING=rounding)
            if nvidia_refuses(src, dst, rounding):
                assert n.error is not None and "not supported" in str(n.error), (src, dst, rounding)
                continue
            reason = cast_reason(src, dst, rounding)
            gpu = lambda slot, dtype, d=dst, r=rounding: gpu_convert(x, src, d, r or "rtne")
            # Triton's interpreter crashes in `_convert_float` (NumPy refuses its uint64 shifts,
            # or its all-ones constant) on these; Naiad gives them the documented one rounding.
            crashes = (
                (src == "fp64" and (dst in FP8 or (rounding == "rtz" and dst != "fp64")))
                or (dst == "fp64" and src in FP8)
                or (src in FP8 and dst in FP8)
            )
            legal = rounding is None or (
                is_float(src) and is_float(dst) and WIDTH[src] > WIDTH[dst]
            )
            results = [(dst, (N,))] if crashes and legal and src != dst else None
            compare(
                f"{src} -> {dst} ({rounding})", t, n, mism, gpu if reason else None, reason, results
            )
    mism.check()


def test_bitcast(kernels):
    mism = Mismatches()
    for src in ALL:
        xt = tensor_of(values_of(src), src)
        for dst in ALL:
            compare(f"bitcast {src} -> {dst}", *both_dtype(kernels, "bitcast", dst, xt, N=N), mism)
    mism.check()


def test_cast_python_scalar(kernels):
    """tl.cast(S, dst): S takes its literal type first (-0.0 is the null value +0.0)."""
    mism = Mismatches()
    for s in (0, -1, 300, 2**31, 2**63, -0.0, 1.5, -2.5, 1e50, 1e-50, True):
        for dst in ("int1", "int8", "uint8", "int32", "int64", "fp16", "fp32", "fp64"):
            t, n = both_dtype(kernels, "cast_scalar", dst, S=s)
            src = literal_type(s)
            reason = cast_reason(src, dst, None)
            gpu = lambda slot, dtype, d=dst: gpu_convert(scalar_constant(s, src), src, d)
            compare(f"cast({s!r}, {dst})", t, n, mism, gpu if reason else None, reason)
    mism.check()
