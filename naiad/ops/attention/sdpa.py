"""scaled_dot_product_attention from the flash kernels (forward.py, backward.py): the direct call,
differentiable, and the fused-attention overloads ATen's scaled_dot_product_attention dispatches
to (the CPU flash kernel; on CUDA the flash, memory-efficient and cuDNN ones), registered with
the switch.

Handled: (B, H, L, E) queries against (B, HK, S, E) keys and values (H a multiple of HK: grouped
heads), any strides with a unit one along E, fp32/fp16/bf16, head dims up to 256, causal (from
the top left, as torch's is_causal) or not, with or without a boolean or additive mask that
broadcasts to (B, H, L, S). Dropout and other ranks go to torch (the direct call to torch's
function; a registered overload to torch's kernel).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ..differentiable import apply
from ..dtypes import Unsupported
from ..registry import aten
from . import flash
from .scores import ADD_MASK, BOOL_MASK

__all__ = ["scaled_dot_product_attention"]


class _Problem(flash.Problem):
    """An attention call on batched (B, H, L, E) queries and (B, HK, S, E) keys and values."""

    def __init__(self, q, k, v, mask, dropout_p, causal, scale):
        if q.dim() != 4 or k.dim() != 4 or v.dim() != 4 or dropout_p:
            raise Unsupported("attention of other ranks or with dropout")
        B, H, L, E = q.shape
        _, HK, S, _ = k.shape
        if k.shape[0] != B:
            raise Unsupported("attention of these shapes")
        super().__init__(q, k, v, H, HK, causal, scale)
        self.batches, self.L, self.S = B, L, S
        self.out_shape, self.out_rows = (B, H, L, E), (H * L, L, 1)
        self.kv_shape, self.kv_rows = (B, HK, S, E), (HK * S, S, 1)
        self.input_strides = (*self.q.stride()[:3], *self.k.stride()[:3], *self.v.stride()[:3])
        if mask is not None:
            self._mask(mask)

    def _mask(self, mask):
        if mask.dtype != torch.bool and mask.dtype not in flash.DTYPES:
            raise Unsupported(f"attention mask of {mask.dtype}")
        self.mask = mask.expand(self.batches, self.H, self.L, self.S)
        self.mask_kind = BOOL_MASK if mask.dtype == torch.bool else ADD_MASK
        self.mask_strides = self.mask.stride()


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):  # fmt: skip
    """torch.nn.functional.scaled_dot_product_attention, forward and backward in Naiad kernels
    where the arguments are handled (module docstring), torch's function elsewhere."""
    grouped = query.dim() == 4 and key.dim() == 4 and query.shape[1] != key.shape[1]
    try:
        if grouped and not enable_gqa:
            raise Unsupported("differing head counts without enable_gqa")
        if is_causal and attn_mask is not None:
            raise Unsupported("both a causal flag and a mask")
        problem = _Problem(query, key, value, attn_mask, dropout_p, is_causal, scale)
    except Unsupported:
        return F.scaled_dot_product_attention(
            query, key, value, attn_mask, dropout_p, is_causal, scale=scale, enable_gqa=enable_gqa
        )
    return apply(flash.Attention, query, key, value, problem)


@aten("_scaled_dot_product_flash_attention_for_cpu.default")
def flash_attention_for_cpu(query, key, value, dropout_p=0.0, is_causal=False, *,
                            attn_mask=None, scale=None):  # fmt: skip
    return flash.forward(_Problem(query, key, value, attn_mask, dropout_p, is_causal, scale))


@aten("_scaled_dot_product_flash_attention_for_cpu_backward.default")
def flash_attention_for_cpu_backward(grad_out, query, key, value, out, logsumexp, dropout_p,
                                     is_causal, *, attn_mask=None, scale=None):  # fmt: skip
    problem = _Problem(query, key, value, attn_mask, dropout_p, is_causal, scale)
    return flash.backward(problem, grad_out, out, logsumexp)


def _flash_outputs(problem) -> tuple:
    """The forward's results as the flash and cuDNN overloads return them: the output and the
    log-sum-exp, then empty debug masks, the lengths and empty random-number seeds."""
    out, lse = flash.forward(problem)
    device = out.device
    empty = torch.empty(0, device=device)
    seeds = torch.empty(0, dtype=torch.int64, device=device)
    return out, lse, empty, empty, problem.L, problem.S, seeds, seeds, empty


@aten("_scaled_dot_product_flash_attention.default")
def flash_attention(query, key, value, dropout_p=0.0, is_causal=False, return_debug_mask=False,
                    *, scale=None):  # fmt: skip
    if return_debug_mask:
        raise Unsupported("the flash kernel's debug mask")
    return _flash_outputs(_Problem(query, key, value, None, dropout_p, is_causal, scale))


@aten("_scaled_dot_product_flash_attention_backward.default")
def flash_attention_backward(grad_out, query, key, value, out, logsumexp, cum_seq_q, cum_seq_k,
                             max_q, max_k, dropout_p, is_causal, philox_seed, philox_offset, *,
                             scale=None):  # fmt: skip
    problem = _Problem(query, key, value, None, dropout_p, is_causal, scale)
    return flash.backward(problem, grad_out, out, logsumexp)


@aten("_scaled_dot_product_efficient_attention.default")
def efficient_attention(query, key, value, attn_bias, compute_log_sumexp, dropout_p=0.0,
                        is_causal=False, *, scale=None):  # fmt: skip
    out, lse = flash.forward(_Problem(query, key, value, attn_bias, dropout_p, is_causal, scale))
    seeds = torch.empty(0, dtype=torch.int64, device=query.device)
    return out, lse, seeds, seeds


@aten("_scaled_dot_product_efficient_attention_backward.default")
def efficient_attention_backward(grad_out, query, key, value, attn_bias, out, logsumexp,
                                 philox_seed, philox_offset, dropout_p, grad_input_mask,
                                 is_causal=False, *, scale=None):  # fmt: skip
    if attn_bias is not None and attn_bias.requires_grad and grad_input_mask[3]:
        raise Unsupported("the gradient of an attention bias")
    problem = _Problem(query, key, value, attn_bias, dropout_p, is_causal, scale)
    dq, dk, dv = flash.backward(problem, grad_out, out, logsumexp)
    return dq, dk, dv, None


@aten("_scaled_dot_product_cudnn_attention.default")
def cudnn_attention(query, key, value, attn_bias, compute_log_sumexp, dropout_p=0.0,
                    is_causal=False, return_debug_mask=False, *, scale=None):  # fmt: skip
    """The overload torch's dispatch prefers on Hopper GPUs for fp16 and bf16."""
    if return_debug_mask:
        raise Unsupported("the cuDNN kernel's debug mask")
    return _flash_outputs(_Problem(query, key, value, attn_bias, dropout_p, is_causal, scale))


@aten("_scaled_dot_product_cudnn_attention_backward.default")
def cudnn_attention_backward(grad_out, query, key, value, out, logsumexp, philox_seed,
                             philox_offset, attn_bias, cum_seq_q, cum_seq_k, max_q, max_k,
                             dropout_p, is_causal, *, scale=None):  # fmt: skip
    problem = _Problem(query, key, value, attn_bias, dropout_p, is_causal, scale)
    return flash.backward(problem, grad_out, out, logsumexp)
