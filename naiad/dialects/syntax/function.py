"""The syntax of function ops (`tt.func`, `func.func`): MLIR's function_interface_impl printer
and parser, which both dialects use upstream.

    tt.func public @k(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32} loc("x"(#loc)), %n: i32
        loc("n"(#loc))) -> i32 attributes {noinline = false} { ... }
    func.func private @decl(i32, f32) -> (f32, i32)

An argument's location is printed in full (MLIR allows no alias there), and makes the value's
name (`%x`). `arg_attrs` / `res_attrs` hold one dictionary per argument / result, and exist
only when one of them is not empty, as MLIR keeps them.
"""

from __future__ import annotations

from ...ir import ArrayAttr, DictionaryAttr, FunctionType, Region, StringAttr, TypeAttr

_FUNC_ATTRIBUTES = ("sym_name", "function_type", "sym_visibility", "arg_attrs", "res_attrs")


class FunctionSyntax:
    """The printer and parser of a function op; a dialect registers a subclass under its op's
    name, setting `default_dialect` where upstream's op names one (`func` for `func.func`,
    whose body then spells `return`)."""

    def print(self, op, printer) -> None:
        attributes = op.attributes
        printer.write(" ")
        visibility = attributes.get("sym_visibility")
        if visibility is not None:
            printer.write(visibility.value + " ")
        printer.print_symbol_name(attributes["sym_name"].value)
        signature = attributes["function_type"].value
        body = op.regions[0]
        arg_attrs = attributes.get("arg_attrs")
        printer.write("(")
        for i, t in enumerate(signature.inputs):
            if i:
                printer.write(", ")
            attrs = dict(arg_attrs[i].items) if arg_attrs is not None else None
            if body.blocks:
                printer.print_region_argument(body.blocks[0].arguments[i], attrs)
            else:
                printer.print_type(t)
                if attrs:
                    printer.print_optional_attr_dict(attrs)
        printer.write(")")
        if signature.results:
            printer.write(" -> ")
            _print_results(printer, signature.results, attributes.get("res_attrs"))
        printer.print_optional_attr_dict(attributes, elided=_FUNC_ATTRIBUTES, keyword=True)
        if body.blocks:
            printer.write(" ")
            printer.print_region(body, print_entry_args=False)

    def parse(self, parser, state) -> None:
        attributes = state.attributes
        visibility = parser.parse_optional_keyword("public", "private", "nested")
        if visibility is not None:
            attributes["sym_visibility"] = StringAttr(visibility)
        attributes["sym_name"] = StringAttr(parser.parse_symbol_name())
        arguments, inputs, arg_attrs = _parse_arguments(parser)
        results, res_attrs = [], []
        if parser.accept("->"):
            results, res_attrs = _parse_results(parser)
        attributes["function_type"] = TypeAttr(FunctionType(inputs, results))
        for name, dicts in (("arg_attrs", arg_attrs), ("res_attrs", res_attrs)):
            if any(dicts):
                attributes[name] = ArrayAttr(DictionaryAttr(d or {}) for d in dicts)
        parser.parse_optional_attr_dict_with_keyword(attributes)
        body = Region()
        if parser.lex.peek("{"):
            pos = parser.lex.pos
            if arguments is None:
                raise parser.error("expected named arguments for a function with a body", pos)
            body = parser.parse_region(arguments, isolated=True)
            if not body.blocks:
                raise parser.error("expected non-empty function body", pos)
        state.regions.append(body)


def _parse_arguments(parser):
    """`(%a: t {attrs} loc(...), ...)` or, for a declaration, `(t {attrs}, ...)`."""
    parser.expect("(")
    arguments, types, attrs = [], [], []
    named = None
    if not parser.accept(")"):
        while True:
            if parser.lex.peek("%"):
                if named is False:
                    raise parser.error("expected a type, as the other arguments")
                named = True
                arg = parser.parse_argument(allow_attributes=True)
                arguments.append(arg)
                types.append(arg.type)
                attrs.append(arg.attributes)
            else:
                if named:
                    raise parser.error("expected a named argument, as the other arguments")
                named = False
                types.append(parser.parse_type())
                attrs.append(parser.parse_attr_dict() if parser.lex.peek("{") else None)
            if not parser.accept(","):
                break
        parser.expect(")", "to end the argument list")
    return (None if named is False else arguments), types, attrs


def _parse_results(parser):
    """A type, or `(t {attrs}, ...)`."""
    if not parser.lex.peek("("):
        return [parser.parse_type()], [None]
    parser.expect("(")
    types, attrs = [], []
    if not parser.accept(")"):
        while True:
            types.append(parser.parse_type())
            attrs.append(parser.parse_attr_dict() if parser.lex.peek("{") else None)
            if not parser.accept(","):
                break
        parser.expect(")")
    return types, attrs


def _print_results(printer, types, res_attrs) -> None:
    """function_interface_impl's printFunctionResultList."""
    dicts = [dict(d.items) for d in res_attrs] if res_attrs is not None else [None] * len(types)
    parens = len(types) > 1 or isinstance(types[0], FunctionType) or bool(dicts[0])
    if parens:
        printer.write("(")
    for i, (t, attrs) in enumerate(zip(types, dicts)):
        if i:
            printer.write(", ")
        printer.print_type(t)
        if attrs:
            printer.print_optional_attr_dict(attrs)
    if parens:
        printer.write(")")
