"""Indexing and data movement: index_select, gather, take_along_dim (select.py), scatter,
scatter_add and index_add (scatter.py), cat and stack (concat.py), triu and tril (triangle.py),
flip (flip.py), repeat (repeat.py), sort, argsort and topk (sort.py), nonzero and unique
(compaction.py), unique along a dim and unique_consecutive (unique_dim.py)."""

from .compaction import nonzero, unique
from .concat import cat, stack
from .flip import flip
from .repeat import repeat
from .scatter import index_add, scatter, scatter_add
from .select import gather, index_select, take_along_dim
from .sort import argsort, sort, topk
from .triangle import tril, triu
from .unique_dim import unique_consecutive, unique_dim, unique_dim_consecutive

__all__ = [
    "argsort",
    "cat",
    "flip",
    "gather",
    "index_add",
    "index_select",
    "nonzero",
    "repeat",
    "scatter",
    "scatter_add",
    "sort",
    "stack",
    "take_along_dim",
    "topk",
    "tril",
    "triu",
    "unique",
    "unique_consecutive",
    "unique_dim",
    "unique_dim_consecutive",
]
