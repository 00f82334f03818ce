"""The `builtin` dialect's op: `builtin.module`, and symbol lookup through symbol tables."""

from __future__ import annotations

from collections.abc import Iterable

from .attributes import StringAttr, SymbolRefAttr
from .block import Block, Region
from .locations import Location
from .opdef import irdl_op
from .operation import Operation
from .opfields import opt_attribute, region
from .traits import IsolatedFromAbove, NoTerminator, SingleBlock, SymbolTable


@irdl_op
class ModuleOp(Operation):
    """The top-level container: one block of ops (functions, globals), no terminator."""

    name = "builtin.module"
    traits = frozenset({IsolatedFromAbove, NoTerminator, SymbolTable, SingleBlock})
    sym_name = opt_attribute(StringAttr)
    body_region = region(single_block=True)

    def __init__(
        self,
        ops: Iterable[Operation] = (),
        sym_name: str | None = None,
        location: Location | None = None,
    ):
        name = None if sym_name is None else StringAttr(sym_name)
        super().__init__(sym_name=name, body_region=Region([Block()]), location=location)
        for op in ops:
            self.body.append(op)

    @property
    def body(self) -> Block:
        return self.regions[0].blocks[0]

    def lookup_symbol(self, name: str | SymbolRefAttr) -> Operation | None:
        return lookup_symbol(self, name)


def lookup_symbol(table: Operation, name: str | SymbolRefAttr) -> Operation | None:
    """The op named `name` among the direct children of symbol-table op `table`; a nested
    reference (`@outer::@inner`) descends through the named symbol tables."""
    path = (name,) if isinstance(name, str) else (name.root, *name.nested)
    op: Operation | None = table
    for part in path:
        op = _child_symbol(op, part) if op is not None else None
    return op


def _child_symbol(table: Operation, name: str) -> Operation | None:
    for body in table.regions:
        for block in body.blocks:
            for op in block:
                sym = op.attributes.get("sym_name")
                if sym is not None and sym.value == name:
                    return op
    return None
