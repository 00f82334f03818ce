"""The table of ATen overloads the library implements: name -> Naiad function.

Op modules fill it as they are imported (`@aten("add.Tensor", "add.out")` over a function with
the overloads' signature: positional arguments as the schema lists them, keyword-only ones and
`out` as keywords); the switch (switch.py) registers its entries with torch. An op's base name
("add" for "add.Tensor", "add_.Scalar" and "add.out") is what `include=`/`exclude=` select by.
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
    """'add' for 'add.Tensor', 'add_.Scalar' and 'add.out'; '_to_copy' stays itself."""
    op = overload.split(".")[0]
    return op[:-1] if op.endswith("_") and not op.endswith("__") else op


def table() -> dict:
    """Every overload Naiad implements, with its function."""
    return dict(_TABLE)
