"""A reduction's operand seen as rows: (M kept positions) x (N reduced elements).

The reduced dims move last (a permutation, no data moved) and the kept and reduced groups each
fold into one dim; where a group's strides do not fold, the operand is copied once into that
order. Kernels then read element (m, n) at m * stride_m + n * stride_n, whatever the original
layout, and write one result per row.
"""

from __future__ import annotations

import math

import torch

__all__ = ["Rows", "as_rows", "normalized_dims"]


def normalized_dims(dim, ndim: int) -> list[int]:
    """`dim` (None, an int or a list; negative allowed; empty meaning all) as sorted dims."""
    if type(dim) in (list, tuple) and len(dim) == 1:  # ATen's dim lists hold one dim mostly
        dim = dim[0]
    if type(dim) is int and -ndim <= dim < ndim:  # the common case, without building sets
        return [dim + ndim if dim < 0 else dim]
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    result = sorted({d + ndim if d < 0 else d for d in dims} if ndim else set())
    for d in result:
        if not 0 <= d < max(ndim, 1):
            raise IndexError(f"Dimension out of range (got {d} for {ndim} dims)")
    return result


class Rows:
    """`view` is the operand as a 2-dim (M, N) tensor (a view where strides allow); `kept`
    is the result's shape without the reduced dims, `keepdim_shape` with them as 1."""

    __slots__ = ("M", "N", "keepdim_shape", "kept", "view")

    def __init__(self, view, kept, keepdim_shape):
        self.view = view
        self.M, self.N = view.shape
        self.kept = kept
        self.keepdim_shape = keepdim_shape

    def shape(self, keepdim: bool) -> list[int]:
        return self.keepdim_shape if keepdim else self.kept


# (shape, dims) -> (permutation or None, M, N, kept, keepdim_shape): a call's host work is
# mostly these list builds, which depend on the shape only. Forgotten past _GEOMETRIES_KEPT.
_GEOMETRIES: dict = {}
_GEOMETRIES_KEPT = 4096


def _geometry(shape, dims):
    kept_dims = [d for d in range(len(shape)) if d not in dims]
    kept = [shape[d] for d in kept_dims]
    keepdim_shape = [1 if d in dims else n for d, n in enumerate(shape)]
    order = (*kept_dims, *dims)
    permutation = None if order == tuple(range(len(shape))) else order
    return permutation, math.prod(kept), math.prod(shape[d] for d in dims), kept, keepdim_shape


def as_rows(x: torch.Tensor, dims: list[int]) -> Rows:
    """`x` as rows reducing `dims` (sorted, as normalized_dims gives them)."""
    key = (x.shape, *dims)
    found = _GEOMETRIES.get(key)
    if found is None:
        if len(_GEOMETRIES) >= _GEOMETRIES_KEPT:
            _GEOMETRIES.clear()
        found = _GEOMETRIES[key] = _geometry(x.shape, dims)
    permutation, m, n, kept, keepdim_shape = found
    if not x.dim():
        view = x.reshape(1, 1)
    elif permutation is None and x.dim() == 2 and x.shape[0] == m:
        view = x  # already (M, N): a reshape would only make another view object (µs each)
    elif permutation is None:
        view = x.reshape(m, n)
    else:
        view = x.permute(*permutation).reshape(m, n)
    return Rows(view, kept, keepdim_shape)
