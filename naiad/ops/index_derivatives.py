"""Autograd formulas of the indexing and movement custom ops (scatter, scatter_add, index_add,
take_along_dim, flip, repeat, triu/tril, sort, topk), made of the custom ops and registered with
the others (derivatives.py). Each is ATen's derivative: a scatter's self keeps the gradient but
where it was overwritten, its source gathers it back; index_add's source selects it;
take_along_dim adds it up at its indices (gather's) and over the dims it broadcast; flip flips it
back, triu/tril keep its triangle; repeat sums its copies; sort's and topk's values scatter it to
the positions their indices name (their indices have none).
"""

from __future__ import annotations

import torch

from .derivatives import _formula, _reduce_to
from .indexing.select import broadcast_along

__all__ = []

N = torch.ops.naiad


def _zeros(x):
    return N.fill.Scalar(x, 0)


@_formula("scatter.src", "scatter.value")
def _scatter(grads, inputs, outputs):
    (g,), (_, dim, index, src) = grads, inputs
    dx = N.scatter.value(g, dim, index, 0)
    dsrc = N.gather(g, dim, index) if isinstance(src, torch.Tensor) else None
    return dx, None, None, dsrc


@_formula("scatter_add.default")
def _scatter_add(grads, inputs, outputs):
    (g,), (_, dim, index, _) = grads, inputs
    return g, None, None, N.gather(g, dim, index)


@_formula("index_add.default")
def _index_add(grads, inputs, outputs):
    (g,), (_, dim, index, source, alpha) = grads, inputs
    dsource = N.index_select(g, dim, index) if g.dim() else g
    dsource = dsource.expand(source.shape)
    return g, None, None, dsource if alpha == 1 else N.mul.Scalar(dsource, alpha), None


@_formula("take_along_dim.default")
def _take_along_dim(grads, inputs, outputs):
    """ATen composes take_along_dim of a gather, of x and the indices broadcast against each
    other but along `dim` (flattened where there is no dim): the gradient is added into zeros at
    the indices, then summed over the dims x was broadcast along."""
    (g,), (x, indices, dim) = grads, inputs
    if dim is None:
        flat = N.scatter_add(_zeros(x).reshape(-1), 0, indices.reshape(-1), g)
        return flat.reshape(x.shape), None, None
    source, wanted = broadcast_along(x.shape, indices.shape, dim % max(x.dim(), 1))
    dx = N.scatter_add(_zeros(x).expand(source), dim, indices.expand(wanted), g)
    return _reduce_to(dx, x), None, None


@_formula("flip.default")
def _flip(grads, inputs, outputs):
    return N.flip(grads[0], inputs[1]), None


@_formula("triu.default")
def _triu(grads, inputs, outputs):
    return N.triu(grads[0], inputs[1]), None


@_formula("tril.default")
def _tril(grads, inputs, outputs):
    return N.tril(grads[0], inputs[1]), None


@_formula("repeat.default")
def _repeat(grads, inputs, outputs):
    """The gradient seen as (the new leading repeats, then each dim's (repeats, size)) summed
    over every repeat axis."""
    (g,), (x, repeats) = grads, inputs
    lead = len(repeats) - x.dim()
    shape, dims = list(repeats[:lead]), list(range(lead))
    for r, size in zip(repeats[lead:], x.shape, strict=True):
        dims.append(len(shape))
        shape += [r, size]
    if not dims:
        return g, None
    return N.sum.dim_IntList(g.reshape(shape), dims, False).reshape(x.shape), None


def _to_positions(g, x, dim, indices):
    return N.scatter.src(_zeros(x), dim, indices, g) if x.dim() else g


@_formula("sort.default")
def _sort(grads, inputs, outputs):
    x, dim, _ = inputs
    return _to_positions(grads[0], x, dim, outputs[1]), None, None


@_formula("sort.stable")
def _sort_stable(grads, inputs, outputs):
    x, _, dim, _ = inputs
    return _to_positions(grads[0], x, dim, outputs[1]), None, None, None


@_formula("topk.default")
def _topk(grads, inputs, outputs):
    x, _, dim, _, _ = inputs
    return _to_positions(grads[0], x, dim, outputs[1]), None, None, None, None
