"""scaled_dot_product_attention from the flash kernels (forward.py, backward.py): the direct call,
differentiable, and the fused-attention overloads ATen's scaled_dot_product_attention dispatches
to (the CPU flash kernel; on CUDA the flash, memory-efficient and cuDNN ones), registered with
the switch.

Handled: (B, H, L, E) queries against (B, HK, S, E) keys and values (H a multiple of HK: grouped
heads), any strides with a unit one along E, fp32/fp16/bf16, head dims up to 256, causal (from
the top left, as torch's is_causal) or not, with or without a boolean or additive mask that
broadcasts to (B, H, L, S), with dropout (dropout.py: FlashAttention's, the probabilities that
multiply V dropped, the log-sum-exp of the undropped scores) or not. Other ranks go to torch
(the direct call to torch's function; a registered overload to torch's kernel).

Dropout draws a seed from torch's default generator (so `torch.manual_seed` makes runs repeat,
as naiad.ops' dropout does), and the backward regenerates the forward's mask from it: the direct
call keeps it in its autograd context; the CUDA overloads return it as their philox seed and
offset (the flash one's seed as two uint64, its offset one; the memory-efficient and cuDNN
ones' as int64 scalars, all on the CPU) and their backwards read them back. The mask is Naiad's,
not torch's: the same seed drops other (equally distributed) probabilities than torch's kernels.
torch's CPU flash kernel takes no dropout, and its overloads give no seed: there dropout goes to
torch as well.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ..differentiable import apply
from ..dtypes import Unsupported
from ..random import draw_seed
from ..registry import aten
from . import flash
from .scores import ADD_MASK, BOOL_MASK

__all__ = ["scaled_dot_product_attention"]


class _Problem(flash.Problem):
    """An attention call on batched (B, H, L, E) queries and (B, HK, S, E) keys and values."""

    def __init__(self, q, k, v, mask, dropout_p, causal, scale, philox=None):
        """`philox`: the dropout's (seed, offset) where a forward drew them, else a seed is
        drawn (where `dropout_p` is not 0)."""
        if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
            raise Unsupported("attention of other ranks")
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
        if dropout_p:
            self.set_dropout(dropout_p, *(philox or (draw_seed(None), 0)))

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
    _no_seed(dropout_p)
    return flash.forward(_Problem(query, key, value, attn_mask, dropout_p, is_causal, scale))


@aten("_scaled_dot_product_flash_attention_for_cpu_backward.default")
def flash_attention_for_cpu_backward(grad_out, query, key, value, out, logsumexp, dropout_p,
                                     is_causal, *, attn_mask=None, scale=None):  # fmt: skip
    _no_seed(dropout_p)
    problem = _Problem(query, key, value, attn_mask, dropout_p, is_causal, scale)
    return flash.backward(problem, grad_out, out, logsumexp)


def _no_seed(dropout_p):
    """The CPU flash overloads carry no seed from forward to backward (torch's kernel refuses
    dropout there): a call with dropout goes to torch's."""
    if dropout_p:
        raise Unsupported("dropout through the CPU flash overloads")


def _philox_out(problem, flash_layout=False) -> tuple:
    """The (seed, offset) tensors a forward overload returns: empty ones without dropout; with
    it the problem's, as the flash overload lays them out (`flash_layout`: uint64, the seed a
    pair of it and the offset) or the memory-efficient and cuDNN ones (int64 scalars)."""
    if not problem.dropout_p:
        empty = torch.empty(0, dtype=torch.int64, device=problem.q.device)
        return empty, empty
    seed, offset = problem.seed, problem.dropout_offset
    if flash_layout:
        pair = torch.tensor([seed, offset], dtype=torch.uint64)
        return pair, torch.tensor(offset, dtype=torch.uint64)
    return torch.tensor(seed, dtype=torch.int64), torch.tensor(offset, dtype=torch.int64)


def _philox_in(dropout_p, philox_seed, philox_offset):
    """The (seed, offset) a backward overload reads from its forward's `_philox_out`, None
    without dropout."""
    if not dropout_p:
        return None
    return int(philox_seed.reshape(-1)[0]), int(philox_offset)


