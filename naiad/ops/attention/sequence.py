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

__all__ = ["causal_diagonal", "sequence"]


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
