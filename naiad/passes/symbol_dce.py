"""`symbol-dce`: erase private symbols (functions) that nothing in the module references.

After inlining, the callees of a kernel are private `tt.func`s nobody calls any more. A symbol is
referenced when a `SymbolRefAttr` anywhere in the module names it; public symbols (the kernel
itself) are always kept.

    tt.func public @kernel() { tt.return }        tt.func public @kernel() { tt.return }
    tt.func private @helper() { tt.return }  ==>
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import (
    ArrayAttr,
    DictionaryAttr,
    Operation,
    StringAttr,
    Symbol,
    SymbolRefAttr,
    register_pass,
)
from ..ir.passes import Pass


def _referenced(attribute, names: set) -> None:
    if isinstance(attribute, SymbolRefAttr):
        names.add(attribute.root)
    elif isinstance(attribute, ArrayAttr):
        for item in attribute:
            _referenced(item, names)
    elif isinstance(attribute, DictionaryAttr):
        for _, item in attribute.items:
            _referenced(item, names)


def _is_private(op: Operation) -> bool:
    visibility = op.attributes.get("sym_visibility")
    return isinstance(visibility, StringAttr) and visibility.value == "private"


@register_pass("symbol-dce")
@dataclass(frozen=True)
class SymbolDCE(Pass):
    """Erase unreferenced private symbols until none is left."""

    def run(self, module: Operation) -> None:
        while True:
            names: set = set()
            for op in module.walk():
                for attribute in op.attributes.values():
                    _referenced(attribute, names)
            dead = [
                op
                for block in module.regions[0].blocks
                for op in block
                if Symbol in op.traits and _is_private(op) and self._name(op) not in names
            ]
            if not dead:
                return
            for op in dead:
                op.erase(force=True)

    @staticmethod
    def _name(op: Operation) -> str:
        return op.attributes["sym_name"].value
