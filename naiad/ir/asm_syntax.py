"""The registry of hand-written op syntax, by op name.

Most ops print and parse through their declarative `assembly_format` (format.py). The rest —
ops whose upstream syntax is a C++ printer and parser (`scf.for`, `tt.func`, `arith.constant`,
...) — register a syntax class here, from `naiad/dialects/syntax/`:

    @custom_syntax("scf.for")
    class ForSyntax:
        def print(self, op, printer): ...      # everything after the op name
        def parse(self, parser, state): ...    # fills an OperationState
        def result_names(self, op): ...        # optional: [(result index, name)], as MLIR's
                                               #   getAsmResultNames (`%c1024_i32`, `%cst`)
        def infer_result_types(self, state, operands): ... # optional: result types a
                                               #   declarative format does not spell
                                               #   (`operands`: field name -> values)
        def argument_names(self, op, region): ...  # optional: [(block argument, name)], as
                                               #   MLIR's getAsmBlockArgumentNames (`%in`)

A class may define only some of these: one giving just `result_names`, `argument_names` or
`infer_result_types` leaves printing and parsing to the op's assembly format. The registry is
keyed by name, so an op no dialect declares (`ttg.barrier` in a TTIR dump) can still have
its custom syntax and be kept as an UnregisteredOp.
"""

from __future__ import annotations

from collections.abc import Callable

_SYNTAX: dict[str, object] = {}
_RESULT_NAMES: dict[str, Callable] = {}
_ARGUMENT_NAMES: dict[str, Callable] = {}
_INFER_TYPES: dict[str, Callable] = {}
_BODY_PARSERS: dict[tuple[str, str], Callable] = {}


def custom_syntax(*names: str) -> Callable[[type], type]:
    """Register (an instance of) the decorated class as the syntax of ops `names`."""

    def register(cls: type) -> type:
        instance = cls()
        for name in names:
            if hasattr(instance, "print") != hasattr(instance, "parse"):
                raise TypeError(f"{cls.__name__}: define both print() and parse(), or neither")
            if hasattr(instance, "print"):
                _SYNTAX[name] = instance
            if hasattr(instance, "result_names"):
                _RESULT_NAMES[name] = instance.result_names
            if hasattr(instance, "argument_names"):
                _ARGUMENT_NAMES[name] = instance.argument_names
            if hasattr(instance, "infer_result_types"):
                _INFER_TYPES[name] = instance.infer_result_types
        return cls

    return register


def syntax_for(name: str):
    """The registered syntax object of op `name` (with print and parse), or None."""
    return _SYNTAX.get(name)


def result_names_for(name: str) -> Callable | None:
    """`result_names(op)` for op `name`, or None."""
    return _RESULT_NAMES.get(name)


def argument_names_for(name: str) -> Callable | None:
    """`argument_names(op, region)` for op `name`, or None."""
    return _ARGUMENT_NAMES.get(name)


def type_inference_for(name: str) -> Callable | None:
    """`infer_result_types(state, operands)` for op `name`, or None."""
    return _INFER_TYPES.get(name)


def body_parser(dialect: str, mnemonic: str) -> Callable[[Callable], Callable]:
    """Register `fn(parser) -> instance`: the parser of `!dialect.mnemonic<...>` (or `#...`)
    from the text after the mnemonic, for a class without a `parse_body` of its own."""

    def register(fn: Callable) -> Callable:
        _BODY_PARSERS[(dialect, mnemonic)] = fn
        return fn

    return register


def body_parser_for(dialect: str, mnemonic: str) -> Callable | None:
    return _BODY_PARSERS.get((dialect, mnemonic))


def registered_syntax() -> tuple[str, ...]:
    """The op names with a hand-written printer and parser."""
    return tuple(_SYNTAX)
