"""The MLIR text parser: reads what printer.py writes, Triton's TTIR dumps, and the generic form
of any op (an unknown one becomes an UnregisteredOp).

    module = parse_module(text, filename="kernel.ttir")

Named SSA values (`%pid`, `%c1024_i32`, `%x#1`), forward references (a use before the
definition; dominance is the verifier's business), block labels and successors, location
aliases defined after their use, and every kind of location are read. A syntax error raises
ParseError, `FILE:line:col: error: message`.

Custom parsers (asm_syntax.py) call the methods below and those Parser mixes in (types and
attributes: parse_attrs.py; SSA names: parse_values.py; regions and successors:
parse_regions.py), named after MLIR's OpAsmParser, and fill an `OperationState`.
"""

from __future__ import annotations

import re

from . import builtin_syntax  # noqa: F401  (registers `module`)
from .asm_syntax import syntax_for
from .attributes import Attribute
from .block import Block, Region
from .builtin import ModuleOp
from .format import compiled_format
from .format_parse import parse_format
from .gc_pause import gc_paused
from .lexer import KEYWORD, SSA_DEF, STRING, ParseError, unescape
from .locations import FileLineColLoc, Location
from .opdef import create_operation, op_class
from .parse_attrs import AttrParser
from .parse_regions import RegionParser
from .parse_values import Argument, ValueScopes
from .traits import IsolatedFromAbove
from .types import FunctionType
from .values import Value

_SIGNATURE = re.compile(r"(\([^()]*\) -> (?:\([^()]*\)|[^\s()]+))(?:\s+|//[^\n]*)*")
_ALIAS_NAME = re.compile(r"([#!])([A-Za-z_][A-Za-z0-9_$.\-]*)(?:\s+|//[^\n]*)*")

__all__ = ["Argument", "OperationState", "ParseError", "Parser", "parse_attribute", "parse_module"]


def parse_module(text: str, filename: str = "-") -> ModuleOp:
    """The module `text` spells. Top-level ops other than one `module` are wrapped in one."""
    with gc_paused():
        return Parser(text, filename).parse_top_level()


def parse_attribute(text: str):
    """One attribute (or, spelled as a type, a TypeAttr) from `text`."""
    parser = Parser(text)
    attr = parser.parse_attribute()
    if not parser.lex.at_end():
        raise parser.error(f"unexpected {parser.lex.describe_next()} after the attribute")
    return attr


class OperationState:
    """What a custom parser gathers for one op, then turned into the op. `location` is the
    op's position in the text (what MLIR gives an op, or an implied terminator, without a
    `loc(...)`), computed when asked for."""

    __slots__ = (
        "_location",
        "_parser",
        "_pos",
        "attributes",
        "name",
        "operands",
        "regions",
        "result_types",
        "successors",
    )

    def __init__(self, name: str, parser=None, pos: int = 0):
        self.name = name
        self._parser = parser
        self._pos = pos
        self._location = None
        self.operands: list[Value] = []
        self.result_types: list = []
        self.attributes: dict[str, Attribute] = {}
        self.regions: list[Region] = []
        self.successors: list[Block] = []

    @property
    def location(self) -> Location:
        if self._location is None:
            line, col = self._parser.lex.line_col(self._pos)
            self._location = FileLineColLoc(self._parser.lex.filename, line, col)
        return self._location

    def build(self):
        return create_operation(
            self.name,
            self.operands,
            self.result_types,
            self.attributes,
            self.regions,
            self.successors,
        )


