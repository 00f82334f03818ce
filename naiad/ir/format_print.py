"""Printing by a declarative assembly format (format.py compiles it), with the spacing rules
of the printers mlir-tblgen generates (OpFormatGen's shouldEmitSpace / lastWasPunctuation):
a space before an element unless it is punctuation that hugs its neighbour (`,` `)` `]` `>` ...),
none after an opening bracket, none around `` `` ``.
"""

from __future__ import annotations

from .format import (
    FormatError,
    attribute_present,
    attribute_text,
    compiled_format,
    groups_of,
    type_text,
)
from .opfields import SINGLE, OperandDef, ResultDef


class _Spacing:
    """The generated printer's two flags: whether to emit a space, whether the last thing
    printed was punctuation (OpFormatGen's shouldEmitSpace / lastWasPunctuation)."""

    __slots__ = ("last_punct", "space")

    def __init__(self):
        self.space = True
        self.last_punct = False


def _space_before(value: str, last_punct: bool) -> bool:
    if len(value) != 1 and value != "->":
        return True
    if last_punct:
        return value[0] not in ">)}],"
    return value[0] not in "<>(){}[],"


def print_format(op, printer) -> None:
    """Print `op`'s operands, attributes, types, ... after its name, per its format."""
    cls = type(op)
    elements = compiled_format(cls)
    context = _PrintContext(op, printer)
    spacing = _Spacing()
    for element in elements:
        context.element(element, spacing)


class _PrintContext:
    __slots__ = ("_operands", "_results", "op", "printer", "used")

    def __init__(self, op, printer):
        self.op = op
        self.printer = printer
        op_def = op._op_def
        self._operands = groups_of(op, op_def.operand_segments, op._operands)
        self._results = None
        self.used = _used_attributes(type(op))

    def operand_group(self, d: OperandDef) -> tuple:
        return self._operands[self.op._op_def.operands.index(d)]

    def result_group(self, d: ResultDef) -> tuple:
        if self._results is None:
            op = self.op
            self._results = groups_of(op, op._op_def.result_segments, op.results)
        return self._results[self.op._op_def.results.index(d)]

    def _write_literal(self, value: str, spacing: _Spacing) -> None:
        if spacing.space and _space_before(value, spacing.last_punct):
            self.printer.write(" " + value)
        else:
            self.printer.write(value)
        spacing.space = len(value) != 1 or value[0] not in "<({["
        spacing.last_punct = value[0] != "_" and not value[0].isalpha()

    def _lead(self, spacing: _Spacing) -> None:
        if spacing.space or not spacing.last_punct:
            self.printer.write(" ")
        spacing.last_punct = False
        spacing.space = True

    def element(self, element, spacing: _Spacing) -> None:
        kind = element[0]
        if kind == "lit":
            self._write_literal(element[1], spacing)
        elif kind == "space":
            if element[1] == " ":
                self.printer.write(" ")
                spacing.last_punct = False
            elif element[1] == "":
                spacing.last_punct = True
            spacing.space = False
        elif kind == "optional":
            self._optional(element, spacing)
        elif kind == "oilist":
            self._oilist(element, spacing)
        elif kind == "attr_dict":
            op = self.op
            self.printer.print_optional_attr_dict(
                op.attributes, elided=_elided(op, self.used), keyword=element[1]
            )
            spacing.last_punct = False
        else:
            self._lead(spacing)
            self._value(element)

    def _value(self, element) -> None:
        kind = element[0]
        printer = self.printer
        op = self.op
        if kind == "operand":
            printer.print_operands(self.operand_group(element[1]))
        elif kind == "attr":
            d = element[1]
            printer.write(attribute_text(d, op.attributes[d.name]))
        elif kind == "qualified_attr":
            printer.write(str(op.attributes[element[1][1].name]))
        elif kind == "type":
            printer.write(", ".join(self._type_texts(element[1], element[2])))
        elif kind == "functional":
            inputs = self._types(element[1])
            results = self._types(element[2])
            printer.print_functional_type(inputs, results)
        elif kind == "region":
            printer.print_region(op.regions[element[1]])
        elif kind == "successor":
            printer.print_successor(op.successors[element[1]])
        elif kind == "operands":
            printer.print_operands(op.operands)
        elif kind == "regions":
            for i, region in enumerate(op.regions):
                if i:
                    printer.write(", ")
                printer.print_region(region)
        elif kind == "successors":
            printer.write(", ".join(printer.names.block_names[b] for b in op.successors))
        else:
            raise FormatError(f"{op.name}: cannot print format element {kind}")

    def _types(self, arg) -> list:
        if arg[0] == "operands":
            return [v.type for v in self.op.operands]
        if arg[0] == "results":
            return [r.type for r in self.op.results]
        group = self.operand_group(arg[1]) if arg[0] == "operand" else self.result_group(arg[1])
        return [v.type for v in group]

    def _type_texts(self, arg, qualified: bool) -> list[str]:
        if arg[0] in ("operands", "results"):
            return [str(t) for t in self._types(arg)]
        if arg[1].kind == SINGLE:
            return [type_text(arg, t, qualified) for t in self._types(arg)]
        return [str(t) for t in self._types(arg)]

    def _anchor_present(self, anchor) -> bool:
        kind = anchor[0]
        op = self.op
        if kind == "operand":
            return bool(self.operand_group(anchor[1]))
        if kind == "attr":
            return attribute_present(op, anchor[1])
        if kind == "type":
            arg = anchor[1]
            if arg[0] in ("operands", "results"):
                return bool(self._types(arg))
            return bool(self._types(arg))
        if kind == "region":
            return bool(op.regions[anchor[1]].blocks)
        if kind == "result":
            return bool(self.result_group(anchor[1]))
        raise FormatError(f"{op.name}: unsupported optional-group anchor {kind}")

    def _optional(self, element, spacing: _Spacing) -> None:
        _, then, orelse, anchor, elided = element
        chosen = then if self._anchor_present(anchor) else orelse
        for child in chosen:
            if child is not elided:
                self.element(child, spacing)

    def _oilist(self, element, spacing: _Spacing) -> None:
        for literal, children in element[1]:
            attrs = [c[1] for c in children if c[0] == "attr"]
            operands = [c[1] for c in children if c[0] == "operand"]
            present = any(attribute_present(self.op, d) for d in attrs) or any(
                self.operand_group(d) for d in operands
            )
            if present:
                self._write_literal(literal, spacing)
                for child in children:
                    self.element(child, spacing)


def _used_attributes(cls) -> frozenset:
    """Names attr-dict leaves out: attributes the format spells, and segment sizes."""
    used = cls.__dict__.get("_format_attributes")
    if used is None:
        names = set()
        _collect_attributes(compiled_format(cls), names)
        op_def = cls._op_def
        for segments in (op_def.operand_segments, op_def.result_segments):
            if segments.sized:
                names.add(segments.attr_name)
        used = frozenset(names)
        cls._format_attributes = used
    return used


def _collect_attributes(elements, names: set) -> None:
    for e in elements:
        if e[0] == "attr":
            names.add(e[1].name)
        elif e[0] == "qualified_attr":
            names.add(e[1][1].name)
        elif e[0] == "optional":
            _collect_attributes(e[1], names)
            _collect_attributes(e[2], names)
        elif e[0] == "oilist":
            for _, children in e[1]:
                _collect_attributes(children, names)


def _elided(op, used: frozenset):
    """`used`, plus the attributes that hold their declared default."""
    defaults = getattr(type(op), "attribute_defaults", None)
    if not defaults:
        return used
    extra = {name for name, value in defaults.items() if op.attributes.get(name) is value}
    return used | extra if extra else used
