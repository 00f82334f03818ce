"""The MLIR text printer: every op in its custom syntax (or MLIR's generic form), exactly as
upstream MLIR and Triton print it, locations as `loc(#locN)` with the aliases around the module.

    print_module(module)                       # as Triton's TTIR dumps
    print_module(module, generic=True)         # "tt.load"(%0) : (...) -> ... for every op
    print_module(module, locations=False)      # no loc(...) at all

An op prints through, in order: a syntax registered for its name (asm_syntax.py), its class's
`assembly_format` (format.py), else the generic form. Custom printers write to a `Printer`
with the methods below, named after MLIR's OpAsmPrinter.
"""

from __future__ import annotations

from . import builtin_syntax  # noqa: F401  (registers `module`)
from .asm_aliases import apply_aliases, merge_definitions
from .asm_locations import LocationAliases
from .asm_names import NameState
from .asm_syntax import argument_names_for, result_names_for, syntax_for
from .attributes import UnitAttr
from .format import groups_of
from .format_print import print_format
from .gc_pause import gc_paused
from .operation import UnregisteredOp
from .syntax import keyword_or_string, quote_string
from .traits import Terminator
from .types import FunctionType


def print_module(
    op,
    *,
    generic: bool = False,
    locations: bool = True,
    record: set | None = None,
    name_locations: bool = True,
) -> str:
    """The text of `op` (usually a ModuleOp) and, with `locations`, its location aliases.

    `record`, if given, receives every op and block argument whose location was printed: what
    a round trip through the text can preserve (an elided `scf.yield`, or the induction
    variable of `scf.for`, has no location in the text). Without `name_locations`, values
    are not named after their `NameLoc`s (`%c11_i32`, not `%scalar`): MLIR's default names,
    which Triton's `str_nodebug()` prints and FileCheck tests of its frontend match.
    """
    with gc_paused():
        printer = Printer(
            op,
            generic=generic,
            locations=locations,
            record=record,
            name_locations=name_locations,
        )
        printer.print_op(op)
        return printer.finish()


class _Inline:
    """An argument's location, spelled out (aliases are only known once printing ends)."""

    __slots__ = ("loc",)

    def __init__(self, loc):
        self.loc = loc


