"""MLIR's declarative assembly format, interpreted: an op's `assembly_format` string (as in its
upstream .td file) is compiled once into elements, then printed (format_print.py) and parsed
(format_parse.py) as the C++ that mlir-tblgen generates from it would.

Directives: `$operand` `$attribute` `$region` `$successor`, `attr-dict`,
`attr-dict-with-keyword`, `type(...)`, `qualified(...)`, `functional-type(a, b)`, `operands`,
`results`, `regions`, `successors`, literals in backticks (`` `,` ``; `` ` ` `` a space,
`` `` `` none), optional groups `( ... $anchor^ ... )?` with an optional else branch
`( ... ) : ( ... )?`, and `oilist(`kw` ... | `kw` ... )`.

How an attribute variable is spelled follows from its field's constraint, with the dialects'
conventions (naiad/dialects/base.py): an enum (a constraint with `keyword` / `parse_keyword`, as
`EnumAttr`) by its keyword (`slt`, `acq_rel`); an integer of a type ODS can build (I32Attr) by
its value alone; a dense i32 array as `[1, 2]`; a dialect attribute of the one class the
constraint names without its `#dialect.mnemonic` prefix (`<fast>`); anything else in full. Likewise
`type($x)` prints a dialect type stripped (`<f16>`) when the operand's constraint names that one
type class (`type_class`, as `TypeClass`), unless `qualified`. A default (the class's
`attribute_defaults`) is not printed: an optional group anchored on it, an `oilist` clause or
`attr-dict` leaves it out, as MLIR does for a `DefaultValuedAttr`.
"""

from __future__ import annotations

import re

from .attributes import _DIALECT_ATTRIBUTES, DenseArrayAttr, DialectAttribute, IntegerAttr, UnitAttr
from .errors import IRError
from .opfields import AttributeDef, OperandDef, RegionDef, ResultDef, SuccessorDef
from .types import i32, i64

_TOKEN = re.compile(
    r"\s*(?:`((?:[^`\\]|\\.)*)`|\$([A-Za-z_][A-Za-z0-9_]*)|([A-Za-z_][A-Za-z0-9_\-]*)|(.))"
)


class FormatError(IRError):
    """An assembly format the interpreter cannot read."""


# -- elements: plain tuples, tagged by their first item


def compiled_format(cls) -> list:
    """The elements of `cls.assembly_format`, compiled on first use."""
    compiled = cls.__dict__.get("_compiled_format")
    if compiled is None:
        compiled = _Compiler(cls).compile()
        cls._compiled_format = compiled
    return compiled


class _Compiler:
    def __init__(self, cls):
        self.cls = cls
        self.op_def = cls._op_def
        self.tokens = [m for m in _TOKEN.finditer(cls.assembly_format) if m.group(0).strip()]
        self.pos = 0

    def fail(self, message: str):
        return FormatError(f"{self.cls.name}: assembly format: {message}")

    def compile(self) -> list:
        elements = self._elements(())
        if self.pos != len(self.tokens):
            raise self.fail(f"unexpected '{self.tokens[self.pos].group(0).strip()}'")
        return elements

    def _peek(self) -> str | None:
        if self.pos >= len(self.tokens):
            return None
        m = self.tokens[self.pos]
        return m.group(4) or m.group(3)

    def _expect(self, char: str) -> None:
        if self._peek() != char or self.tokens[self.pos].group(4) is None:
            raise self.fail(f"expected '{char}'")
        self.pos += 1

    def _elements(self, stops: tuple) -> list:
        elements = []
        while self.pos < len(self.tokens):
            m = self.tokens[self.pos]
            if m.group(4) in stops:
                break
            if m.group(4) == "^":
                if not elements:
                    raise self.fail("'^' must follow an element")
                elements[-1] = ("anchor", elements[-1])
                self.pos += 1
                continue
            elements.append(self._element())
        return elements

    def _element(self):
        m = self.tokens[self.pos]
        self.pos += 1
        literal, var, word, punct = m.groups()
        if literal is not None:
            if literal in ("", " ", "\\n"):
                return ("space", literal)
            return ("lit", literal)
        if var is not None:
            return self._variable(var)
        if punct == "(":
            return self._optional_group()
        if word in ("attr-dict", "attr-dict-with-keyword"):
            return ("attr_dict", word == "attr-dict-with-keyword")
        if word == "type":
            return ("type", self._parenthesized_arg(), False)
        if word == "qualified":
            self._expect("(")
            inner = self._element()
            self._expect(")")
            if inner[0] == "type":
                return ("type", inner[1], True)
            return ("qualified_attr", inner)
        if word == "functional-type":
            self._expect("(")
            inputs = self._type_arg()
            self._expect(",")
            results = self._type_arg()
            self._expect(")")
            return ("functional", inputs, results)
        if word in ("operands", "results", "regions", "successors"):
            return (word,)
        if word == "oilist":
            return self._oilist()
        raise self.fail(f"unsupported directive '{m.group(0).strip()}'")

    def _variable(self, name: str):
        field = self.op_def.fields.get(name)
        if isinstance(field, OperandDef):
            return ("operand", field)
        if isinstance(field, AttributeDef):
            return ("attr", field)
        if isinstance(field, RegionDef):
            return ("region", self.op_def.regions.index(field))
        if isinstance(field, SuccessorDef):
            return ("successor", self.op_def.successors.index(field))
        if isinstance(field, ResultDef):
            return ("result", field)
        raise self.fail(f"'${name}' is not a field of the op")

    def _parenthesized_arg(self):
        self._expect("(")
        arg = self._type_arg()
        self._expect(")")
        return arg

    def _type_arg(self):
        m = self.tokens[self.pos]
        self.pos += 1
        if m.group(2) is not None:
            var = self._variable(m.group(2))
            if var[0] not in ("operand", "result"):
                raise self.fail(f"type() of '${m.group(2)}', which is not an operand or result")
            return var
        if m.group(3) in ("operands", "results"):
            return (m.group(3),)
        raise self.fail("type() takes an operand, a result, operands or results")

    def _optional_group(self):
        then = self._elements((")",))
        self._expect(")")
        orelse = []
        if self._peek() == ":":
            self.pos += 1
            self._expect("(")
            orelse = self._elements((")",))
            self._expect(")")
        self._expect("?")
        anchors = [e for e in then if e[0] == "anchor"] + [e for e in orelse if e[0] == "anchor"]
        if len(anchors) != 1:
            raise self.fail("an optional group needs exactly one anchor ('^')")
        anchor = anchors[0][1]
        then = [e[1] if e[0] == "anchor" else e for e in then]
        orelse = [e[1] if e[0] == "anchor" else e for e in orelse]
        elided = None
        if (
            anchor[0] == "attr"
            and anchor is not then[0]
            and _is_unit_attr(anchor[1])
            and (not orelse or anchor is not orelse[0])
        ):
            elided = anchor
        return ("optional", then, orelse, anchor, elided)

    def _oilist(self):
        self._expect("(")
        clauses = []
        while True:
            m = self.tokens[self.pos]
            if m.group(1) is None:
                raise self.fail("each oilist clause starts with a literal")
            self.pos += 1
            elements = self._elements(("|", ")"))
            clauses.append((m.group(1), elements))
            if self._peek() == "|":
                self.pos += 1
                continue
            self._expect(")")
            return ("oilist", clauses)


