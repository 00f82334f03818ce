"""The table of ATen overloads the library implements: name -> Naiad function.

Op modules fill it as they are imported (`@aten("add.Tensor", "add.out")` over a function with
the overloads' signature: positional arguments as the schema lists them, keyword-only ones and
`out` as keywords); the switch (switch.py) registers its entries with torch. An op's base name
("add" for "add.Tensor", "add_.Scalar" and "add.out"; "softmax" for "_softmax" and its backward)
is what `include=`/`exclude=` select by.

Overloads torch composes of others on every device (CompositeImplicitAutograd: `take_along_dim`
is a gather of broadcast operands) stay out of the table: a kernel the switch registered for
them would hide the composition's autograd, and the composition already reaches Naiad's pieces.
Their Naiad functions are `@composite`: direct calls still get a custom op (mirrors.py).
"""

from __future__ import annotations

__all__ = ["aten", "base_name", "composite", "every_function", "table"]

_TABLE: dict = {}
_COMPOSITES: dict = {}


def _registrar(into: dict, overloads):
    def decorate(fn):
        for name in overloads:
            if name in _TABLE or name in _COMPOSITES:
                raise ValueError(f"aten::{name} is implemented twice")
            into[name] = fn
        return fn

    return decorate


def aten(*overloads: str):
    """Register the decorated function as Naiad's implementation of each ATen overload."""
    return _registrar(_TABLE, overloads)


def composite(*overloads: str):
    """Register the decorated function as Naiad's version of each composite ATen overload: a
    custom op for direct calls, nothing for the switch."""
    return _registrar(_COMPOSITES, overloads)


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


def every_function() -> dict:
    """The switched and the composite overloads together, with their functions: what has a
    `torch.ops.naiad` twin and an entry point."""
    return {**_TABLE, **_COMPOSITES}