def _flash_outputs(problem, flash_layout) -> tuple:
    """The forward's results as the flash and cuDNN overloads return them: the output and the
    log-sum-exp, then empty debug masks, the lengths and the dropout's seed and offset."""
    out, lse = flash.forward(problem)
    empty = torch.empty(0, device=out.device)
    seed, offset = _philox_out(problem, flash_layout)
    return out, lse, empty, empty, problem.L, problem.S, seed, offset, empty


@aten("_scaled_dot_product_flash_attention.default")
def flash_attention(query, key, value, dropout_p=0.0, is_causal=False, return_debug_mask=False,
                    *, scale=None):  # fmt: skip
    if return_debug_mask:
        raise Unsupported("the flash kernel's debug mask")
    return _flash_outputs(_Problem(query, key, value, None, dropout_p, is_causal, scale), True)


@aten("_scaled_dot_product_flash_attention_backward.default")
def flash_attention_backward(grad_out, query, key, value, out, logsumexp, cum_seq_q, cum_seq_k,
                             max_q, max_k, dropout_p, is_causal, philox_seed, philox_offset, *,
                             scale=None):  # fmt: skip
    philox = _philox_in(dropout_p, philox_seed, philox_offset)
    problem = _Problem(query, key, value, None, dropout_p, is_causal, scale, philox)
    return flash.backward(problem, grad_out, out, logsumexp)


@aten("_scaled_dot_product_efficient_attention.default")
def efficient_attention(query, key, value, attn_bias, compute_log_sumexp, dropout_p=0.0,
                        is_causal=False, *, scale=None):  # fmt: skip
    """Where the backward will go to torch's kernel (a bias's gradient), so does a forward with
    dropout: torch's backward would not draw Naiad's mask from the seed."""
    if dropout_p and attn_bias is not None and attn_bias.requires_grad:
        raise Unsupported("dropout with the gradient of an attention bias")
    problem = _Problem(query, key, value, attn_bias, dropout_p, is_causal, scale)
    out, lse = flash.forward(problem)
    return out, lse, *_philox_out(problem)


@aten("_scaled_dot_product_efficient_attention_backward.default")
def efficient_attention_backward(grad_out, query, key, value, attn_bias, out, logsumexp,
                                 philox_seed, philox_offset, dropout_p, grad_input_mask,
                                 is_causal=False, *, scale=None):  # fmt: skip
    if attn_bias is not None and attn_bias.requires_grad and grad_input_mask[3]:
        raise Unsupported("the gradient of an attention bias")
    philox = _philox_in(dropout_p, philox_seed, philox_offset)
    problem = _Problem(query, key, value, attn_bias, dropout_p, is_causal, scale, philox)
    dq, dk, dv = flash.backward(problem, grad_out, out, logsumexp)
    return dq, dk, dv, None


@aten("_scaled_dot_product_cudnn_attention.default")
def cudnn_attention(query, key, value, attn_bias, compute_log_sumexp, dropout_p=0.0,
                    is_causal=False, return_debug_mask=False, *, scale=None):  # fmt: skip
    """The overload torch's dispatch prefers on Hopper GPUs for fp16 and bf16."""
    if return_debug_mask:
        raise Unsupported("the cuDNN kernel's debug mask")
    problem = _Problem(query, key, value, attn_bias, dropout_p, is_causal, scale)
    return _flash_outputs(problem, False)


@aten("_scaled_dot_product_cudnn_attention_backward.default")
def cudnn_attention_backward(grad_out, query, key, value, out, logsumexp, philox_seed,
                             philox_offset, attn_bias, cum_seq_q, cum_seq_k, max_q, max_k,
                             dropout_p, is_causal, *, scale=None):  # fmt: skip
    philox = _philox_in(dropout_p, philox_seed, philox_offset)
    problem = _Problem(query, key, value, attn_bias, dropout_p, is_causal, scale, philox)
    return flash.backward(problem, grad_out, out, logsumexp)
