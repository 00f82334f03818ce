"""Which blocks an attention program walks, and which of them it sees whole.

A program holds one block (of queries in the forward and dQ, of keys in dK/dV) and walks the
blocks of the other side that it meets; those that every pair of the two blocks sees (inside
both sequences, before the causal diagonal, with no mask given) run unmasked, the rest masked.
The forward and dQ walk key blocks (`key_runs`), dK/dV query blocks (`query_runs`).
"""

from __future__ import annotations

from ... import language as tl
from ...runtime.jit import jit

__all__ = ["key_runs", "query_runs"]


@jit
def key_runs(start, L, S, diagonal, CAUSAL: tl.constexpr, MASK_KIND: tl.constexpr,
             PACKED: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):  # fmt: skip
    """(whole, end): the query block at `start` walks the key blocks from 0 to `end` (a causal
    one stops at its last visible key, a packed one past its sequence walks none); those
    before `whole` every one of its queries sees whole."""
    end = S
    whole = S
    if CAUSAL:
        end = tl.minimum(S, start + BLOCK_M + diagonal)
        whole = tl.minimum(S, tl.maximum(start + diagonal + 1, 0))
    if PACKED:
        end = end if start < L else 0
    whole = tl.minimum((whole // BLOCK_N) * BLOCK_N, end) if MASK_KIND == 0 else 0
    return whole, end


@jit
def query_runs(start, L, S, diagonal, CAUSAL: tl.constexpr, MASK_KIND: tl.constexpr,
               PACKED: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):  # fmt: skip
    """(first, whole_from, whole_to, last): the query blocks that see the key block at `start`
    run from `first` to `last`; those from `whole_from` to `whole_to` see all of it (inside both
    sequences, past the causal diagonal, no mask) and run unmasked."""
    first = 0
    whole_from = 0
    if CAUSAL:
        first = (tl.maximum(start - diagonal, 0) // BLOCK_M) * BLOCK_M
        whole_from = tl.cdiv(tl.maximum(start + BLOCK_N - 1 - diagonal, 0), BLOCK_M) * BLOCK_M
    last = L
    if PACKED:
        last = L if start < S else 0
    whole_to = tl.maximum(tl.minimum((L // BLOCK_M) * BLOCK_M, last), first)
    whole_from = tl.minimum(tl.maximum(whole_from, first), whole_to)
    if MASK_KIND != 0 or start + BLOCK_N > S:
        whole_from = first
        whole_to = first
    return first, whole_from, whole_to, last