class Printer:
    """The text being printed, and what custom printers call to add to it."""

    def __init__(self, root, *, generic=False, locations=True, record=None, name_locations=True):
        self.root = root
        self.generic = generic
        self.locations = locations
        self.record = record
        self.indent = 0
        self.out: list = []
        self.names = NameState(
            root,
            None if generic else _result_names,
            name_locations=name_locations,
            unique=generic,
            argument_names=None if generic else _argument_names,
        )
        self.aliases = LocationAliases()
        self._default_dialects = ["builtin"]
        self._predecessors: dict = {}

    def finish(self) -> str:
        """The whole text: attribute aliases (asm_aliases.py), location aliases that must
        come first, the op, the other location aliases after it."""
        if not self.locations:
            attribute_aliases, text = apply_aliases(self.root, "".join(self.out))
            return merge_definitions(attribute_aliases, []) + text + "\n"
        aliases = self.aliases
        ordered = aliases.assign_names()
        rendered: dict = {}
        parts = []
        for chunk in self.out:
            if type(chunk) is str:
                parts.append(chunk)
            elif type(chunk) is _Inline:
                parts.append(aliases.inline(chunk.loc))
            else:
                text = rendered.get(chunk)
                if text is None:
                    text = rendered[chunk] = aliases.reference(chunk)
                parts.append(text)
        attribute_aliases, text = apply_aliases(self.root, "".join(parts))
        before = merge_definitions(attribute_aliases, aliases.definitions(ordered, False))
        after = "".join(line for _, line in aliases.definitions(ordered, True))
        return before + text + "\n" + after

    # -- what custom printers call

    def write(self, text: str) -> None:
        self.out.append(text)

    def value(self, v) -> str:
        """The text of a use of `v` (`%x`, `%3`, `%x#1`)."""
        ref = self.names.refs.get(v)
        return "<<UNKNOWN SSA VALUE>>" if ref is None else ref

    def print_operand(self, v) -> None:
        self.out.append(self.value(v))

    def print_operands(self, values) -> None:
        self.out.append(", ".join(map(self.value, values)))

    def print_type(self, t) -> None:
        self.out.append(str(t))

    def print_types(self, types) -> None:
        self.out.append(", ".join(map(str, types)))

    def print_attribute(self, attr) -> None:
        self.out.append(str(attr))

    def print_symbol_name(self, name: str) -> None:
        self.out.append("@" + keyword_or_string(name))

    def print_successor(self, block) -> None:
        self.out.append(self.names.block_names.get(block, "^INVALIDBLOCK"))

    def print_functional_type(self, inputs, results) -> None:
        """`(i32, f32) -> f32`, results parenthesized unless there is exactly one."""
        self.out.append(functional_type(inputs, results))

    def print_optional_attr_dict(self, attributes: dict, elided=(), keyword=False) -> None:
        """` {a = 1 : i32, flag}` (sorted by name) if anything is left after `elided`."""
        names = sorted(k for k in attributes if k not in elided)
        if not names:
            return
        entries = ", ".join(_named_attribute(k, attributes[k]) for k in names)
        self.out.append(f" attributes {{{entries}}}" if keyword else f" {{{entries}}}")

    def print_region_argument(self, arg, attributes: dict | None = None) -> None:
        """`%x: type {attrs} loc(...)`: a function's argument."""
        self.out.append(f"{self.value(arg)}: {arg.type}")
        if attributes:
            self.print_optional_attr_dict(attributes)
        self._argument_location(arg)

    def print_region(
        self, region, print_entry_args=True, print_terminators=True, print_empty_block=False
    ) -> None:
        """`{`, the blocks (the entry block's label only when it must be shown), `}`."""
        out = self.out
        out.append("{\n")
        blocks = region.blocks
        if blocks:
            syntax = syntax_for(region.parent.name) if region.parent is not None else None
            self._default_dialects.append(getattr(syntax, "default_dialect", ""))
            entry = blocks[0]
            header = (print_empty_block and entry.is_empty) or (
                print_entry_args and bool(entry.arguments)
            )
            self._print_block(entry, header, print_terminators)
            for block in blocks[1:]:
                self._print_block(block, True, True)
            self._default_dialects.pop()
        out.append(" " * self.indent + "}")

    # -- ops

    def print_op(self, op) -> None:
        """One op, from its results to its location (the caller writes the indentation)."""
        out = self.out
        locations = self.locations
        if op.results:
            out.append(self.names.result_texts[op])
            out.append(" = ")
        if locations:
            self.aliases.visit(op.location)
        if self.generic or not self._print_custom(op):
            self.print_generic(op)
        if locations:
            out.append(" ")
            out.append(op.location)
            if self.record is not None:
                self.record.add(op)

    def _print_custom(self, op) -> bool:
        name = op.name
        syntax = syntax_for(name)
        method = getattr(op, "print_custom", None)
        if (
            syntax is None
            and method is None
            and (op.assembly_format is None or type(op) is UnregisteredOp)
        ):
            return False
        default = self._default_dialects[-1]
        if default and name.startswith(default + ".") and name.count(".") == 1:
            name = name[len(default) + 1 :]
        self.out.append(name)
        if syntax is not None:
            syntax.print(op, self)
        elif method is not None:
            method(self)
        else:
            print_format(op, self)
        return True

    def print_generic(self, op) -> None:
        """`"name"(%a, %b)[^bb1] <{props}> ({regions}) {attrs} : (types) -> types`."""
        out = self.out
        value = self.value
        out.append(f"{quote_string(op.name)}({', '.join(value(v) for v in op.operands)})")
        if op.successors:
            block_names = self.names.block_names
            out.append(f"[{', '.join(block_names.get(b, '^INVALIDBLOCK') for b in op.successors)}]")
        inherent = op._op_def.inherent_attributes if op._op_def is not None else ()
        properties = sorted(k for k in op.attributes if k in inherent)
        if properties:
            props = ", ".join(_named_attribute(k, op.attributes[k]) for k in properties)
            out.append(f" <{{{props}}}>")
        if op.regions:
            out.append(" (")
            for i, region in enumerate(op.regions):
                if i:
                    out.append(", ")
                self.print_region(region, True, True, print_empty_block=True)
            out.append(")")
        self.print_optional_attr_dict(op.attributes, elided=properties)
        out.append(" : ")
        out.append(functional_type([v.type for v in op.operands], [r.type for r in op.results]))

    # -- blocks

    def _print_block(self, block, print_header: bool, print_terminator: bool) -> None:
        out = self.out
        if print_header:
            out.append(" " * self.indent + self.names.block_names[block])
            if block.arguments:
                out.append("(")
                for i, arg in enumerate(block.arguments):
                    if i:
                        out.append(", ")
                    out.append(f"{self.value(arg)}: {arg.type}")
                    self._argument_location(arg)
                out.append(")")
            out.append(":" + self._predecessor_comment(block) + "\n")
        self.indent += 2
        pad = " " * self.indent
        last = block.last_op
        skip = None
        if not print_terminator and last is not None and Terminator in last.traits:
            skip = last
        for op in block:
            if op is skip:
                break
            out.append(pad)
            self.print_op(op)
            out.append("\n")
        self.indent -= 2

    def _argument_location(self, arg) -> None:
        if self.locations:
            self.aliases.visit(arg.location, deferrable=False)
            self.out.append(" ")
            self.out.append(_Inline(arg.location))
            if self.record is not None:
                self.record.add(arg)

    def _predecessor_comment(self, block) -> str:
        region = block.parent
        preds = self._predecessors.get(region)
        if preds is None:
            preds = self._predecessors[region] = {}
            for b in region.blocks:
                last = b.last_op
                if last is not None:
                    for s in last.successors:
                        preds.setdefault(s, []).append(b)
        found = preds.get(block, ())
        names = self.names
        if not found:
            return "" if block is region.blocks[0] else "  // no predecessors"
        if all(p is found[0] for p in found):
            return f"  // pred: {names.block_names[found[0]]}"
        found = sorted(found, key=names.block_order.__getitem__)
        listed = ", ".join(names.block_names[p] for p in found)
        return f"  // {len(found)} preds: {listed}"


