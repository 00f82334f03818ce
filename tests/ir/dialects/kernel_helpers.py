"""Small `func.func` kernels to hold the ops under test, and the lines of their printed
bodies, for the tests of the dialects of the Linalg form (memref, bufferization, ...)."""

from middle.upstream import assert_round_trip, assert_upstream_valid

from naiad.dialects import func
from naiad.ir import Builder, FunctionType, ModuleOp, verify


def kernel(types, body):
    """A verified module of one `func.func @k(types)` whose body `body(builder, *args)`
    builds."""
    f = func.FuncOp("k", FunctionType(types, []))
    b = Builder()
    with b.at_end(f.entry_block):
        body(b, *f.arguments)
        b.create(func.ReturnOp)
    module = ModuleOp([f])
    verify(module)
    return module


def body_lines(text: str) -> list[str]:
    """The ops of the function body, unindented (`return` left out)."""
    lines = [line.strip() for line in text.splitlines()[2:-3]]
    return [line for line in lines if line]


def check(module, expected: list[str], allow=frozenset()) -> str:
    text = assert_round_trip(module)
    assert body_lines(text) == expected
    assert_upstream_valid(text, allow=allow)
    return text
