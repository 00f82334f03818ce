"""What the middle layer cannot lower is the user's error: a `KernelNotImplementedError` (a
ConversionError) at the op's own file:line:col, which the pass manager lets through; a bug of
the layer itself is Naiad's InternalError naming the pass."""

import pytest

import naiad.passes  # noqa: F401
from naiad.backends.cpu.compiler import LINALG_PIPELINE, TARGET_TTIR_PIPELINE
from naiad.dialects import tt
from naiad.errors import InternalError, KernelNotImplementedError
from naiad.ir.parser import parse_module
from naiad.middle.linalg import ConversionError, functions  # noqa: F401  (registers converters)
from naiad.middle.linalg.conversion import CONVERTERS
from naiad.passes.pipeline import run_pipeline

POINTER_TO_POINTERS = """
tt.func public @k(%x: !tt.ptr<f32>, %i: i64, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %p = tt.int_to_ptr %i : i64 -> !tt.ptr<!tt.ptr<f32>> loc("kernel.py":4:7)
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%q = %p) -> (!tt.ptr<!tt.ptr<f32>>) : i32 {
    %next = tt.addptr %q, %c1 : !tt.ptr<!tt.ptr<f32>>, i32
    scf.yield %next : !tt.ptr<!tt.ptr<f32>>
  } loc("kernel.py":5:9)
  tt.return
}
"""

CARRIED_DESCRIPTOR = """
tt.func public @k(%a: !tt.ptr<f16>, %m: i32, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %s = arith.constant 1 : i64
  %d = tt.make_tensor_descriptor %a, [%m, %n], [%s, %s] : <f16>, <16x16xf16>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%e = %d) -> (!tt.tensordesc<16x16xf16>) : i32 {
    scf.yield %e : !tt.tensordesc<16x16xf16>
  } loc("attention.py":31:4)
  tt.return
}
"""


def _convert(text: str):
    run_pipeline(TARGET_TTIR_PIPELINE + LINALG_PIPELINE, parse_module(text, "kernel.ttir"))


@pytest.mark.parametrize(
    "text, where, words",
    [
        (POINTER_TO_POINTERS, ("kernel.py", 4, 7), "a pointer to pointers has no lowering"),
        (CARRIED_DESCRIPTOR, ("attention.py", 31, 4), "tensor descriptor carried by a loop"),
    ],
    ids=["pointer_to_pointers", "carried_descriptor"],
)
def test_unsupported_ops_are_located_user_errors(text, where, words):
    with pytest.raises(KernelNotImplementedError) as caught:
        _convert(text)
    error = caught.value
    assert isinstance(error, ConversionError) and isinstance(error, NotImplementedError)
    location = error.location
    assert (location.filename, location.lineno, location.col) == where
    assert words in error.message
    assert str(error).startswith(f"{where[0]}:{where[1]}:{where[2]}: error: ")


def test_a_bug_of_the_layer_is_an_internal_error(monkeypatch):
    def broken(c, op):
        raise LookupError("a converter's own bug")

    monkeypatch.setitem(CONVERTERS, tt.ReturnOp.name, broken)
    with pytest.raises(InternalError, match="tt-to-linalg"):
        _convert("tt.func public @k() {\n  tt.return\n}\n")
