"""torch's dtypes as the language's, and torch's type promotion, memoized.

Every op of the library decides two dtypes before it launches: the dtype it computes in and the
dtype it returns. torch's own rule (`torch._prims_common.elementwise_dtypes`) is the spec, but it
costs half a millisecond a call; the answer depends only on the kinds of the operands (a tensor's
dtype and whether it is 0-dim, or a Python scalar's type), so it is computed once per kind.
"""

from __future__ import annotations

import torch
from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND as Kind
from torch._prims_common import elementwise_dtypes

from .. import language as tl

__all__ = ["TL_DTYPE", "Kind", "Unsupported", "computation_dtypes", "is_float", "tl_dtype"]


class Unsupported(Exception):
    """Raised by an op for arguments it does not handle (complex numbers, an unusual layout): a
    registered op then hands the call to torch's own kernel."""


TL_DTYPE = {
    torch.bool: tl.int1,
    torch.int8: tl.int8,
    torch.uint8: tl.uint8,
    torch.int16: tl.int16,
    torch.int32: tl.int32,
    torch.int64: tl.int64,
    torch.float16: tl.float16,
    torch.bfloat16: tl.bfloat16,
    torch.float32: tl.float32,
    torch.float64: tl.float64,
}


def tl_dtype(dtype: torch.dtype):
    """The language's dtype for a torch dtype; Unsupported for those kernels cannot hold."""
    found = TL_DTYPE.get(dtype)
    if found is None:
        raise Unsupported(f"naiad.ops has no kernels for {dtype}")
    return found


def is_float(dtype: torch.dtype) -> bool:
    return dtype.is_floating_point


def _kind(value):
    if isinstance(value, torch.Tensor):
        return (value.dtype, value.dim() == 0)
    return type(value)


def _stand_in(kind):
    """A value of `kind` for torch's rule to look at (only kinds matter to it)."""
    if isinstance(kind, tuple):
        dtype, zero_dim = kind
        return torch.empty(() if zero_dim else (1,), dtype=dtype, device="meta")
    return {bool: True, int: 1, float: 1.0, complex: 1j}[kind]


_MEMO: dict = {}


def computation_dtypes(values, kind: Kind) -> tuple[torch.dtype, torch.dtype]:
    """(compute dtype, result dtype) of an elementwise op on `values` under torch's promotion
    `kind`: fp16 and bf16 compute in fp32, as ATen's kernels do."""
    key = (kind, *map(_kind, values))
    found = _MEMO.get(key)
    if found is None:
        if any(k is complex or (isinstance(k, tuple) and k[0].is_complex) for k in key[1:]):
            raise Unsupported("naiad.ops has no complex kernels")
        found = _MEMO[key] = elementwise_dtypes(*map(_stand_in, key[1:]), type_promotion_kind=kind)
    return found
