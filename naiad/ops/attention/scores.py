"""What attention's forward and backward kernels share: a tile of scores, in base 2.

s[m, n] = q[m] . k[n] * scale * log2(e) (+ the additive mask * log2(e)), and -inf where the key
is past the sequence, where a causal mask hides it (key n > query m + diagonal: 0 counts from
the top left as torch's is_causal, S - L from the bottom right) or where a boolean mask is
False. The forward takes exp2 of these against a running maximum; the backward recomputes the
same tile against the stored log-sum-exp.
"""

from __future__ import annotations

from ... import language as tl
from ...runtime.jit import jit

__all__ = ["LOG2E", "hide", "scores"]

LOG2E = 1.4426950408889634

# MASK_KIND: no mask, a boolean one (False hides the key), or an additive float one.
NO_MASK, BOOL_MASK, ADD_MASK = 0, 1, 2


@jit
def hide(s, rows, cols, L, S, diagonal, mask, sm_l, sm_s, CAUSAL: tl.constexpr,
         MASK_KIND: tl.constexpr):  # fmt: skip
    """Scores `s` (scaled to base 2) with the mask applied: -inf where hidden, the additive
    mask added. `rows` and `cols` index the queries and keys and broadcast to s's shape, so
    either orientation works ([rows, cols] as the forward's, or [cols, rows]); `mask` points at
    this (batch, head)'s mask."""
    visible = (cols < S) & (rows < L)
    if CAUSAL:
        visible = visible & (cols <= rows + diagonal)
    if MASK_KIND != 0:
        m = tl.load(mask + rows * sm_l + cols * sm_s, mask=visible, other=0)
        if MASK_KIND == 1:
            visible = visible & (m != 0)
        else:
            s = s + m.to(tl.float32) * 1.4426950408889634
    return tl.where(visible, s, float("-inf"))


@jit
def scores(q, k, rows, cols, L, S, diagonal, mask, sm_l, sm_s, scale_log2,
           CAUSAL: tl.constexpr, MASK_KIND: tl.constexpr, PRECISION: tl.constexpr):  # fmt: skip
    """The [BLOCK_M, BLOCK_N] score tile of queries `rows` against keys `cols`; `k` is the
    [BLOCK_N, BLOCK_E] key tile and `mask` points at this (batch, head)'s mask."""
    s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale_log2
    return hide(s, rows[:, None], cols[None, :], L, S, diagonal, mask, sm_l, sm_s, CAUSAL,
                MASK_KIND)  # fmt: skip
