"""Making `ttg.convert_layout` ops where a TTGIR pass needs a value in another layout.

A conversion is placed right after the value's definition (at the start of its block for a
block argument), so it dominates every use the pass may give it, and one conversion serves
every request for the same value and layout.
"""

from __future__ import annotations

from ....dialects import ttg
from ....ir import Value
from .layout_inference import with_encoding


def insert_after_definition(op, value: Value) -> None:
    """Put `op` right after the op defining `value`, or first in its block."""
    owner = value.defining_op
    if owner is not None:
        owner.parent.insert_after(op, owner)
    else:
        value.owner.prepend(op)


class Converts:
    """A cache of conversions: `as_encoding(value, encoding)` gives `value` in `encoding`,
    converting it once."""

    def __init__(self):
        self._made: dict[tuple[Value, object], Value] = {}

    def as_encoding(self, value: Value, encoding) -> Value:
        t = value.type
        if t.encoding is encoding:
            return value
        key = (value, encoding)
        made = self._made.get(key)
        if made is None:
            op = ttg.ConvertLayoutOp(
                value, result=with_encoding(t, encoding), location=_location(value)
            )
            insert_after_definition(op, value)
            made = self._made[key] = op.result
        return made


def _location(value: Value):
    owner = value.defining_op
    return owner.location if owner is not None else value.location
