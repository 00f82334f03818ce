"""Pieces the custom syntaxes share."""

from __future__ import annotations

from ...ir import Terminator, create_operation


def ensure_terminator(region, name: str, location) -> None:
    """MLIR's ensureTerminator: give a region a block, and the block `name` (an operand-less
    terminator such as `scf.yield`) if it does not end in a terminator. The printer leaves
    such a terminator out; the parser puts it back with the op's position in the text."""
    if not region.blocks:
        region.add_block()
    block = region.blocks[0]
    last = block.last_op
    if last is None or Terminator not in last.traits:
        block.append(create_operation(name, location=location))


def print_initialization_list(printer, arguments, initializers, prefix: str) -> None:
    """` iter_args(%a = %x, %b = %y)` (nothing when empty), as SCF prints it."""
    if not initializers:
        return
    pairs = ", ".join(
        f"{printer.value(arg)} = {printer.value(init)}"
        for arg, init in zip(arguments, initializers)
    )
    printer.write(f"{prefix}({pairs})")
