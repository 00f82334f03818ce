"""Which libdevice symbols flush fp32 subnormals to zero, as the GPU does under Triton.

Triton links libdevice with `__CUDA_FTZ` on (through nvvm-reflect), so much of its fp32 code reads
subnormal arguments as zeros of the same sign and writes subnormal results as such zeros. Measured
on an H200 with Triton 3.6, for every fp32 symbol: the symbols below flush both ways, and with the
flush the interpreter matches them bit for bit. Other fp32 functions treat subnormals in ways of
their own (logf reads them exactly, expf writes subnormal results, cbrtf answers NaN, logbf
-150); for those the interpreter keeps IEEE subnormals and computes the accurate value. fp64 code
never flushes.
"""

from __future__ import annotations

import numpy as np

from .rounding import MODES

_TINY = np.float32(np.finfo(np.float32).tiny)

FLUSHING = frozenset(
    [f"__nv_f{op}_{mode}" for op in ("add", "sub", "mul", "div", "rcp", "sqrt") for mode in MODES]
    + [f"__nv_fmaf_{mode}" for mode in MODES]
    + [f"__nv_float2{dst}_{mode}" for dst in ("int", "uint", "ll", "ull") for mode in MODES]
    + [f"__nv_double2float_{mode}" for mode in MODES]
    + [
        "__nv_fmaf",
        "__nv_frsqrt_rn",
        "__nv_fast_fdividef",
        "__nv_llrintf",
        "__nv_llroundf",
        "__nv_floorf",
        "__nv_ceilf",
        "__nv_ilogbf",
        "__nv_saturatef",
    ]
)


def flush(x: np.ndarray) -> np.ndarray:
    """fp32 subnormals of x as zeros of the same sign; other dtypes unchanged."""
    x = np.asarray(x)
    if x.dtype != np.float32:
        return x
    return np.where(np.abs(x) < _TINY, np.copysign(np.float32(0), x), x).astype(np.float32)
