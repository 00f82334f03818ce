"""cat and stack: each input copied into its slice of the result by the pointwise facility's
copy (convert.py), which writes through the slice's strides; no kernel of their own."""

from __future__ import annotations

from ..allocate import empty
from ..convert import to
from ..dtypes import Kind, computation_dtypes
from ..reduce.rows import normalized_dims
from ..registry import aten

__all__ = ["cat", "stack"]


@aten("cat.default", "cat.out")
def cat(tensors, dim=0, *, out=None):
    """The tensors joined along `dim` (1-dim empty tensors skipped, as torch does)."""
    tensors = [t for t in tensors if not (t.dim() == 1 and t.numel() == 0)] or list(tensors)
    (dim,) = normalized_dims(dim, tensors[0].dim())
    dtype = computation_dtypes(tensors, Kind.NO_OPMATH)[1] if len(tensors) > 1 else None
    dtype = dtype or tensors[0].dtype
    shape = list(tensors[0].shape)
    shape[dim] = sum(t.shape[dim] for t in tensors)
    if out is None:
        out = empty(shape, dtype, tensors[0].device)
    else:
        out.resize_(shape)
    offset = 0
    for t in tensors:
        size = t.shape[dim]
        if t.numel():
            to(t, out.dtype, out=out.narrow(dim, offset, size))
        offset += size
    return out


def stack(tensors, dim=0):
    """The tensors joined along a new dim."""
    (dim,) = normalized_dims(dim, tensors[0].dim() + 1)
    return cat([t.unsqueeze(dim) for t in tensors], dim)
