"""The key of naiad.ops' per-device tables (tiles, block sizes, the kernels a device takes)."""

from __future__ import annotations

import torch

__all__ = ["device_kind"]


def device_kind(device: torch.device) -> str:
    """ "cpu", or "cuda" for a GPU."""
    return "cpu" if device.type == "cpu" else "cuda"
