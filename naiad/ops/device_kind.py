"""The key of naiad.ops' per-device tables (tiles, block sizes, the kernels a device takes)."""

from __future__ import annotations

import functools

import torch

__all__ = ["device_kind", "multiprocessors"]


def device_kind(device: torch.device) -> str:
    """ "cpu", or "cuda" for a GPU."""
    return "cpu" if device.type == "cpu" else "cuda"


@functools.cache
def multiprocessors(device: torch.device) -> int:
    """The GPU's streaming multiprocessors: how many programs run at once, in units of one a
    multiprocessor."""
    return torch.cuda.get_device_properties(device).multi_processor_count
