"""The range check of an op's indices: by the host before the kernel reads by them, or on a GPU
by the kernel itself.

A kernel that reads or writes at an index past its operand's end does not fail: inside the
operand's storage it reads a neighbour's value (a class index past C reads the next sample's
log-probability), and past it the CPU's bounds check stops it only where the storage ends, while
a GPU reads garbage or writes over other tensors. torch checks the same indices and raises
IndexError, so the ops that take indices (index_select, gather, embedding, nll_loss, scatter)
ask here first on the CPU, as torch's CPU kernels check; on a GPU their kernels assert instead
(`checked_in_kernel`).
"""

from __future__ import annotations

import torch

__all__ = [
    "check_index_dtype",
    "checked_in_kernel",
    "first_out_of_range",
    "kernel_checks",
    "outside_on_host",
]

# The launch options of a kernel that checks its indices itself (`checked_in_kernel`): its
# device asserts compiled, without the integer overflow checks that option adds by default.
_KERNEL_CHECKS = {"asserts": True, "sanitize_overflow": False}


def checked_in_kernel(indices) -> bool:
    """Whether the kernel reading by `indices` checks their range itself, by a device assert
    launched with `kernel_checks`' options, instead of the host before it: on a GPU, as torch's CUDA
    kernels do, since the host's check waits for the device, which then idles while the host
    launches again (a bf16 Llama training step of 8x2048 tokens on an H200: 7 % of its time for
    four checks). A failed assert stops its thread before it reads or writes by the index, and
    surfaces as torch's does, at the next synchronization, as CUDA's device-side assert error
    (the context lost), its message printed by the device."""
    return indices.is_cuda


def kernel_checks(indices) -> dict:
    """The launch options of a kernel reading by `indices`: its asserts compiled where it checks
    them itself."""
    return _KERNEL_CHECKS if checked_in_kernel(indices) else {}


def check_index_dtype(indices, what: str) -> None:
    """torch's refusal of indices that are not integers (`what` names them in the error): a
    kernel would truncate them."""
    if indices.dtype not in (torch.int64, torch.int32):
        raise RuntimeError(f"{what} must be int64 or int32, got {indices.dtype}")


def outside_on_host(indices, low: int, high: int, ignore: int | None = None):
    """`first_out_of_range` where the host checks `indices`; None where their kernel does."""
    return None if checked_in_kernel(indices) else first_out_of_range(indices, low, high, ignore)


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
