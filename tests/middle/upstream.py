"""Checking that the MLIR Naiad prints is upstream MLIR: xDSL (pinned in the `test` extra)
parses it with every dialect it knows and runs its verifier.

    from middle.upstream import assert_round_trip, assert_upstream_valid
    assert_upstream_valid(print_module(module))
    assert_upstream_valid(text, allow={"memref.generic_atomic_rmw"})
    text = assert_round_trip(module)   # print -> parse -> print, structurally equal

xDSL lacks some upstream ops, or refuses forms upstream accepts: those are listed in
`XDSL_MISSING`, each with the reason. Others it defines without their custom syntax, reading
only the generic form: `XDSL_GENERIC_ONLY`. An entry may concern one form of its op only
(`scf.while` without carried values, a `linalg.matmul` of mixed element types): `XDSL_FORMS`
then picks the ops of that form, and the op's other forms reach xDSL as they are. A call names
in `allow` the ones its text may hold, and their custom syntax is checked by golden files
instead (tests/middle/golden/*.mlir, hand-checked against upstream's ODS and tests). An allowed
op reaches xDSL in the generic form: one of `XDSL_GENERIC_ONLY` under its own name, so xDSL
still verifies it; one of `XDSL_MISSING` under a name no dialect registers, so xDSL keeps it as
an unregistered op and still checks everything around it (its operands' definitions, its
results' uses, the ops of its regions). A terminator the custom syntax leaves out (an
operand-less `scf.yield`) is printed where the op before it is opaque, since xDSL only adds
the implicit terminator after an op it knows not to be one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import pytest

import naiad.dialects  # noqa: F401  (registers the ops the text holds)
from naiad.ir import Terminator, element_type
from naiad.ir.equality import assert_structurally_equal
from naiad.ir.gc_pause import gc_paused
from naiad.ir.parser import parse_module
from naiad.ir.printer import Printer, print_module

XDSL_MISSING: dict[str, str] = {
    "memref.generic_atomic_rmw": "not defined in xDSL 0.74",
    "memref.atomic_yield": "not defined in xDSL 0.74 (the terminator of generic_atomic_rmw)",
    "memref.reinterpret_cast": (
        "xDSL's definition requires a ranked source; upstream also casts memref<*xT>"
    ),
    "bufferization.materialize_in_destination": (
        "xDSL's definition requires a memref destination of the identity layout and of the "
        "source's exact shape; upstream takes any layout and compatible shapes"
    ),
    "linalg.batch_matmul": "not defined in xDSL 0.74",
    "linalg.map": "not defined in xDSL 0.74",
    "tensor.bitcast": "not defined in xDSL 0.74",
    "tensor.generate": "not defined in xDSL 0.74",
    "llvm.intr.assume": "not defined in xDSL 0.74 (`tl.assume`'s hint, kept for LLVM)",
    "arith.truncf": (
        "with a rounding mode (`arith.truncf %x toward_zero : f32 to bf16`): xDSL 0.74's "
        "definition has no `roundingmode` property"
    ),
    "linalg.matmul": (
        "of mixed element types (f16 inputs into an f32 accumulator, which upstream widens the "
        "inputs for): xDSL 0.74's verifier binds one element type to all operands"
    ),
    "linalg.reduce": (
        "with several inputs (a reduction of (value, index) pairs): xDSL 0.74's definition "
        "takes one input and one init"
    ),
}
"""Upstream ops that xDSL 0.74 cannot check, and why."""

XDSL_GENERIC_ONLY: dict[str, str] = {
    "memref.atomic_rmw": "defined in xDSL 0.74 without its assembly format",
    "memref.cast": "defined in xDSL 0.74 without its assembly format",
    "memref.copy": "defined in xDSL 0.74 without its assembly format",
    "memref.extract_aligned_pointer_as_index": "defined in xDSL 0.74 without its assembly format",
    "scf.while": (
        "without carried values: upstream prints `scf.while : () -> () {`, which xDSL 0.74's "
        "parser cannot read (it expects the `(` of the initial values)"
    ),
}
"""Upstream ops that xDSL 0.74 verifies in the generic form only."""


def _mixed_element_types(op) -> bool:
    return len({element_type(v.type) for v in op.operands}) > 1


XDSL_FORMS: dict[str, Callable] = {
    "arith.truncf": lambda op: "roundingmode" in op.attributes,
    "linalg.reduce": lambda op: len(op.results) > 1,
    "scf.while": lambda op: not op.operands and not op.results,
    "linalg.matmul": _mixed_element_types,
}
"""The entries above that concern one form of their op: which ops of the name they mean."""

_UNCHECKED = "xdsl_unchecked."


def assert_upstream_valid(text: str, allow: frozenset[str] | set[str] = frozenset()) -> None:
    """Fail (with xDSL's message and the text it read) unless xDSL parses and verifies `text`.

    The text is first read by Naiad's parser and printed again without locations: xDSL reads
    no location alias defined after its use, as Triton-style dumps put them. Ops named in
    `allow` (each in `XDSL_MISSING` or `XDSL_GENERIC_ONLY`) reach xDSL in the generic form.
    """
    unknown = sorted(set(allow) - XDSL_MISSING.keys() - XDSL_GENERIC_ONLY.keys())
    if unknown:
        pytest.fail(f"{unknown} not in XDSL_MISSING or XDSL_GENERIC_ONLY: add them with the reason")
    checked = _text_for_xdsl(text, frozenset(allow))
    pytest.importorskip("xdsl")
    from xdsl.dialects.builtin import UnregisteredOp
    from xdsl.parser import Parser
    from xdsl.utils.exceptions import DiagnosticException, ParseError

    try:
        module = Parser(_xdsl_context(), checked).parse_module()
        module.verify()
    except (ParseError, DiagnosticException) as exc:
        pytest.fail(f"xDSL rejects the text:\n{exc}\n--- text given to xDSL ---\n{checked}")
    # The context admits unregistered ops (for the opaque ones): any other is a name xDSL
    # does not know, printed in the generic form, which must not pass unnoticed.
    for op in module.walk():
        if isinstance(op, UnregisteredOp) and not op.op_name.data.startswith(_UNCHECKED):
            pytest.fail(f"xDSL does not know '{op.op_name.data}'\n--- text ---\n{checked}")


def assert_round_trip(module) -> str:
    """print -> parse -> print gives the same text, and the module read back is structurally
    equal to `module` (locations where they were printed). Returns the text without
    locations, the form tests compare with upstream's."""
    printed = set()
    text = print_module(module, record=printed)
    parsed = parse_module(text, "roundtrip.mlir")
    assert_structurally_equal(module, parsed, locations=printed.__contains__)
    assert print_module(parsed) == text
    return print_module(module, locations=False)


def _text_for_xdsl(text: str, opaque: frozenset[str]) -> str:
    module = parse_module(text)
    with gc_paused():
        printer = _OpaquePrinter(module, opaque)
        printer.print_op(module)
        return printer.finish()


class _OpaquePrinter(Printer):
    """Naiad's printer, with the `opaque` ops in the generic form (those xDSL lacks under an
    unregistered name), and the terminators after them printed."""

    def __init__(self, root, opaque: frozenset[str]):
        super().__init__(root, locations=False)
        self.opaque = opaque

    def is_opaque(self, op) -> bool:
        form = XDSL_FORMS.get(op.name)
        return op.name in self.opaque and (form is None or form(op))

    def _print_custom(self, op) -> bool:
        if not self.is_opaque(op):
            return super()._print_custom(op)
        start = len(self.out)
        self.print_generic(op)
        if op.name in XDSL_MISSING:
            self.out[start] = '"' + _UNCHECKED + self.out[start][1:]
        return True

    def _print_block(self, block, print_header: bool, print_terminator: bool) -> None:
        last = block.last_op
        if last is not None and Terminator in last.traits and last.prev_op is not None:
            print_terminator = print_terminator or self.is_opaque(last.prev_op)
        super()._print_block(block, print_header, print_terminator)


@functools.cache
def _xdsl_context():
    """xDSL's context with every dialect it has, admitting unregistered ops."""
    from xdsl.context import Context
    from xdsl.dialects import get_all_dialects

    context = Context(allow_unregistered=True)
    for name, factory in get_all_dialects().items():
        context.register_dialect(name, factory)
    return context
