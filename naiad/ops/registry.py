"""The table of ATen overloads the library implements: name -> Naiad function.

Op modules fill it as they are imported (`@aten("add.Tensor", "add.out")` over a function with
the overloads' signature: positional arguments as the schema lists them, keyword-only ones and
`out` as keywords); the switch (switch.py) registers its entries with torch. An op's base name
("add" for "add.Tensor", "add_.Scalar" and "add.out"; "softmax" for "_softmax" and its backward)
is what `include=`/`exclude=` select by.
"""

from __future__ import annotations

__all__ = ["aten", "base_name", "table"]

_TABLE: dict = {}


def aten(*overloads: str):
    """Register the decorated function as Naiad's implementation of each ATen overload."""

    def decorate(fn):
        for name in overloads:
            if name in _TABLE:
                raise ValueError(f"aten::{name} is implemented twice")
            _TABLE[name] = fn
        return fn

    return decorate


def base_name(overload: str) -> str:
    """The op an overload belongs to, as users name it: 'add' for 'add.Tensor', 'add_.Scalar'
    and 'add.out'; 'softmax' for '_softmax' and '_softmax_backward_data'; 'layer_norm' for
    'native_layer_norm' and its backward; 'to_copy' for '_to_copy'."""
    op = overload.split(".")[0].lstrip("_").removeprefix("native_")
    op = op.removesuffix("_backward_data").removesuffix("_backward")
    return op[:-1] if op.endswith("_") else op


def table() -> dict:
    """Every overload Naiad implements, with its function."""
    return dict(_TABLE)
