"""The condition of an `if` statement that is a one-element block, read as its element.

`tl.load(x + tl.arange(0, 1)) > 42` is a block of shape [1], not a scalar. Triton accepts it as
the condition of an `if` statement, with a warning, and branches on its one element; so do the
frontend (control_flow.py) and the interpreter's rewrite (rewrite.py), both through this module.
Only `if` statements do: the condition of a `while` or of `a if c else b` must be a scalar, as
in Triton's compiler. A block of more elements stays an error.
"""

from __future__ import annotations

from . import core


def if_condition(cond, semantic, warn):
    """`cond` as an `if` statement branches on it: a one-element block becomes its element
    (`warn` is called with the reason first), anything else is returned as it is."""
    if not isinstance(cond, core.tensor) or not cond.type.is_block() or cond.type.numel != 1:
        return cond
    warn(
        f"the condition of `if` is a block of shape {list(cond.type.shape)}; its one element "
        "is used (write `if cond.item():` to say so)"
    )
    return semantic.item(cond)
