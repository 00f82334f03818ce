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

__all__ = ["check_index_dtype", "first_out_of_range"]


def check_index_dtype(indices, what: str) -> None:
    """torch's refusal of indices that are not integers (`what` names them in the error): a
    kernel would truncate them."""
    if indices.dtype not in (torch.int64, torch.int32):
        raise RuntimeError(f"{what} must be int64 or int32, got {indices.dtype}")


def first_out_of_range(indices, low: int, high: int, ignore: int | None = None):
    """The first of `indices` outside [low, high), `ignore` excepted, as a Python int; None
    where every one is inside. The extremes decide the common cases: the indices' own, or,
    where `ignore` is among them (nll_loss's padding), theirs with `ignore` replaced by `low`
    (two launches under the switch where comparing each index took six). Scatter's check of
    2**20 indices by comparisons and any() had taken ten times its one pass. Only where an
    index is outside are they compared one by one, to name it."""
    if not indices.numel():
        return None
    if _inside(indices, low, high):
        return None
    if ignore is not None and _inside(torch.where(indices == ignore, low, indices), low, high):
        return None
    outside = (indices < low) | (indices >= high)
    if ignore is not None:
        outside &= indices != ignore
    return int(indices[outside].reshape(-1)[0])


def _inside(indices, low: int, high: int) -> bool:
    """Whether every index lies in [low, high), from their extremes (read one by one: a stack
    of the two would be one more launch under the switch)."""
    extremes = torch.aminmax(indices)
    return low <= int(extremes.min) and int(extremes.max) < high
