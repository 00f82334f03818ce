"""Variable-length attention: sequences of different lengths packed end to end along one token
axis, attended to without padding by the flash kernels (flash.py), forward and backward.

    out = naiad.ops.varlen_attention(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                                     max_seqlen_k, causal=True)

q is (total_q, H, E); k and v are (total_k, HK, E), H a multiple of HK (grouped heads: query
head h reads key head h // (H // HK)). Sequence b is queries cu_seqlens_q[b] to
cu_seqlens_q[b + 1] against keys cu_seqlens_k[b] to cu_seqlens_k[b + 1]; no query sees another
sequence's keys. The prefix sums are int32, one per sequence plus one, from 0 to the total;
max_seqlen_q and max_seqlen_k are at least every sequence's length (they size the grid). A
causal mask ends at the bottom right of each sequence (its last query sees all its keys; where
a sequence has more queries than keys, its first queries see none and give zeros). The scale
defaults to 1 / sqrt(E). fp32/fp16/bf16, head dims up to 256, any strides with a unit one along
E; the output is (total_q, H, E), contiguous. With dropout_p, the probabilities that multiply V
are dropped as the batched attention drops them (dropout.py), the mask's offsets strided by
max_seqlen_q and max_seqlen_k so that sequences never share one, its seed drawn from torch's
default generator (the autograd context keeps it for the backward).

The switch also registers ATen's `_flash_attention_forward` and `_flash_attention_backward` for
packed sequences, which torch.nn.attention.varlen.varlen_attn calls (torch has no CPU kernel for
them): the same kernels, with the log-sum-exp as ATen lays it out, (H, total_q); with dropout
the forward returns the seed and offset as its rng_state (uint64: seed, offset) and the backward
reads them back from it.
"""

from __future__ import annotations

import torch

from ..differentiable import apply
from ..dtypes import Unsupported
from ..random import draw_seed
from ..registry import aten
from . import flash

__all__ = ["varlen_attention"]


def _check_prefix_sums(cu_seqlens, total, longest, device, name):
    """The prefix sums' dtype, rank and device always; their values where they are on the CPU
    (on a GPU reading them would wait for the device, so there they are the caller's promise)."""
    if cu_seqlens.dtype != torch.int32 or cu_seqlens.dim() != 1 or not cu_seqlens.numel():
        raise ValueError(f"{name} must be a non-empty 1-d int32 tensor")
    if cu_seqlens.device != device:
        raise ValueError(f"{name} is on {cu_seqlens.device}, the tensors on {device}")
    if device.type != "cpu":
        return
    lengths = cu_seqlens.diff()
    if cu_seqlens[0] != 0 or cu_seqlens[-1] != total or (lengths < 0).any():
        raise ValueError(f"{name} must rise from 0 to {total}")
    if lengths.numel() and lengths.max() > longest:
        raise ValueError(f"a sequence of {name} is longer than its max_seqlen, {longest}")


class _Problem(flash.Problem):
    """An attention call on packed (total_q, H, E) queries and (total_k, HK, E) keys and values:
    the rows of sequence b start at the prefix sums' b-th entry, so the batch strides are 0."""

    packed = True

    def __init__(self, q, k, v, cu_q, cu_k, max_q, max_k, causal, scale, dropout_p=0.0,
                 philox=None):  # fmt: skip
        """`philox`: the dropout's (seed, offset) where a forward drew them, else a seed is
        drawn (where `dropout_p` is not 0)."""
        if q.dim() != 3 or k.dim() != 3 or v.dim() != 3:
            raise Unsupported("variable-length attention of tensors not (tokens, heads, dim)")
        total_q, H, E = q.shape
        total_k, HK, _ = k.shape
        super().__init__(q, k, v, H, HK, causal, scale)
        _check_prefix_sums(cu_q, total_q, max_q, q.device, "cu_seqlens_q")
        _check_prefix_sums(cu_k, total_k, max_k, q.device, "cu_seqlens_k")
        if cu_q.numel() != cu_k.numel():
            raise ValueError("cu_seqlens_q and cu_seqlens_k count different numbers of sequences")
        self.cu_q, self.cu_k = cu_q.contiguous(), cu_k.contiguous()
        self.batches, self.L, self.S = cu_q.numel() - 1, int(max_q), int(max_k)
        self.out_shape, self.out_rows = (total_q, H, E), (0, 1, H)
        self.kv_shape, self.kv_rows = (total_k, HK, E), (0, 1, HK)
        q, k, v = self.q, self.k, self.v
        self.input_strides = (0, q.stride(1), q.stride(0), 0, k.stride(1), k.stride(0),
                              0, v.stride(1), v.stride(0))  # fmt: skip
        if dropout_p:
            self.set_dropout(dropout_p, *(philox or (draw_seed(None), 0)))


