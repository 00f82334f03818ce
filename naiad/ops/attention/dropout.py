"""Attention's dropout, as FlashAttention does it: the probabilities that multiply V are dropped
(zeroed with probability p, the rest scaled by 1 / (1 - p)) while the softmax's maximum, sum and
log-sum-exp stay those of the undropped scores.

No mask reaches memory. Element (b, h, l, s) of the (B, H, L, S) probabilities is kept where
tl.rand(seed, offset + ((b * H + h) * L + l) * S + s) >= p: a pure function of the call's seed
and offset and the element's place, so the backward regenerates the forward's mask from the two
integers, whichever tiles either walks. Packed sequences (varlen.py) take L and S as the longest
lengths (max_seqlen_q, max_seqlen_k) and l, s within sequence b, so no two elements of a call
share an offset; `keep_mask` materialises the same mask (a debugging and testing view of what
the kernels keep).
"""

from __future__ import annotations

import torch

from ... import language as tl
from ...runtime.jit import jit

__all__ = ["keep_mask", "kept"]

_BLOCK = 1024  # mask elements a program of `_keep_kernel`


@jit
def kept(seed, first, rows, cols, S, p):
    """Where the probabilities of queries `rows` against keys `cols` (broadcasting to the tile's
    shape, in either orientation) are kept; `first` is the offset of this (batch, head)'s
    element (0, 0)."""
    return tl.rand(seed, first + rows.to(tl.int64) * S + cols) >= p


@jit(do_not_specialize=["n", "seed", "offset", "p"])
def _keep_kernel(keep, n, seed, offset, p, BLOCK: tl.constexpr):
    at = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(keep + at, tl.rand(seed, offset + at) >= p, mask=at < n)


def keep_mask(shape, seed: int, offset: int, p: float, device) -> torch.Tensor:
    """The (B, H, L, S) boolean mask of the probabilities an attention call of this seed,
    offset and dropout probability keeps."""
    keep = torch.empty(shape, dtype=torch.bool, device=device)
    n = keep.numel()
    if n:
        _keep_kernel[((n + _BLOCK - 1) // _BLOCK,)](keep, n, seed, offset, float(p), _BLOCK)
    return keep
