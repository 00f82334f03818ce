"""Indexing and data movement: index_select, gather, take_along_dim (select.py), cat and stack
(concat.py), triu and tril (triangle.py)."""

from .concat import cat, stack
from .select import gather, index_select, take_along_dim
from .triangle import tril, triu

__all__ = ["cat", "gather", "index_select", "stack", "take_along_dim", "tril", "triu"]
