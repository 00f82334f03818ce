"""Indexing and data movement: index_select, gather, take_along_dim (select.py), cat and stack
(concat.py)."""

from .concat import cat, stack
from .select import gather, index_select, take_along_dim

__all__ = ["cat", "gather", "index_select", "stack", "take_along_dim"]
