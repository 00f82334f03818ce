"""The range check of an op's indices, made on the host before the kernel reads by them.

A kernel that reads or writes at an index past its operand's end does not fail: inside the
operand's storage it reads a neighbour's value (a class index past C reads the next sample's
log-probability), and past it the CPU's bounds check stops it only where the storage ends, while
a GPU reads garbage or writes over other tensors. torch checks the same indices and raises
IndexError, so the ops that take indices (index_select, gather, embedding, nll_loss) ask here
first: one synchronization of the indices' device, as torch's CPU kernels do.
"""

from __future__ import annotations

import torch

__all__ = ["first_out_of_range"]


def first_out_of_range(indices, low: int, high: int, ignore: int | None = None):
    """The first of `indices` outside [low, high), `ignore` excepted, as a Python int; None
    where every one is inside. The extremes decide the common case in one pass and one
    read (scatter's 0.3 ms check of 2**20 indices took ten times as long by comparisons and
    any()); only where they fall outside are the indices compared one by one."""
    if not indices.numel():
        return None
    extremes = torch.aminmax(indices)  # no stack of the two: under the switch that is a launch
    least, most = int(extremes.min), int(extremes.max)
    if low <= least and most < high:
        return None
    outside = (indices < low) | (indices >= high)
    if ignore is not None:
        outside &= indices != ignore
    if not outside.any():
        return None
    return int(indices[outside].reshape(-1)[0])
