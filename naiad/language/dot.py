"""Matrix multiplication: `dot` (`dot_scaled`, which upcasts to it, is block_scaled.py's)."""

from __future__ import annotations

from . import dtypes as t
from .core import builtin


@builtin
def dot(
    input,
    other,
    acc=None,
    input_precision=None,
    allow_tf32=None,
    max_num_imprecise_acc=None,
    out_dtype=t.float32,
    _semantic=None,
):
    """The matrix product of two 2-D (or batched 3-D) blocks, plus `acc` when given.

    int8 operands accumulate in int32, fp16 in `out_dtype` (fp32 or fp16), bf16 and fp32 in fp32.
    fp32 operands use `input_precision` ("tf32" by default on NVIDIA, "tf32x3", "ieee", ...).
    """
    return _semantic.dot(
        input, other, acc, input_precision, allow_tf32, max_num_imprecise_acc, out_dtype
    )
