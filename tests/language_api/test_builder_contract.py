"""The semantic layer drives any builder: a recording builder sees TTIR-named operations.

This is the seam the compiler's IR builder plugs into, so the test runs a real kernel body with
symbolic handles and checks the operations and types the builder is asked for.
"""

import naiad
import naiad.language as tl
from naiad.language import builder as contract
from naiad.language import dtypes as t
from naiad.language.core import tensor, use_semantic
from naiad.language.semantic import Semantic


class RecordingBuilder:
    """Makes symbolic handles `%N` and records (operation, result type)."""

    def __init__(self):
        self.ops = []

    def _make(self, name, ty):
        self.ops.append((name, str(ty)))
        return f"%{len(self.ops)}"

    def constant(self, value, ty):
        return self._make("arith.constant", ty)

    def splat(self, scalar, ty):
        return self._make("tt.splat", ty)

    def elementwise(self, op, operands, ty, **attrs):
        assert op in contract.ELEMENTWISE_OPS, op
        assert set(attrs) <= set(contract.ELEMENTWISE_OPS[op]), (op, attrs)
        return self._make(op, ty)

    def make_range(self, start, end, ty):
        return self._make("tt.make_range", ty)

    def program_id(self, axis):
        return self._make("tt.get_program_id", t.int32)

    def broadcast(self, value, ty):
        return self._make("tt.broadcast", ty)

    def expand_dims(self, value, axis, ty):
        return self._make("tt.expand_dims", ty)

    def load(self, ptr, mask, other, ty):
        return self._make("tt.load", ty)

    def store(self, ptr, value, mask):
        self.ops.append(("tt.store", ""))

    def reduce(self, values, axis, combine, types):
        lhs = [self._make("block_arg", s) for s in types]
        rhs = [self._make("block_arg", s) for s in types]
        results = combine(lhs, rhs, ())
        self.ops.append(("tt.reduce.return", ""))
        return [self._make("tt.reduce", s) for s, _ in zip(types, results)]


def _add_body(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def _run(body, *args):
    builder = RecordingBuilder()
    with use_semantic(Semantic(builder)):
        body(*args)
    return builder.ops


def test_vector_add_asks_for_ttir_operations():
    ptr = t.pointer_type(t.float32)
    args = [tensor(f"%arg{i}", ptr) for i in range(3)] + [tensor("%arg3", t.int32)]
    ops = [name for name, _ in _run(_add_body, *args, tl.constexpr(128))]
    assert ops == [
        "tt.get_program_id",
        "arith.constant",
        "arith.muli",
        "tt.make_range",
        "tt.splat",
        "arith.addi",
        "tt.splat",
        "arith.cmpi",
        "tt.splat",
        "tt.addptr",
        "tt.load",
        "tt.splat",
        "tt.addptr",
        "tt.load",
        "tt.splat",
        "tt.addptr",
        "arith.addf",
        "tt.store",
    ]


def test_reduction_builds_its_combine_region_through_the_builder():
    def body(x_ptr):
        x = tl.load(x_ptr + tl.arange(0, 64))
        return tl.sum(x, axis=0)

    ops = _run(body, tensor("%arg0", t.pointer_type(t.int8)))
    names = [name for name, _ in ops]
    assert "arith.extsi" in names  # int8 sums accumulate in int32
    region = names[names.index("block_arg") : names.index("tt.reduce.return")]
    assert region == ["block_arg", "block_arg", "arith.addi"]
    assert ops[-1] == ("tt.reduce", "int32")


def test_jit_function_body_is_plain_python_over_the_language():
    @naiad.jit
    def kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        _add_body(x_ptr, y_ptr, out_ptr, n, BLOCK)

    ptr = t.pointer_type(t.float32)
    args = [tensor(f"%arg{i}", ptr) for i in range(3)] + [tensor("%arg3", t.int32)]
    assert _run(kernel.fn, *args, tl.constexpr(64))[-1] == ("tt.store", "")
