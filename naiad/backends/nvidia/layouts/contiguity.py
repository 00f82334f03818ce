"""Which dimension of a dot operand a layout holds contiguously: the one a shared buffer of it
should store along, so that each thread writes (and a copy moves) whole vectors."""

from __future__ import annotations

from .linear_layout import LinearLayout


def contiguous_dim(src: LinearLayout, k_dim: int, mn_dim: int) -> int:
    """The dimension the source holds contiguously in its registers (else along its first
    lanes); K when neither says."""
    names = src.out_dims
    for dim in (k_dim, mn_dim):
        if src.contiguous_registers(names[dim]) > 1:
            return dim
    lanes = src.bases("lane")
    if lanes and lanes[0][mn_dim] == 1 and not lanes[0][k_dim]:
        return mn_dim
    return k_dim
