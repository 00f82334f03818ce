"""The float64 reference of attention with dropout, and the mask a call's dropout keeps: what the
CPU tests (test_ops_attention_dropout.py) and the GPU ones (test_gpu.py) compare against."""

import math

import torch

from naiad.ops.attention.dropout import keep_mask
from naiad.ops.random import draw_seed


def reference(q, k, v, keep, p, is_causal=False, attn_mask=None, scale=None):
    """Attention in float64 with the probabilities `keep` drops dropped, as torch's math
    path does it (softmax, then dropout scaled by 1 / (1 - p), then V)."""
    q, k, v = (t.double() for t in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ k.transpose(-1, -2) * scale
    L, S = s.shape[-2:]
    if is_causal:
        attn_mask = torch.ones(L, S, dtype=torch.bool, device=s.device).tril()
    if attn_mask is not None and attn_mask.dtype == torch.bool:
        s = s.masked_fill(~attn_mask, float("-inf"))
    elif attn_mask is not None:
        s = s + attn_mask.double()
    return (torch.softmax(s, -1) * keep / (1 - p)) @ v


def drawn_mask(q, k, p, state=1234) -> torch.Tensor:
    """The keep mask of the next call's dropout, the default generator seeded with `state`
    (and seeded so again for the call)."""
    B, H, L, _ = q.shape
    return drawn_mask_of((B, H, L, k.shape[2]), p, q.device, state)


def drawn_mask_of(shape, p, device, state=1234) -> torch.Tensor:
    """The (B, H, L, S) keep mask of the next call's dropout (packed sequences: L and S the
    longest lengths), the default generator seeded with `state` (and seeded so again)."""
    torch.manual_seed(state)
    seed = draw_seed(None)
    torch.manual_seed(state)
    return keep_mask(shape, seed, 0, p, device)
