"""The Builder: creates ops at an insertion point, stamping each with the current location.

builder = Builder(location=FileLineColLoc("k.py", 3, 4))
with builder.at_end(body):
    total = builder.create(AddIOp, x, y).result
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from .block import Block
from .locations import Location, UnknownLoc
from .operation import Operation


class Builder:
    """An insertion point (a block, and `anchor`, the op to insert before; None: at the
    end) and a location. The context managers restore the previous point on exit."""

    __slots__ = ("anchor", "block", "location")

    def __init__(self, location: Location | None = None):
        self.block: Block | None = None
        self.anchor: Operation | None = None
        self.location: Location = location or UnknownLoc()

    def set_insertion_point(self, block: Block, anchor: Operation | None = None) -> None:
        """Insert into `block` before `anchor` (at the end when None)."""
        self.block = block
        self.anchor = anchor

    @contextmanager
    def at_end(self, block: Block) -> Iterator[Builder]:
        with self._moved(block, None):
            yield self

    @contextmanager
    def at_start(self, block: Block) -> Iterator[Builder]:
        with self._moved(block, block.first_op):
            yield self

    @contextmanager
    def before(self, op: Operation) -> Iterator[Builder]:
        with self._moved(op.parent, op):
            yield self

    @contextmanager
    def after(self, op: Operation) -> Iterator[Builder]:
        with self._moved(op.parent, op.next_op):
            yield self

    @contextmanager
    def at_location(self, location: Location) -> Iterator[Builder]:
        saved = self.location
        self.location = location
        try:
            yield self
        finally:
            self.location = saved

    @contextmanager
    def _moved(self, block: Block | None, anchor: Operation | None) -> Iterator[None]:
        if block is None:
            raise ValueError("the anchor op is in no block")
        saved = self.block, self.anchor
        self.block, self.anchor = block, anchor
        try:
            yield
        finally:
            self.block, self.anchor = saved

    def insert(self, op: Operation) -> Operation:
        """Insert a detached op at the insertion point."""
        if self.block is None:
            raise ValueError("the builder has no insertion point")
        if self.anchor is None:
            self.block.append(op)
        else:
            self.block.insert_before(op, self.anchor)
        return op

    def create(self, op_class: type[Operation], *args, **kwargs) -> Operation:
        """`op_class(*args, **kwargs)` at the current location, inserted."""
        kwargs.setdefault("location", self.location)
        return self.insert(op_class(*args, **kwargs))