class Parser(AttrParser, ValueScopes, RegionParser):
    """Ops over AttrParser's types, attributes and locations, ValueScopes' SSA names and
    RegionParser's regions and blocks."""

    def __init__(self, text: str, filename: str = "-"):
        super().__init__(text, filename)
        self._init_values()
        self._init_regions()
        self._deferred_owners: list = []  # ops and arguments whose location needs an alias
        self._signatures: dict[str, FunctionType] = {}
        self._default_dialects: list[str] = [""]  # per custom op being parsed

    # -- top level

    def parse_top_level(self) -> ModuleOp:
        lex = self.lex
        top = Block()
        self._push_scope(isolated=True)
        while not lex.at_end():
            char = lex.next_char()
            if char in "#!" and self._try_alias_definition():
                continue
            self.parse_operation(top)
        self._pop_scope(isolated=True)
        self._resolve_deferred_locations()
        ops = list(top)
        if len(ops) == 1 and isinstance(ops[0], ModuleOp):
            ops[0].detach()
            return ops[0]
        module = ModuleOp(location=ops[0].location if ops else None)
        for op in ops:
            op.detach()
            module.body.append(op)
        return module

    def _try_alias_definition(self) -> bool:
        lex = self.lex
        start = lex.pos
        m = lex.take(_ALIAS_NAME)
        if m is None or not lex.accept("="):
            lex.pos = start
            return False
        kind, name = m.group(1), m.group(2)
        if name in (self.attr_aliases if kind == "#" else self.type_aliases):
            raise self.error(f"redefinition of alias '{kind}{name}'", start)
        if kind == "#":
            count = self.deferred_count
            self.attr_aliases[name] = self.parse_attribute()
            self._deferred_aliases |= self.deferred_count != count
        else:
            self.type_aliases[name] = self.parse_type()
        return True

    def _resolve_deferred_locations(self) -> None:
        resolved: dict = {}
        for owner in self._deferred_owners:
            loc = owner.location
            found = resolved.get(loc)
            if found is None:
                found = resolved[loc] = self.resolve_location(loc)
            owner.location = found

    # -- operations

    def parse_operation(self, block: Block):
        """One op, appended to `block`."""
        lex = self.lex
        start = lex.pos
        groups = []
        if lex.text.startswith("%", start):
            groups = self._parse_result_groups()
        op_pos = lex.pos
        if lex.next_char() == '"':
            m = lex.take(STRING)
            if m is None:
                raise self.error("expected operation name in quotes")
            state = OperationState(unescape(m.group(1)), self, op_pos)
            op = self._parse_generic_body(state)
        else:
            state = self._parse_custom(op_pos)
            op = state.build()
        count = self.deferred_count
        loc = self.parse_trailing_location()
        if loc is not None:
            op.location = loc
            if self.deferred_count != count:
                self._deferred_owners.append(op)
        else:
            op.location = state.location
        count = sum(n for _, n, _ in groups)
        if groups and count != len(op.results):
            raise self.error(
                f"operation defines {len(op.results)} results but was provided {count} to bind",
                start,
            )
        index = 0
        for name, n, pos in groups:
            results = op.results[index : index + n]
            self.define_value(name, results[0] if n == 1 else tuple(results), pos)
            index += n
        block.append(op)
        return op

    def _parse_result_groups(self) -> list:
        groups = []
        while True:
            pos = self.lex.pos
            m = self.lex.take(SSA_DEF)
            if m is None:
                raise self.error("expected SSA value name")
            count = int(m.group(2)) if m.group(2) else 1
            if count < 1:
                raise self.error("expected a positive result count", pos)
            groups.append((m.group(1), count, pos))
            if not self.lex.accept(","):
                break
        self.lex.expect("=", "after the results")
        return groups

    def _parse_custom(self, pos: int) -> OperationState:
        m = self.lex.take(KEYWORD)
        if m is None:
            raise self.error(f"expected operation name, found {self.lex.describe_next()}")
        name = m.group(1)
        if "." not in name:
            name = self._qualified_name(name)
        state = OperationState(name, self, pos)
        syntax = syntax_for(name)
        # The op's regions may spell its default dialect's ops without the prefix, as the
        # printer wrote them (`return` in a `func.func`); ops nested deeper may not.
        self._default_dialects.append(getattr(syntax, "default_dialect", ""))
        try:
            self._parse_custom_body(name, syntax, state, m.group(1), pos)
        finally:
            self._default_dialects.pop()
        return state

    def _qualified_name(self, name: str) -> str:
        """An op name without a dialect: of the default dialect where it names an op, else
        of `builtin`, as MLIR resolves it."""
        default = self._default_dialects[-1]
        if default:
            full = f"{default}.{name}"
            if syntax_for(full) is not None or op_class(full) is not None:
                return full
        return "builtin." + name

    def _parse_custom_body(self, name: str, syntax, state, spelled: str, pos: int) -> None:
        if syntax is not None:
            syntax.parse(self, state)
            return
        cls = op_class(name)
        parse_custom = getattr(cls, "parse_custom", None)
        if parse_custom is not None:
            parse_custom(self, state)
        elif cls is not None and cls.assembly_format is not None:
            compiled_format(cls)
            parse_format(self, cls, state)
        else:
            raise self.error(f"custom op '{spelled}' is unknown", pos)

    def _parse_generic_body(self, state: OperationState):
        lex = self.lex
        lex.expect("(", "to start the operand list")
        refs = []
        if not lex.accept(")"):
            refs.append(self.parse_operand_ref())
            while lex.accept(","):
                refs.append(self.parse_operand_ref())
            lex.expect(")", "to end the operand list")
        if lex.accept("["):
            state.successors.append(self.parse_successor())
            while lex.accept(","):
                state.successors.append(self.parse_successor())
            lex.expect("]")
        if lex.accept("<"):
            state.attributes.update(self.parse_attr_dict())
            lex.expect(">", "after the properties")
        if lex.accept("("):
            cls = op_class(state.name)
            isolated = cls is not None and IsolatedFromAbove in cls.traits
            state.regions.append(self.parse_region(isolated=isolated))
            while lex.accept(","):
                state.regions.append(self.parse_region(isolated=isolated))
            lex.expect(")")
        if lex.peek("{"):
            state.attributes.update(self.parse_attr_dict())
        lex.expect(":", "before the operation's type")
        type_pos = lex.pos
        signature = self._parse_signature()
        if not isinstance(signature, FunctionType):
            raise self.error("expected function type", type_pos)
        if len(signature.inputs) != len(refs):
            raise self.error(
                f"expected {len(refs)} operand type(s) but had {len(signature.inputs)}", type_pos
            )
        state.operands = [self.resolve_operand(r, t) for r, t in zip(refs, signature.inputs)]
        state.result_types = list(signature.results)
        return state.build()

    def _parse_signature(self):
        """A generic op's function type; the text of each is parsed once per module."""
        lex = self.lex
        m = _SIGNATURE.match(lex.text, lex.pos)
        if m is not None:
            cached = self._signatures.get(m.group(1))
            if cached is not None:
                lex.pos = m.end()
                return cached
        signature = self.parse_type()
        if m is not None and lex.pos == m.end():
            self._signatures[m.group(1)] = signature
        return signature

    # -- attribute dictionaries for custom parsers

    def parse_optional_attr_dict(self, into: dict) -> None:
        if self.lex.peek("{"):
            into.update(self.parse_attr_dict())

    def parse_optional_attr_dict_with_keyword(self, into: dict) -> None:
        if self.parse_optional_keyword("attributes"):
            into.update(self.parse_attr_dict())
