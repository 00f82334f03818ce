"""Parsing by a declarative assembly format (format.py compiles it), as mlir-tblgen's generated
parsers do: read the elements in order, then resolve the operands with their types and find
the result types the format does not spell.

Types come, in order, from the format's type directives; from the op's `type_inference`
entries `(target, source, fn)` (MLIR's TypesMatchWith / AllTypesMatch / InferTypeOpInterface);
from a syntax's `infer_result_types(state)` (asm_syntax.py); from a result declared
`like=operand`; from an operand constraint naming one type (`TypeIs`); and from the traits
SameOperandsAndResultType and SameTypeOperands.
"""

from __future__ import annotations

from .asm_syntax import type_inference_for
from .attributes import DenseArrayAttr, IntegerAttr, UnitAttr
from .format import ATTR_TYPES, DENSE_ARRAY_TYPES, attribute_class, compiled_format, is_enum
from .lexer import KEYWORD
from .opfields import OPTIONAL, SINGLE, VARIADIC, AttributeDef
from .traits import SameOperandsAndResultType
from .types import i32


def parse_format(parser, cls, state) -> None:
    """Fill `state` (operands, result types, attributes, regions, successors) for op `cls`."""
    context = _ParseContext(parser, cls, state)
    for element in compiled_format(cls):
        context.element(element)
    context.finish()


