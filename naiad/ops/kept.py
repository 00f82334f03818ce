"""What an op prepares once per kind of call (a bound launch, a plan), kept in a bounded table.

A program calls each op in few kinds of call (shapes, strides, dtypes), so a table per op finds
a prepared launch on almost every call. One that keeps making new kinds would grow its table
without end, so a table that is full is forgotten whole before the next entry: those calls
prepare again, nothing else changes.
"""

from __future__ import annotations


class KeptTable(dict):
    """key -> what was prepared for it, at most `limit` entries (see the module doc). Reads
    are a dict's (`get`); `put` is the one way in."""

    def __init__(self, limit: int):
        super().__init__()
        self.limit = limit

    def put(self, key, value):
        """Keep `value` under `key` (forgetting every entry first when full); return it."""
        if len(self) >= self.limit:
            self.clear()
        self[key] = value
        return value


def tensor_kind(tensor):
    """What a plan depends on in a tensor that may be None (a weight, a bias): its dtype,
    device, shape and strides."""
    if tensor is None:
        return None
    return (tensor.dtype, tensor.device, tensor.shape, tensor.stride())
