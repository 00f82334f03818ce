"""The attention entry points as torch custom ops, `torch.ops.naiad.<name>`, for compiled graphs.

`scaled_dot_product_attention`, `varlen_attention` and `paged_attention_decode` take arguments
no single ATen overload takes (masks and grouped heads on both devices, packed sequences, a
paged cache), so unlike the table's ops (mirrors.py) their custom ops have schemas of their
own. The forwards return the output and the log-sum-exp of its rows, which their backward ops
take, as flash.Attention keeps them; the fake implementations allocate what the kernels
allocate (contiguous outputs, fp32 log-sum-exp over the output's rows). Dropout is left out:
its seed is drawn on the host at each call (graph_breaks.py runs such calls eagerly).
"""

from __future__ import annotations

import torch

from .attention import flash, sdpa, varlen
from .attention import paged as paged_attention
from .derivatives import register_formula
from .mirrors import LIBRARY

__all__ = []

_ATTENTION = (
    "(Tensor query, Tensor key, Tensor value, Tensor? attn_mask, bool is_causal, float? scale"
)
_VARLEN = ("(Tensor q, Tensor k, Tensor v, Tensor cu_seqlens_q, Tensor cu_seqlens_k, "
           "int max_seqlen_q, int max_seqlen_k, float? softmax_scale, bool causal")  # fmt: skip
LIBRARY.define(f"attention{_ATTENTION}) -> (Tensor, Tensor)")
LIBRARY.define(f"attention_backward{_ATTENTION}, Tensor grad, Tensor out, Tensor lse) -> "
               "(Tensor, Tensor, Tensor)")  # fmt: skip
LIBRARY.define(f"varlen_attention{_VARLEN}) -> (Tensor, Tensor)")
LIBRARY.define(f"varlen_attention_backward{_VARLEN}, Tensor grad, Tensor out, Tensor lse) -> "
               "(Tensor, Tensor, Tensor)")  # fmt: skip
LIBRARY.define("paged_attention_decode(Tensor q, Tensor k_cache, Tensor v_cache, "
               "Tensor block_tables, Tensor seq_lens, float? scale, Tensor? alibi_slopes, "
               "int? max_seq_len) -> Tensor")  # fmt: skip


def _impl(name):
    def register(fn):
        for key in ("CPU", "CUDA"):
            LIBRARY.impl(name, fn, key)
        return fn

    return register


def _fake(name):
    return lambda fn: torch.library.register_fake(f"naiad::{name}", fn, lib=LIBRARY)


@_impl("attention")
def _attention(query, key, value, attn_mask, is_causal, scale):
    return flash.forward(sdpa._Problem(query, key, value, attn_mask, 0.0, is_causal, scale))


@_impl("attention_backward")
def _attention_backward(query, key, value, attn_mask, is_causal, scale, grad, out, lse):
    problem = sdpa._Problem(query, key, value, attn_mask, 0.0, is_causal, scale)
    return flash.backward(problem, grad, out, lse)


@_impl("varlen_attention")
def _varlen(q, k, v, cu_q, cu_k, max_q, max_k, scale, causal):
    return flash.forward(varlen._Problem(q, k, v, cu_q, cu_k, max_q, max_k, causal, scale))


@_impl("varlen_attention_backward")
def _varlen_backward(q, k, v, cu_q, cu_k, max_q, max_k, scale, causal, grad, out, lse):
    problem = varlen._Problem(q, k, v, cu_q, cu_k, max_q, max_k, causal, scale)
    return flash.backward(problem, grad, out, lse)


@_impl("paged_attention_decode")
def _paged(q, k_cache, v_cache, block_tables, seq_lens, scale, alibi_slopes, max_seq_len):
    return paged_attention.paged_attention_decode(
        q, k_cache, v_cache, block_tables, seq_lens, scale=scale, alibi_slopes=alibi_slopes,
        max_seq_len=max_seq_len,
    )  # fmt: skip


def _forward_fake(q, k, v, *rest):
    out = q.new_empty((*q.shape[:-1], v.shape[-1]))
    return out, q.new_empty(q.shape[:-1], dtype=torch.float32)


def _backward_fake(q, k, v, *rest):
    return q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape)


for _name in ("attention", "varlen_attention"):
    _fake(_name)(_forward_fake)
    _fake(f"{_name}_backward")(_backward_fake)
_fake("paged_attention_decode")(lambda q, *rest: q.new_empty(q.shape))


def _attention_formula(op):
    """The backward of an attention op whose inputs are (q, k, v, *rest): `op` on them, the
    output's gradient, and the forward's output and log-sum-exp."""

    def formula(grads, inputs, outputs):
        dq, dk, dv = op(*inputs, grads[0].contiguous(), *outputs)
        return dq, dk, dv, *[None] * (len(inputs) - 3)

    return formula


register_formula("naiad::attention", _attention_formula(torch.ops.naiad.attention_backward))
register_formula(
    "naiad::varlen_attention", _attention_formula(torch.ops.naiad.varlen_attention_backward)
)