def varlen_attention(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, *,
                     softmax_scale=None, causal=False, dropout_p=0.0):  # fmt: skip
    """Attention of packed sequences (module docstring), differentiable in q, k and v; with
    dropout_p, its probabilities dropped (the same mask in the backward).

    Raises:
        Unsupported: for dtypes, ranks or head dims the kernels do not handle.
        ValueError: for prefix sums of another dtype, rank or device, or (on the CPU) that do not
            rise from 0 to the total or have a sequence longer than its max_seqlen.
    """
    problem = _Problem(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal,
                       softmax_scale, dropout_p)  # fmt: skip
    return apply(flash.Attention, q, k, v, problem)


def _aten_problem(query, key, value, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal,
                  scale, window_size_left, window_size_right, rng_state=None):  # fmt: skip
    """The problem of an ATen flash-attention call, where Naiad's kernels compute it: packed
    sequences, no window but the causal one (-1 keys back, 0 ahead: no key past the query's
    diagonal, which is_causal also says); dropout from the seed and offset of `rng_state`
    where a forward returned them, else drawn."""
    if cum_seq_q is None or cum_seq_k is None:
        raise Unsupported("flash attention of batched sequences through this overload")
    philox = None if rng_state is None or not dropout_p else (int(rng_state[0]), int(rng_state[1]))
    window = (-1 if window_size_left is None else window_size_left,
              -1 if window_size_right is None else window_size_right)  # fmt: skip
    if window not in ((-1, -1), (-1, 0)):
        raise Unsupported(f"flash attention in a window of {window}")
    causal = is_causal or window == (-1, 0)
    return _Problem(query, key, value, cum_seq_q, cum_seq_k, max_q, max_k, causal, scale,
                    dropout_p, philox)  # fmt: skip


@aten("_flash_attention_forward.default")
def flash_attention_forward(query, key, value, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p,
                            is_causal, return_debug_mask, *, scale=None, window_size_left=None,
                            window_size_right=None, seqused_k=None, alibi_slopes=None,
                            block_table=None, num_splits=None):  # fmt: skip
    """num_splits only asks how to divide the work; Naiad's kernels do not split a sequence."""
    if return_debug_mask or seqused_k is not None or alibi_slopes is not None:
        raise Unsupported("flash attention with a debug mask, used key counts or ALiBi")
    if block_table is not None:
        raise Unsupported("flash attention over paged keys")
    problem = _aten_problem(query, key, value, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p,
                            is_causal, scale, window_size_left, window_size_right)  # fmt: skip
    out, lse = flash.forward(problem)
    device = out.device
    drawn = (problem.seed, problem.dropout_offset)  # zeros without dropout: nothing drawn
    seeds = torch.tensor(drawn, dtype=torch.uint64, device=device)
    unused = torch.empty((), dtype=torch.uint64, device=device)
    return out, lse.t().contiguous(), seeds, unused, torch.empty(0, device=device)


@aten("_flash_attention_backward.default")
def flash_attention_backward(grad_out, query, key, value, out, logsumexp, cum_seq_q, cum_seq_k,
                             max_q, max_k, dropout_p, is_causal, rng_state, unused, *,
                             scale=None, window_size_left=None,
                             window_size_right=None):  # fmt: skip
    problem = _aten_problem(query, key, value, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p,
                            is_causal, scale, window_size_left, window_size_right,
                            rng_state)  # fmt: skip
    return flash.backward(problem, grad_out, out, logsumexp.t().contiguous())
