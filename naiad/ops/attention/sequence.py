"""Where one sequence of an attention call lies, for the flash kernels.

Batched tensors hold every sequence at the call's full length in its own batch slot. Packed
tensors (variable-length attention) hold the sequences end to end along one token axis:
sequence b is rows cu_seqlens[b] to cu_seqlens[b + 1], and the kernels' L and S are only the
longest lengths, which size the grid. A packed causal mask ends at the bottom right of each
sequence's scores (the last query sees every key), so a sequence with more queries than keys
has first queries that see no key; a batched one follows torch's is_causal (top left).
"""

from __future__ import annotations

from ... import language as tl
from ...runtime.jit import jit

__all__ = ["causal_diagonal", "query_block", "sequence"]


@jit
def sequence(cu_seqlens, b, length, PACKED: tl.constexpr):
    """(first row, length) of sequence b: 0 and `length` when batched; from the prefix sums when
    packed (the first row as int64: it multiplies a token stride into an address)."""
    if PACKED:
        first = tl.load(cu_seqlens + b)
        return first.to(tl.int64), tl.load(cu_seqlens + b + 1) - first
    return 0, length


@jit
def causal_diagonal(L, S, PACKED: tl.constexpr):
    """The causal mask's diagonal: key n is visible from query m where n <= m + diagonal."""
    if PACKED:
        return S - L
    return 0


@jit
def query_block(CAUSAL: tl.constexpr):
    """The block of queries this program takes along the grid's first axis. Causal programs take
    them last to first: later queries see more keys, so the longest programs start first and
    the short ones fill the last wave (on an H200, fp16 2x16x4096: the whole-block forward at
    D128 0.343 -> 0.336 ms, its dQ at D64 0.282 -> 0.227)."""
    if CAUSAL:
        return tl.num_programs(0) - 1 - tl.program_id(0)
    return tl.program_id(0)
