"""SSA names while parsing: values defined per region scope, uses before definitions
(placeholders, replaced once the value is defined), and the arguments custom parsers read.

Names are scoped as MLIR scopes them: a region sees the names of the regions around it, not
those of its siblings (which may reuse them), and an isolated region (`tt.func`) starts afresh.
"""

from __future__ import annotations

from .lexer import SSA_USE
from .values import Value


class _Forward(Value):
    """A use of an SSA name not defined yet; replaced by the value once it is."""

    __slots__ = ("name", "number", "pos")

    def __init__(self, type, name: str, number: int, pos: int):
        self.type = type
        self._uses = {}
        self.name = name
        self.number = number
        self.pos = pos


class Argument:
    """A region argument as a custom parser reads it: `%name: type {attrs} loc(...)`."""

    __slots__ = ("attributes", "deferred", "location", "name", "pos", "type")

    def __init__(self, name: str, pos: int, type=None, attributes=None, location=None):
        self.name = name
        self.pos = pos
        self.type = type
        self.attributes = attributes
        self.location = location
        self.deferred = False  # whether the location names an alias defined later


class ValueScopes:
    """The SSA half of the parser (Parser mixes it in)."""

    def _init_values(self) -> None:
        self.values: dict[str, object] = {}  # name -> Value, or a tuple for several results
        self.forward: dict[str, list[_Forward]] = {}
        self._scopes: list[list[str]] = []
        self._saved: list[tuple] = []  # the enclosing names, while in an isolated region

    def parse_operand_ref(self) -> tuple:
        """`%name` or `%name#k`, unresolved: (name, number, position)."""
        pos = self.lex.pos
        m = self.lex.take(SSA_USE)
        if m is None:
            raise self.error(f"expected SSA operand, found {self.lex.describe_next()}")
        return (m.group(1), int(m.group(2)) if m.group(2) else 0, pos)

    def parse_operand(self, type=None) -> Value:
        """`%name` resolved to its value (a placeholder if defined later)."""
        return self.resolve_operand(self.parse_operand_ref(), type)

    def parse_optional_operand(self, type=None) -> Value | None:
        return self.parse_operand(type) if self.lex.peek("%") else None

    def parse_operand_list(self) -> list[Value]:
        """Zero or more comma-separated operands."""
        if not self.lex.peek("%"):
            return []
        values = [self.parse_operand()]
        while self.lex.accept(","):
            values.append(self.parse_operand())
        return values

    def resolve_operand(self, ref: tuple, expected=None) -> Value:
        """The value an operand reference names; `expected`, if given, is checked."""
        name, number, pos = ref
        found = self.values.get(name)
        if found is None:
            return self._forward_reference(name, number, pos, expected)
        if isinstance(found, tuple):
            if number >= len(found):
                raise self.error(f"result number {number} of '%{name}' out of range", pos)
            value = found[number]
        else:
            if number:
                raise self.error(f"'%{name}' has one result, not #{number}", pos)
            value = found
        if expected is not None and value.type is not expected and value.type is not None:
            raise self.error(
                f"use of value '%{name}' expects different type than prior uses: "
                f"'{expected}' vs '{value.type}'",
                pos,
            )
        return value

    def _forward_reference(self, name: str, number: int, pos: int, expected) -> Value:
        for placeholder in self.forward.get(name, ()):
            if placeholder.number == number:
                if expected is not None and placeholder.type is None:
                    placeholder.type = expected
                return placeholder
        placeholder = _Forward(expected, name, number, pos)
        self.forward.setdefault(name, []).append(placeholder)
        return placeholder

    def define_value(self, name: str, value, pos: int) -> None:
        """Bind `%name` to a value (or a tuple of an op's results) in the current scope."""
        if name in self.values:
            raise self.error(f"redefinition of SSA value '%{name}'", pos)
        self.values[name] = value
        self._scopes[-1].append(name)
        pending = self.forward.pop(name, None)
        if pending:
            for placeholder in pending:
                real = self.resolve_operand((name, placeholder.number, placeholder.pos))
                if placeholder.type is not None and placeholder.type is not real.type:
                    raise self.error(
                        f"definition of SSA value '%{name}#{placeholder.number}' has type "
                        f"{real.type}, but a prior use expects {placeholder.type}",
                        placeholder.pos,
                    )
                placeholder.replace_all_uses_with(real)

    def _push_scope(self, isolated: bool) -> None:
        if isolated:
            self._saved.append((self.values, self.forward))
            self.values, self.forward = {}, {}
        self._scopes.append([])

    def _pop_scope(self, isolated: bool) -> None:
        values = self.values
        for name in self._scopes.pop():
            del values[name]
        if isolated:
            if self.forward:
                first = min((p for ps in self.forward.values() for p in ps), key=_pos_of)
                raise self.error(f"use of undeclared SSA value name '%{first.name}'", first.pos)
            self.values, self.forward = self._saved.pop()

    def parse_argument(self, allow_type=True, allow_attributes=False) -> Argument:
        """`%name` with `: type`, `{attrs}` and `loc(...)` as allowed (a region argument)."""
        return self._parse_argument(allow_attributes, allow_type)

    def _parse_argument(self, allow_attributes: bool, allow_type: bool = True) -> Argument:
        lex = self.lex
        pos = lex.pos
        m = lex.take(SSA_USE)
        if m is None or m.group(2) is not None:
            raise self.error(f"expected SSA identifier, found {lex.describe_next()}", pos)
        arg = Argument(m.group(1), pos)
        if allow_type:
            lex.expect(":", "after the argument name")
            arg.type = self.parse_type()
            if allow_attributes and lex.peek("{"):
                arg.attributes = self.parse_attr_dict()
            count = self.deferred_count
            arg.location = self.parse_trailing_location()
            arg.deferred = self.deferred_count != count
        return arg

    def parse_assignment_list(self) -> tuple[list[Argument], list[tuple]]:
        """`(%a = %x, %b = %y)`: region arguments and references to their initial values."""
        self.lex.expect("(")
        arguments, refs = [], []
        if not self.lex.accept(")"):
            while True:
                arguments.append(self.parse_argument(allow_type=False))
                self.lex.expect("=", "in the assignment list")
                refs.append(self.parse_operand_ref())
                if not self.lex.accept(","):
                    break
            self.lex.expect(")", "to end the assignment list")
        return arguments, refs


def _pos_of(placeholder: _Forward) -> int:
    return placeholder.pos