class _ParseContext:
    def __init__(self, parser, cls, state):
        self.parser = parser
        self.cls = cls
        self.op_def = cls._op_def
        self.state = state
        self.refs: dict[str, list] = {}  # operand field -> unresolved references
        self.types: dict[str, list] = {}  # operand or result field -> types written
        self.all_operand_types: list | None = None
        self.all_result_types: list | None = None
        self.all_operands: list | None = None
        self.regions: dict[int, object] = {}
        self.successors: dict[int, object] = {}

    # -- elements

    def element(self, element) -> None:
        kind = element[0]
        parser = self.parser
        if kind == "lit":
            parser.expect(element[1])
        elif kind == "space":
            return
        elif kind == "operand":
            self._operand(element[1])
        elif kind == "attr":
            d = element[1]
            self.state.attributes[d.name] = self._attribute(d)
        elif kind == "qualified_attr":
            self.state.attributes[element[1][1].name] = parser.parse_attribute()
        elif kind == "attr_dict":
            if element[1]:
                parser.parse_optional_attr_dict_with_keyword(self.state.attributes)
            else:
                parser.parse_optional_attr_dict(self.state.attributes)
        elif kind == "type":
            self._type_directive(element[1], element[2])
        elif kind == "functional":
            self._functional(element[1], element[2])
        elif kind == "region":
            self.regions[element[1]] = parser.parse_region()
        elif kind == "successor":
            self.successors[element[1]] = parser.parse_successor()
        elif kind == "operands":
            self.all_operands = self._operand_list()
        elif kind == "optional":
            self._optional(element)
        elif kind == "oilist":
            self._oilist(element)
        else:
            raise parser.error(f"{self.cls.name}: cannot parse format element {kind}")

    def _operand(self, d) -> None:
        parser = self.parser
        if d.kind == SINGLE:
            self.refs[d.name] = [parser.parse_operand_ref()]
        elif d.kind == OPTIONAL:
            self.refs[d.name] = [parser.parse_operand_ref()] if parser.lex.peek("%") else []
        else:
            self.refs[d.name] = self._operand_list()

    def _operand_list(self) -> list:
        parser = self.parser
        if not parser.lex.peek("%"):
            return []
        refs = [parser.parse_operand_ref()]
        while parser.lex.accept(","):
            refs.append(parser.parse_operand_ref())
        return refs

    def _attribute(self, d: AttributeDef):
        parser = self.parser
        constraint = d.constraint
        pos = parser.lex.pos
        if is_enum(d):
            if parser.lex.peek('"'):
                text = parser.parse_string()
            else:
                text = parser.parse_keyword(f"{d.name} keyword")
                while getattr(constraint, "bit", False) and parser.accept(constraint.separator):
                    text += constraint.separator + parser.parse_keyword(f"{d.name} keyword")
            try:
                return constraint.parse_keyword(text)
            except ValueError as exc:
                raise parser.error(str(exc), pos) from None
        element = DENSE_ARRAY_TYPES.get(constraint.description)
        if element is not None and parser.lex.peek("["):
            parser.expect("[")
            values = []
            if not parser.accept("]"):
                values.append(parser.parse_integer())
                while parser.accept(","):
                    values.append(parser.parse_integer())
                parser.expect("]")
            return DenseArrayAttr(element, values)
        attr_class = attribute_class(constraint)
        if attr_class is not None and not parser.lex.peek("#"):
            return parse_stripped(parser, attr_class)
        attr_type = ATTR_TYPES.get(constraint.description)
        char = parser.lex.next_char()
        if attr_type is not None and char and char in "-0123456789":
            # A buildable type is not spelled: `linalg.index 0 : index` reads `0`, not `0 : index`.
            return IntegerAttr(parser.parse_integer(f"{d.name} value"), attr_type)
        return parser.parse_attribute(attr_type)

    def _type_directive(self, arg, qualified: bool) -> None:
        parser = self.parser
        kind = arg[0]
        if kind == "operands":
            self.all_operand_types = parser.parse_type_list() if _type_next(parser) else []
            return
        if kind == "results":
            self.all_result_types = parser.parse_type_list() if _type_next(parser) else []
            return
        d = arg[1]
        if d.kind == SINGLE:
            type_class = None if qualified else getattr(d.constraint, "type_class", None)
            if type_class is not None and not parser.lex.peek("!"):
                self.types[d.name] = [parse_stripped(parser, type_class)]
            else:
                self.types[d.name] = [parser.parse_type()]
        elif d.kind == OPTIONAL:
            self.types[d.name] = [parser.parse_type()] if _type_next(parser) else []
        else:
            self.types[d.name] = parser.parse_type_list() if _type_next(parser) else []

    def _functional(self, inputs, results) -> None:
        parser = self.parser
        input_types = parser.parse_type_list_parens()
        parser.expect("->", "in the functional type")
        result_types = parser.parse_function_results()
        for arg, types in ((inputs, input_types), (results, result_types)):
            if arg[0] == "operands":
                self.all_operand_types = types
            elif arg[0] == "results":
                self.all_result_types = types
            else:
                self.types[arg[1].name] = types

    def _present(self, first) -> bool:
        """Whether an optional group is there, judged by its first element (consumed if a
        literal)."""
        parser = self.parser
        kind = first[0]
        if kind == "lit":
            return parser.accept(first[1])
        if kind == "operand":
            return parser.lex.peek("%")
        if kind == "region":
            return parser.lex.peek("{")
        if kind == "attr":
            d = first[1]
            if is_enum(d):
                m = KEYWORD.match(parser.lex.text, parser.lex.pos)
                return m is not None and m.group(1) in d.constraint.cases
            return _attribute_next(parser)
        if kind == "type":
            return _type_next(parser)
        raise parser.error(f"{self.cls.name}: unsupported first element of an optional group")

    def _optional(self, element) -> None:
        _, then, orelse, _anchor, elided = element
        # A group may open with spacing (`` `` `[` ``), which reads nothing: judge by what follows.
        first = next(i for i, child in enumerate(then) if child[0] != "space")
        if self._present(then[first]):
            start = first + 1 if then[first][0] == "lit" else first
            for child in then[start:]:
                if child is elided:
                    self.state.attributes[child[1].name] = UnitAttr()
                else:
                    self.element(child)
        else:
            for child in orelse:
                self.element(child)

    def _oilist(self, element) -> None:
        parser = self.parser
        seen = set()
        progress = True
        while progress:
            progress = False
            for literal, children in element[1]:
                if literal not in seen and parser.accept(literal):
                    seen.add(literal)
                    for child in children:
                        self.element(child)
                    progress = True

    # -- resolution

    def finish(self) -> None:
        op_def = self.op_def
        state = self.state
        resolve = self.parser.resolve_operand
        groups = self.refs if self.all_operands is None else self._operand_groups()
        written_types = self.types
        flat = self.all_operand_types
        values = {}
        index = 0
        for d in op_def.operands:
            refs = groups.get(d.name, ())
            written = written_types.get(d.name)
            if written is None and flat is not None:
                written = flat[index : index + len(refs)]
            index += len(refs)
            if written is None:
                group = [resolve(ref) for ref in refs]
            else:
                group = [
                    resolve(ref, written[i] if i < len(written) else None)
                    for i, ref in enumerate(refs)
                ]
            values[d.name] = group
            state.operands.extend(group)
        if flat is not None and len(flat) != index:
            raise self.parser.error(f"expected {index} operand types but had {len(flat)}")
        result_types = self._result_types(values)
        for d in op_def.results:
            state.result_types.extend(result_types[d.name])
        if op_def.operand_segments.sized:
            sizes = [len(values[d.name]) for d in op_def.operands]
            state.attributes[op_def.operand_segments.attr_name] = DenseArrayAttr(i32, sizes)
        if op_def.result_segments.sized:
            sizes = [len(result_types[d.name]) for d in op_def.results]
            state.attributes[op_def.result_segments.attr_name] = DenseArrayAttr(i32, sizes)
        if self.regions:
            state.regions.extend(self.regions[i] for i in range(len(op_def.regions)))
        if self.successors:
            state.successors.extend(self.successors[i] for i in range(len(op_def.successors)))

    def _operand_groups(self) -> dict:
        op_def = self.op_def
        if self.all_operands is None:
            return {d.name: self.refs.get(d.name, []) for d in op_def.operands}
        refs = self.all_operands
        fixed = sum(1 for d in op_def.operands if d.kind == SINGLE)
        variable = [d for d in op_def.operands if d.kind != SINGLE]
        if len(variable) > 1:
            raise self.parser.error(f"{self.cls.name}: `operands` with several variadic groups")
        groups = {}
        index = 0
        for d in op_def.operands:
            size = 1 if d.kind == SINGLE else len(refs) - fixed
            groups[d.name] = refs[index : index + size]
            index += size
        return groups

    def _result_types(self, values: dict) -> dict:
        op_def = self.op_def
        flat = self.all_result_types
        written = self.types
        if flat is None and all(d.name in written for d in op_def.results):
            return written
        known: dict = {}
        if flat is not None:
            if any(d.kind != SINGLE for d in op_def.results) and len(op_def.results) > 1:
                raise self.parser.error(f"{self.cls.name}: `results` with variadic groups")
            if len(op_def.results) == 1 and op_def.results[0].kind != SINGLE:
                known[op_def.results[0].name] = list(flat)
            else:
                for d, t in zip(op_def.results, flat):
                    known[d.name] = [t]
        for d in op_def.results:
            if d.name in self.types:
                known[d.name] = self.types[d.name]
        missing = [d for d in op_def.results if d.name not in known]
        if missing:
            self._infer(missing, known, values)
        return known

    def _infer(self, missing: list, known: dict, values: dict) -> None:
        state = self.state
        cls = self.cls
        operand_types = {name: [v.type for v in vs] for name, vs in values.items()}
        for target, source, fn in getattr(cls, "type_inference", ()):
            if target in known or all(d.name != target for d in missing):
                continue
            if source in state.attributes:
                x = state.attributes[source]
            else:
                found = known.get(source) or operand_types.get(source)
                if not found or found[0] is None:
                    continue
                x = found[0]
            try:
                known[target] = [x if fn is None else fn(x)]
            except (AttributeError, TypeError, ValueError, KeyError):
                raise self.parser.error(
                    f"'{cls.name}': cannot infer the type of '{target}' from {x}"
                ) from None
        hook = type_inference_for(cls.name)
        if hook is not None and any(d.name not in known for d in missing):
            for d, t in zip(self.op_def.results, hook(self.state, values)):
                known.setdefault(d.name, [t])
        for d in missing:
            if d.name in known:
                continue
            if d.like is not None and d.kind == VARIADIC:
                known[d.name] = operand_types.get(d.like, [])
            elif d.like is not None and operand_types.get(d.like):
                known[d.name] = [operand_types[d.like][0]]
            elif SameOperandsAndResultType in cls.traits and _first_type(operand_types):
                known[d.name] = [_first_type(operand_types)]
            elif d.kind != SINGLE:
                known[d.name] = []
            else:
                raise self.parser.error(f"failed to infer the type of result '{d.name}'")


def _first_type(operand_types: dict):
    for types in operand_types.values():
        for t in types:
            if t is not None:
                return t
    return None


def _type_next(parser) -> bool:
    """Whether a type starts at the cursor."""
    char = parser.lex.next_char()
    return char in "!(" or (char.isalpha() and not parser.lex.peek("loc("))


def _attribute_next(parser) -> bool:
    char = parser.lex.next_char()
    return bool(char) and (char in '"[{@#!(-' or char.isalnum())


def parse_stripped(parser, cls):
    """A dialect type or attribute of class `cls` spelled without `!dialect.mnemonic`
    (`<f16>`): its `parse_body`, else the registered body parser, else `from_body`."""
    return parser.parse_dialect_body(cls)
