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

__all__ = ["LOG2E", "scores"]

LOG2E = 1.4426950408889634

# MASK_KIND: no mask, a boolean one (False hides the key), or an additive float one.
NO_MASK, BOOL_MASK, ADD_MASK = 0, 1, 2


@jit
def scores(q, k, rows, cols, L, S, diagonal, mask, sm_l, sm_s, scale_log2,
           CAUSAL: tl.constexpr, MASK_KIND: tl.constexpr, PRECISION: tl.constexpr):  # fmt: skip
    """The [BLOCK_M, BLOCK_N] score tile of queries `rows` against keys `cols`; `k` is the
    [BLOCK_N, BLOCK_E] key tile and `mask` points at this (batch, head)'s mask."""
    s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale_log2
    visible = (cols[None, :] < S) & (rows[:, None] < L)
    if CAUSAL:
        visible = visible & (cols[None, :] <= rows[:, None] + diagonal)
    if MASK_KIND != 0:
        where = mask + rows[:, None] * sm_l + cols[None, :] * sm_s
        m = tl.load(where, mask=visible, other=0)
        if MASK_KIND == 1:
            visible = visible & (m != 0)
        else:
            s = s + m.to(tl.float32) * 1.4426950408889634
    return tl.where(visible, s, float("-inf"))