def functional_type(inputs, results) -> str:
    """`(i32, f32) -> f32`; several results (or none, or a function type) parenthesized."""
    text = f"({', '.join(map(str, inputs))}) -> "
    if len(results) == 1 and not isinstance(results[0], FunctionType):
        return text + str(results[0])
    return text + f"({', '.join(map(str, results))})"


def _named_attribute(name: str, value) -> str:
    key = keyword_or_string(name)
    return key if type(value) is UnitAttr else f"{key} = {value}"


def _argument_names(region):
    """MLIR's getAsmBlockArgumentNames: names for the arguments of `region`'s blocks that the
    syntax of the op holding it gives (`%in`, `%out`), as [(argument, name)]."""
    op = region.parent
    hook = None if op is None else argument_names_for(op.name)
    return None if hook is None else hook(op, region)


def _result_names(op):
    """MLIR's getAsmResultNames: a syntax's `result_names`, else, as mlir-tblgen generates
    for an op declaring several results, each result group named after its field."""
    hook = result_names_for(op.name)
    if hook is not None:
        return hook(op)
    op_def = op._op_def
    if op_def is None or len(op_def.results) < 2 or not op.results:
        return None
    groups = groups_of(op, op_def.result_segments, op.results)
    return [(group[0].index, d.name) for d, group in zip(op_def.results, groups) if group]
