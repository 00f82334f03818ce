"""SSA values and their use-lists.

A value's uses live in a dict keyed by `(user_op, operand_index)`: adding or removing one use is
O(1), iteration follows insertion order (so rewrites are deterministic), and
`replace_all_uses_with` moves every key to the new value in O(uses), reusing the key tuples.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .block import Block
    from .locations import Location
    from .operation import Operation
    from .types import Type

Use = tuple  # (owner: Operation, operand_index: int); a plain tuple, the cheapest key there is


class Value:
    """An SSA value: a type and the set of operands that read it."""

    __slots__ = ("_uses", "type")
    type: Type
    _uses: dict[Use, None]

    @property
    def uses(self) -> tuple[Use, ...]:
        """The `(owner_op, operand_index)` pairs that read this value (a snapshot)."""
        return tuple(self._uses)

    @property
    def has_uses(self) -> bool:
        return bool(self._uses)

    @property
    def has_one_use(self) -> bool:
        return len(self._uses) == 1

    @property
    def use_count(self) -> int:
        return len(self._uses)

    @property
    def users(self) -> list[Operation]:
        """The distinct ops that read this value, in use order."""
        return list(dict.fromkeys(op for op, _ in self._uses))

    @property
    def defining_op(self) -> Operation | None:
        """The op whose result this is; None for a block argument."""
        return None

    @property
    def parent_block(self) -> Block | None:
        raise NotImplementedError

    def replace_all_uses_with(self, new: Value) -> None:
        """Make every reader of this value read `new` instead."""
        if new is self:
            return
        new_uses = new._uses
        for key in self._uses:
            key[0]._replace_operand_raw(key[1], new)
            new_uses[key] = None
        self._uses.clear()

    def replace_uses_where(self, new: Value, predicate: Callable[[Operation, int], bool]) -> None:
        """Replace the uses for which `predicate(owner_op, operand_index)` holds."""
        if new is self:
            return
        for key in [k for k in self._uses if predicate(k[0], k[1])]:
            key[0].set_operand(key[1], new)


class OpResult(Value):
    """Result number `index` of `owner`."""

    __slots__ = ("index", "owner")
    owner: Operation
    index: int

    def __init__(self, type: Type, owner: Operation, index: int):
        self.type = type
        self._uses = {}
        self.owner = owner
        self.index = index

    @property
    def defining_op(self) -> Operation:
        return self.owner

    @property
    def parent_block(self) -> Block | None:
        return self.owner.parent

    def __repr__(self) -> str:
        return f"<result #{self.index} of {self.owner.name}: {self.type}>"


class BlockArgument(Value):
    """Argument number `index` of block `owner`, with the location of what it stands for."""

    __slots__ = ("index", "location", "owner")
    owner: Block
    index: int
    location: Location

    def __init__(self, type: Type, owner: Block, index: int, location: Location):
        self.type = type
        self._uses = {}
        self.owner = owner
        self.index = index
        self.location = location

    @property
    def parent_block(self) -> Block:
        return self.owner

    def __repr__(self) -> str:
        return f"<block argument #{self.index}: {self.type}>"
