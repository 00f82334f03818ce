"""Each exported op's entry point (graph_breaks.py says the kinds): which custom-op call it makes
while compiling.

An op of the table (registry.py) calls its `torch.ops.naiad` packet with its own arguments
(mirrors.py: same schema as ATen's). The others are written here as the ATen-shaped ops they
are made of: softmax is `_softmax` (after the cast `dtype=` asks for), layer_norm
`native_layer_norm`'s first result, rms_norm `_fused_rms_norm`'s, group_norm
`native_group_norm`'s, nll_loss `nll_loss_forward`'s, `to` is `_to_copy`, max and min along a
dim `max.dim`/`min.dim`, stack a `cat` of unsqueezed views, argsort `sort`'s indices, isfinite
neither NaN nor infinite; the attention ops call theirs (attention_ops.py).
"""

from __future__ import annotations

import functools

import torch

from . import (  # noqa: F401  (they define and register ops)
    arith_derivatives,
    attention_ops,
    index_derivatives,
    row_derivatives,
    statistic_derivatives,
)
from .attention import sdpa
from .derivatives import UNDIFFERENTIATED, register
from .graph_breaks import EAGER, EagerTwin, compiled_as, run_eagerly_under_compile, table_call
from .mirrors import define_all
from .recorded_in_place import recorded_in_place
from .registry import every_function

__all__ = ["install"]

N = torch.ops.naiad
_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _softmax(input, dim, dtype=None):
    source = input if dtype is None else N._to_copy(input, dtype=dtype)
    return N._softmax(source, dim, False)


def _log_softmax(input, dim, dtype=None):
    source = input if dtype is None else N._to_copy(input, dtype=dtype)
    return N._log_softmax(source, dim, False)


def _layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    return N.native_layer_norm(input, shape, weight, bias, eps)[0]


def _rms_norm(input, normalized_shape, weight=None, eps=None):
    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    return N._fused_rms_norm(input, shape, weight, eps)[0]


def _group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    n, c = input.shape[0], input.shape[1]
    hxw = 1
    for size in input.shape[2:]:
        hxw *= size
    return N.native_group_norm(input, weight, bias, n, c, hxw, num_groups, eps)[0]


def _nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    return N.nll_loss_forward(input, target, weight, _REDUCTIONS[reduction], ignore_index)[0]


def _to(input, dtype, *, out=None):
    return N._to_copy(input, dtype=dtype)


def _max(input, dim=None, keepdim=False):
    if dim is None:
        return N.amax(input)
    return torch.return_types.max(N.max.dim(input, dim, keepdim))


def _min(input, dim=None, keepdim=False):
    if dim is None:
        return N.amin(input)
    return torch.return_types.min(N.min.dim(input, dim, keepdim))


def _stack(tensors, dim=0):
    dim = dim % (tensors[0].dim() + 1) if tensors else dim
    return N.cat([t.unsqueeze(dim) for t in tensors], dim)


def _isfinite(input):
    return N.logical_not(N.logical_or(N.isnan(input), N.isinf(input)))


def _argsort(input, dim=-1, descending=False, stable=False):
    return N.sort.stable(input, stable=stable, dim=dim, descending=descending)[1]


_EAGER_SDPA = EagerTwin(sdpa.scaled_dot_product_attention)


def _sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
          enable_gqa=False):  # fmt: skip
    """Dropout (a seed per call), ranks other than 4, and the calls torch's function takes
    (heads differing without enable_gqa, a mask with a causal flag) run eagerly."""
    grouped = query.dim() == 4 and key.dim() == 4 and query.shape[1] != key.shape[1]
    if (
        dropout_p
        or query.dim() != 4
        or (grouped and not enable_gqa)
        or (is_causal and attn_mask is not None)
    ):
        return _EAGER_SDPA.marked(query, key, value, attn_mask, dropout_p, is_causal, scale,
                                  enable_gqa)  # fmt: skip
    return N.attention(query, key, value, attn_mask, is_causal, scale)[0]


def _varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, *,
            softmax_scale=None, causal=False):  # fmt: skip
    return N.varlen_attention(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                              softmax_scale, causal)[0]  # fmt: skip


def _paged(q, k_cache, v_cache, block_tables, seq_lens, *, scale=None, alibi_slopes=None,
           max_seq_len=None):  # fmt: skip
    return N.paged_attention_decode(q, k_cache, v_cache, block_tables, seq_lens, scale,
                                    alibi_slopes, max_seq_len)  # fmt: skip


ADAPTERS = {
    "argsort": _argsort,
    "isfinite": _isfinite,
    "stack": _stack,
    "group_norm": _group_norm,
    "layer_norm": _layer_norm,
    "log_softmax": _log_softmax,
    "max": _max,
    "min": _min,
    "nll_loss": _nll_loss,
    "paged_attention_decode": _paged,
    "rms_norm": _rms_norm,
    "scaled_dot_product_attention": _sdpa,
    "softmax": _softmax,
    "to": _to,
    "varlen_attention": _varlen,
}
# Adapters whose plain function records no gradient (the others are autograd Functions of
# their own), so that eager calls recording one go through the custom ops too.
_GRADED_ADAPTERS = ("max", "min", "nll_loss", "stack", "to")


def install(namespace: dict, names) -> None:
    """Replace each exported op `namespace[name]` by its entry point (graph_breaks.py): the
    custom ops defined first, their formulas registered."""
    overloads = define_all()
    differentiable = register()
    functions, by_function = every_function(), {}
    for overload in sorted(overloads):
        by_function.setdefault(functions[overload], []).append(overload)
    for name in names:
        fn = namespace[name]
        mirrored = by_function.get(fn)
        if name in ADAPTERS:
            namespace[name] = compiled_as(fn, ADAPTERS[name], name in _GRADED_ADAPTERS)
        elif mirrored and name not in EAGER and not name.endswith("_"):
            packet = getattr(N, mirrored[0].split(".")[0])
            graded = any(o in differentiable for o in mirrored)
            refused = graded and not set(mirrored) & set(UNDIFFERENTIATED)
            namespace[name] = compiled_as(fn, table_call(fn, packet), graded, refused)
        elif name.endswith("_"):  # in place: eager under compile, recorded for autograd
            twin = functools.partial(namespace.get, name[:-1])
            namespace[name] = recorded_in_place(fn, run_eagerly_under_compile(fn), twin)
        else:
            namespace[name] = run_eagerly_under_compile(fn)
