"""The range check of an op's indices, made by the kernel that reads by them.

A kernel that reads or writes at an index past its operand's end does not fail: inside the
operand's storage it reads a neighbour's value (a class index past C reads the next sample's
log-probability), and past it the CPU's bounds check stops it only where the storage ends, while
a GPU reads garbage or writes over other tensors. torch checks the same indices, so the ops that
take indices (index_select, gather, embedding, nll_loss, scatter) launch their kernels with a
device assert of the range compiled (`KERNEL_CHECKS`), as torch's CUDA kernels check theirs.

- **On a GPU** a failed assert stops its thread before it reads or writes by the index, and
  surfaces as torch's does, at the next synchronization, as CUDA's device-side assert error
  (the context lost), its message printed by the device. A check by the host would wait for the
  device, which then idles while the host launches again (a bf16 Llama training step of 8x2048
  tokens on an H200: 7 % of its time for four checks).
- **On the CPU** the failed assert raises KernelAssertionError at once, and the op raises
  torch's own error in its place (`refusal`), naming the first index outside as torch's CPU
  kernels do: the host reads the indices again only then. Checked by the host before every
  launch, they had cost a pass over the indices and two reads of its extremes: 2.3 us of a
  small call's host time, 0.13 ms of a scatter_add of 2**20 elements (about a seventh).
"""

from __future__ import annotations

import torch

__all__ = [
    "KERNEL_CHECKS",
    "check_index_dtype",
    "check_on_host",
    "first_out_of_range",
    "refusal",
]

# The launch options of a kernel that checks its indices: its device asserts compiled, without
# the integer overflow checks that option adds by default.
KERNEL_CHECKS = {"asserts": True, "sanitize_overflow": False}


def check_index_dtype(indices, what: str) -> None:
    """torch's refusal of indices that are not integers (`what` names them in the error): a
    kernel would truncate them."""
    if indices.dtype not in (torch.int64, torch.int32):
        raise RuntimeError(f"{what} must be int64 or int32, got {indices.dtype}")


def refusal(failure: Exception, indices, low: int, high: int, error, ignore: int | None = None):
    """What an op raises where a kernel reading by `indices` failed its assert (`failure`, a
    KernelAssertionError): `error(index)` for the first index outside [low, high), `ignore`
    excepted, in torch's words; the failure itself where every index is inside (an assert of
    something else)."""
    bad = first_out_of_range(indices, low, high, ignore)
    return failure if bad is None else error(bad)


def check_on_host(indices, low: int, high: int, error, ignore: int | None = None) -> None:
    """Raises `error(index)` for the first of `indices` outside [low, high), where no kernel
    runs to assert them (a result of no elements): torch refuses such indices even so."""
    bad = first_out_of_range(indices, low, high, ignore)
    if bad is not None:
        raise error(bad)


def first_out_of_range(indices, low: int, high: int, ignore: int | None = None):
    """The first of `indices` outside [low, high), `ignore` excepted, as a Python int; None
    where every one is inside. The extremes decide the common cases: the indices' own, or,
    where `ignore` is among them (nll_loss's padding), theirs with `ignore` replaced by `low`
    (two launches under the switch where comparing each index took six). Only where an index is
    outside are they compared one by one, to name it."""
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
