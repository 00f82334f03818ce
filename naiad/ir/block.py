"""Blocks (a list of arguments and a doubly linked list of ops) and regions (a list of blocks)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from .locations import Location, UnknownLoc
from .traits import Terminator
from .values import BlockArgument

if TYPE_CHECKING:
    from .operation import Operation
    from .types import Type


class Block:
    """A basic block. Ops form a doubly linked list: insertion and removal are O(1), and
    iterating is safe against erasing (or moving) the op just yielded."""

    __slots__ = ("_count", "_first", "_last", "arguments", "parent")
    arguments: tuple[BlockArgument, ...]
    parent: Region | None

    def __init__(self, arg_types: Iterable[Type] = (), arg_locations: Iterable[Location] = ()):
        self.arguments = ()
        self.parent = None
        self._first: Operation | None = None
        self._last: Operation | None = None
        self._count = 0
        locations = list(arg_locations)
        for i, t in enumerate(arg_types):
            self.add_argument(t, locations[i] if i < len(locations) else None)

    # -- arguments

    def add_argument(self, type: Type, location: Location | None = None) -> BlockArgument:
        arg = BlockArgument(type, self, len(self.arguments), location or UnknownLoc())
        self.arguments = (*self.arguments, arg)
        return arg

    def insert_argument(
        self, index: int, type: Type, location: Location | None = None
    ) -> BlockArgument:
        arg = BlockArgument(type, self, index, location or UnknownLoc())
        self.arguments = (*self.arguments[:index], arg, *self.arguments[index:])
        self._renumber_arguments(index + 1)
        return arg

    def erase_argument(self, index: int) -> None:
        """Remove argument `index`; it must have no uses (callers rewire branches themselves)."""
        arg = self.arguments[index]
        if arg._uses:
            raise ValueError(f"cannot erase block argument #{index}: it still has uses")
        self.arguments = self.arguments[:index] + self.arguments[index + 1 :]
        self._renumber_arguments(index)

    def _renumber_arguments(self, start: int) -> None:
        for i in range(start, len(self.arguments)):
            self.arguments[i].index = i

    # -- ops

    def __iter__(self) -> Iterator[Operation]:
        op = self._first
        while op is not None:
            following = op._next  # read before yielding: the caller may erase `op`
            yield op
            op = following

    def __reversed__(self) -> Iterator[Operation]:
        op = self._last
        while op is not None:
            preceding = op._prev
            yield op
            op = preceding

    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        # A block is an object, not a container test: `if op.parent:` must not depend on size.
        return True

    @property
    def ops(self) -> list[Operation]:
        """A snapshot of the ops, in order."""
        return list(self)

    @property
    def first_op(self) -> Operation | None:
        return self._first

    @property
    def last_op(self) -> Operation | None:
        return self._last

    @property
    def is_empty(self) -> bool:
        return self._first is None

    @property
    def terminator(self) -> Operation | None:
        """The last op if it is a terminator, else None."""
        last = self._last
        return last if last is not None and Terminator in last.traits else None

    @property
    def successors(self) -> tuple[Block, ...]:
        """The blocks the terminator may branch to."""
        return () if self._last is None else self._last.successors

    def append(self, op: Operation) -> Operation:
        self._link(op, self._last, None)
        return op

    def prepend(self, op: Operation) -> Operation:
        self._link(op, None, self._first)
        return op

    def insert_before(self, op: Operation, anchor: Operation) -> Operation:
        self._check_anchor(anchor)
        self._link(op, anchor._prev, anchor)
        return op

    def insert_after(self, op: Operation, anchor: Operation) -> Operation:
        self._check_anchor(anchor)
        self._link(op, anchor, anchor._next)
        return op

    def _check_anchor(self, anchor: Operation) -> None:
        if anchor.parent is not self:
            raise ValueError(f"'{anchor.name}' is not in this block")

    def _link(self, op: Operation, prev: Operation | None, following: Operation | None) -> None:
        if op.parent is not None:
            raise ValueError(f"'{op.name}' is already in a block; detach it first")
        op.parent = self
        op._prev = prev
        op._next = following
        if prev is None:
            self._first = op
        else:
            prev._next = op
        if following is None:
            self._last = op
        else:
            following._prev = op
        self._count += 1

    def _unlink(self, op: Operation) -> None:
        prev, following = op._prev, op._next
        if prev is None:
            self._first = following
        else:
            prev._next = following
        if following is None:
            self._last = prev
        else:
            following._prev = prev
        op._prev = op._next = op.parent = None
        self._count -= 1

    # -- place in the tree

    def parent_op(self) -> Operation | None:
        return None if self.parent is None else self.parent.parent

    def erase(self) -> None:
        """Remove this block from its region and drop every reference its ops hold."""
        if self.parent is not None:
            self.parent.blocks.remove(self)
            self.parent = None
        for op in reversed(self):
            op._drop_all_references()

    def __repr__(self) -> str:
        args = ", ".join(str(a.type) for a in self.arguments)
        return f"<block ({args}) with {self._count} ops>"


class Region:
    """A list of blocks owned by an op (`parent`)."""

    __slots__ = ("blocks", "parent")
    blocks: list[Block]
    parent: Operation | None

    def __init__(self, blocks: Iterable[Block] = ()):
        self.blocks = []
        self.parent = None
        for block in blocks:
            self.add_block(block)

    def add_block(self, block: Block | None = None) -> Block:
        """Append `block` (a new empty one by default) and return it."""
        return self.insert_block(len(self.blocks), block)

    def insert_block(self, index: int, block: Block | None = None) -> Block:
        block = Block() if block is None else block
        if block.parent is not None:
            raise ValueError("block is already in a region")
        block.parent = self
        self.blocks.insert(index, block)
        return block

    @property
    def block(self) -> Block:
        """The only block of a single-block region."""
        if len(self.blocks) != 1:
            raise ValueError(f"expected a region with one block, found {len(self.blocks)}")
        return self.blocks[0]

    @property
    def entry_block(self) -> Block | None:
        return self.blocks[0] if self.blocks else None

    @property
    def is_empty(self) -> bool:
        return not self.blocks

    def parent_op(self) -> Operation | None:
        return self.parent

    def walk(self, post_order: bool = False) -> Iterator[Operation]:
        """Every op of the region and of its nested regions (see Operation.walk)."""
        for block in tuple(self.blocks):
            for op in block:
                if op.regions:
                    yield from op.walk(post_order)
                else:
                    yield op

    def take_body(self, other: Region) -> None:
        """Move every block of `other` to the end of this region (inlining a body)."""
        for block in other.blocks:
            block.parent = self
        self.blocks.extend(other.blocks)
        other.blocks = []

    def clone_into(self, dest: Region, mapping: dict) -> None:
        """Append copies of this region's blocks to `dest`. `mapping` (values and blocks) says
        what outer values become, and learns the copies of everything cloned."""
        new_blocks = []
        for block in self.blocks:
            copy = dest.add_block()
            for arg in block.arguments:
                mapping[arg] = copy.add_argument(arg.type, arg.location)
            mapping[block] = copy
            new_blocks.append(copy)
        for block, copy in zip(self.blocks, new_blocks):
            for op in block:
                copy.append(op.clone(mapping))
        if len(new_blocks) > 1:
            _remap_forward_references(new_blocks, mapping)

    def __repr__(self) -> str:
        return f"<region with {len(self.blocks)} blocks>"


def _remap_forward_references(blocks: list[Block], mapping: dict) -> None:
    """In a CFG region a block may use a value defined in a block listed after it; such an
    operand was cloned before its definition was, so point it at the copy now."""
    for block in blocks:
        for root in block:
            for op in root.walk():
                for i, value in enumerate(op.operands):
                    copy = mapping.get(value)
                    if copy is not None and copy is not value:
                        op.set_operand(i, copy)
