"""A reduction's operand seen as rows: (M kept positions) x (N reduced elements).

The reduced dims move last (a permutation, no data moved) and the kept and reduced groups each
fold into one dim; where a group's strides do not fold, the operand is copied once into that
order. Kernels then read element (m, n) at m * stride_m + n * stride_n, whatever the original
layout, and write one result per row.
"""

from __future__ import annotations

import itertools
import math

import torch

__all__ = ["AS_IT_LIES", "Rows", "as_rows", "copied", "folded_stride", "in_dim_order",
           "normalized_dims"]  # fmt: skip

# Rows.copy_order of rows read from the operand as it lies (no copy).
AS_IT_LIES = "as it lies"


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
    """The operand as (M, N) rows: element (m, n) lies at `data` + m * s_m + n * s_n. `data`
    is the operand itself where its kept dims and its reduced dims each fold into one stride
    (no view made: a reshape costs a call microseconds of host time), else a copy in that
    order. `view` is the (M, N) tensor itself, made on first use. `kept` is the result's shape
    without the reduced dims, `keepdim_shape` with them as 1. `copy_order`: where `data` is that
    copy, the permutation it was made through (`copied`'s, None for the identity), so that a
    plan of the kind can make it again; else the marker `AS_IT_LIES`."""

    __slots__ = ("M", "N", "_view", "copy_order", "data", "keepdim_shape", "kept", "s_m", "s_n")

    def __init__(self, data, m, n, s_m, s_n, kept, keepdim_shape, view=None, copy_order=None):
        self.data = data
        self.M, self.N = m, n
        self.s_m, self.s_n = s_m, s_n
        self.kept = kept
        self.keepdim_shape = keepdim_shape
        self._view = view
        self.copy_order = AS_IT_LIES if view is None else copy_order

    @classmethod
    def contiguous(cls, data, m: int, n: int) -> Rows:
        """m rows of n elements lying one after another in `data` (a row split in parts, a
        buffer of partials), with no result shape of their own."""
        return cls(data, m, n, n, 1, None, None)

    def in_parts(self, parts: int) -> Rows:
        """These rows, lying one after another, read as M * parts rows of their parts (the same
        memory): the first step of a split row (split_rows.split_parts)."""
        return Rows.contiguous(self.data, self.M * parts, self.N // parts)

    @property
    def view(self):
        """The rows as an (M, N) tensor (strides s_m, s_n)."""
        if self._view is None:
            self._view = self.data.as_strided((self.M, self.N), (self.s_m, self.s_n))
        return self._view

    def shape(self, keepdim: bool) -> list[int]:
        return self.keepdim_shape if keepdim else self.kept


# (shape, strides, dims) -> (permutation or None, M, N, kept, keepdim_shape, the folded
# strides (s_m, s_n) or None): a call's host work is mostly these list builds, which depend on
# the layout only. Forgotten past _GEOMETRIES_KEPT.
_GEOMETRIES: dict = {}
_GEOMETRIES_KEPT = 4096


def folded_stride(shape, strides, dims) -> int | None:
    """The one stride that walks `dims` (in that order) as a single flat dim, or None where
    their strides do not fold. Dims of size 1 take no part."""
    walked = [(shape[d], strides[d]) for d in dims if shape[d] != 1]
    for (_, outer), (size, inner) in itertools.pairwise(walked):
        if outer != size * inner:
            return None
    return walked[-1][1] if walked else 1


def _geometry(shape, strides, dims):
    kept_dims = [d for d in range(len(shape)) if d not in dims]
    kept = [shape[d] for d in kept_dims]
    keepdim_shape = [1 if d in dims else n for d, n in enumerate(shape)]
    order = (*kept_dims, *dims)
    permutation = None if order == tuple(range(len(shape))) else order
    m, n = math.prod(kept), math.prod(shape[d] for d in dims)
    s_m, s_n = folded_stride(shape, strides, kept_dims), folded_stride(shape, strides, dims)
    folded = None if s_m is None or s_n is None or m * n == 0 else (s_m, s_n)
    return permutation, m, n, kept, keepdim_shape, folded


def as_rows(x: torch.Tensor, dims: list[int]) -> Rows:
    """`x` as rows reducing `dims` (sorted, as normalized_dims gives them)."""
    key = (x.shape, x.stride(), *dims)
    found = _GEOMETRIES.get(key)
    if found is None:
        if len(_GEOMETRIES) >= _GEOMETRIES_KEPT:
            _GEOMETRIES.clear()
        found = _GEOMETRIES[key] = _geometry(x.shape, x.stride(), dims)
    permutation, m, n, kept, keepdim_shape, folded = found
    if folded is not None:
        return Rows(x, m, n, *folded, kept, keepdim_shape)
    view = copied(x, permutation, m, n)
    return Rows(view, m, n, *view.stride(), kept, keepdim_shape, view, permutation)


def copied(x: torch.Tensor, permutation, m: int, n: int) -> torch.Tensor:
    """`x` as (m, n) rows after `permutation` (None: none), which torch copies where the dims'
    strides do not fold (as_rows takes this path only then; torch decides it by the shape and
    strides alone, so one kind of call copies at every call)."""
    if not x.dim():
        return x.reshape(1, 1)
    if permutation is None:
        return x.reshape(m, n)
    return x.permute(*permutation).reshape(m, n)


def in_dim_order(last: torch.Tensor, d: int, contiguous: bool = True) -> torch.Tensor:
    """A result computed with dim `d` moved last (a row per position of the other dims), back
    in its operand's dim order; contiguous, as torch's results of softmax, scans and sorts are
    whichever the dim (a caller may view them), unless the caller only copies it on."""
    if d == last.dim() - 1:
        return last
    moved = last.movedim(-1, d)
    return moved.contiguous() if contiguous else moved