def _is_unit_attr(d: AttributeDef) -> bool:
    constraint = d.constraint
    return getattr(constraint, "attr_class", None) is UnitAttr or constraint.description in (
        "UnitAttr",
        "unit attribute",
    )


# -- what a field holds


def attribute_default(op_class, d: AttributeDef):
    """The default of an attribute field (the class's `attribute_defaults`), or None: MLIR
    elides a `DefaultValuedAttr` that holds its default."""
    defaults = getattr(op_class, "attribute_defaults", None)
    return None if not defaults else defaults.get(d.name)


def attribute_present(op, d: AttributeDef) -> bool:
    """Set, and not equal to its declared default."""
    value = op.attributes.get(d.name)
    return value is not None and value is not attribute_default(type(op), d)


def groups_of(op, segments, items) -> list:
    """`items` (operands or results) split per declared field."""
    if not segments.sized and segments.variable_index is None:
        return [(x,) for x in items]
    return segments.split(tuple(items), op.attributes)


def is_enum(d: AttributeDef) -> bool:
    """An enum attribute (an `EnumAttr` constraint of the dialects): spelled by keyword."""
    constraint = d.constraint
    return hasattr(constraint, "parse_keyword") and hasattr(constraint, "keyword")


# Attribute constraints whose type ODS can build, so a format spells only the value.
ATTR_TYPES = {
    "32-bit signless integer attribute": i32,
    "64-bit signless integer attribute": i64,
}
# Dense array constraints, which a format spells without `array<i32: ...>`: `[1, 2]`.
DENSE_ARRAY_TYPES = {
    "i32 dense array attribute": i32,
    "i64 dense array attribute": i64,
}


def attribute_class(constraint):
    """The dialect attribute class that a constraint made from a class stands for, or None."""
    cls = getattr(constraint, "attr_class", None)
    if cls is not None:
        return cls
    name = constraint.description
    if not name or not name[0].isupper() or " " in name:
        return None
    for candidate in _DIALECT_ATTRIBUTES.values():
        if candidate.__name__ == name:
            return candidate
    return None


def attribute_text(d: AttributeDef, attr) -> str:
    """An attribute variable as the generated printer spells it: an enum by keyword, a
    typed attribute of a buildable type without its type, a dialect attribute of the one
    class its constraint names without its prefix, anything else in full."""
    constraint = d.constraint
    if is_enum(d):
        return constraint.keyword(attr)
    attr_type = ATTR_TYPES.get(constraint.description)
    if attr_type is not None and type(attr) is IntegerAttr and attr.type is attr_type:
        return str(attr.value)
    if constraint.description in DENSE_ARRAY_TYPES and isinstance(attr, DenseArrayAttr):
        return "[" + ", ".join(str(v) for v in attr.values) + "]"
    if isinstance(attr, DialectAttribute) and attribute_class(constraint) is not None:
        return _stripped(attr)
    return str(attr)


def _stripped(obj) -> str:
    body = obj.print_body()
    return body if body else str(obj)


def type_text(var, value_type, qualified: bool) -> str:
    """The spelling of one operand's or result's type under `type(...)`."""
    if not qualified:
        cls = getattr(var[1].constraint, "type_class", None)
        if cls is not None and isinstance(value_type, cls):
            return _stripped(value_type)
    return str(value_type)
