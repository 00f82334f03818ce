"""The reference evaluator on small kernels: values, memory, arguments, grids and errors.

The evaluator is the oracle of every pass's differential test, so each of these checks one
thing it must do exactly as the interpreter: masked loads, out-of-bounds errors naming the
argument, program order, argument typing.
"""

import numpy as np
import pytest
from evaluator_helpers import Kernel, tensor

from naiad.dialects import arith, tt, ub
from naiad.ir import (
    BoolAttr,
    IntegerAttr,
    NameLoc,
    StringAttr,
    create_operation,
    f16,
    f32,
    i1,
    i32,
    i64,
)
from naiad.runtime.evaluator import (
    EvaluationError,
    OutOfBoundsAccess,
    UnsupportedOpError,
    evaluate,
)

RNG = np.random.default_rng(7)
P32 = tt.ptr(f32)


def vector_add(block=32):
    k = Kernel("add", [P32, P32, P32, i32])
    x, y, out, n = k.args
    offs = k.offsets(block)
    mask = k.op(arith.CmpIOp, "slt", offs, k.splat(n, [block]))
    total = k.op(arith.AddFOp, k.load(x, offs, mask), k.load(y, offs, mask))
    k.store(out, offs, total, mask)
    return k.ret()


def test_vector_add_over_a_grid():
    x, y = RNG.standard_normal(100, np.float32), RNG.standard_normal(100, np.float32)
    out = np.full(100, np.nan, np.float32)
    assert evaluate(vector_add(), "add", [x, y, out, 100], grid=(4,)) == [()] * 4
    np.testing.assert_array_equal(out, x + y)


def test_arguments_by_name_and_torch_tensors():
    torch = pytest.importorskip("torch")
    module = vector_add()
    for i, arg in enumerate(module.body.first_op.arguments):
        arg.location = NameLoc(["x_ptr", "y_ptr", "out_ptr", "n"][i])
    x, y = torch.randn(70), torch.randn(70)
    out = torch.zeros(70)
    evaluate(module, "add", {"x_ptr": x, "y_ptr": y, "out_ptr": out, "n": 70}, grid=3)
    assert torch.equal(out, x + y)
    with pytest.raises(EvaluationError, match="missing argument"):
        evaluate(module, "add", {"x_ptr": x}, grid=1)


def test_out_of_bounds_names_the_argument():
    x, y = np.zeros(40, np.float32), np.zeros(40, np.float32)
    out = np.zeros(40, np.float32)
    module = vector_add()
    for i, arg in enumerate(module.body.first_op.arguments):
        arg.location = NameLoc(["x_ptr", "y_ptr", "out_ptr", "n"][i])
    with pytest.raises(OutOfBoundsAccess, match="argument `x_ptr`") as info:
        evaluate(module, "add", [x, y, out, 64], grid=(2,))
    assert any("tt.load" in note for note in info.value.__notes__)


def test_masked_load_gives_other():
    k = Kernel("k", [P32, P32, i32])
    x, out, n = k.args
    offs = k.offsets(16)
    mask = k.op(arith.CmpIOp, "slt", offs, k.splat(n, [16]))
    other = k.const(-7.5, tensor([16], f32))
    k.store(out, offs, k.load(x, offs, mask, other))
    module = k.ret()
    x = RNG.standard_normal(16, np.float32)
    out = np.zeros(16, np.float32)
    evaluate(module, "k", [x, out, 5])
    np.testing.assert_array_equal(out, np.where(np.arange(16) < 5, x, -7.5))


def test_programs_run_in_linear_order_x_fastest():
    """An atomic counter hands out tickets: program (x, y, z) gets its linear index."""
    k = Kernel("k", [tt.ptr(i32), tt.ptr(i32)])
    counter, order = k.args
    ticket = k.op(tt.AtomicRMWOp, "add", counter, k.const(1, i32))
    pid = [k.op(tt.GetProgramIdOp, axis) for axis in range(3)]
    num = [k.op(tt.GetNumProgramsOp, axis) for axis in range(3)]
    linear = k.op(
        arith.MulIOp, k.op(arith.AddIOp, k.op(arith.MulIOp, pid[2], num[1]), pid[1]), num[0]
    )
    linear = k.op(arith.AddIOp, linear, pid[0])
    k.op(tt.StoreOp, k.op(tt.AddPtrOp, order, ticket), linear)
    module = k.ret()
    counter, order = np.zeros(1, np.int32), np.full(24, -1, np.int32)
    evaluate(module, "k", [counter, order], grid=(4, 3, 2))
    np.testing.assert_array_equal(order, np.arange(24))


def test_scalar_arguments_are_typed_by_the_signature():
    k = Kernel("k", [i32, i64, f16, i1], [i32, i64, f16, i1])
    module = k.ret(*k.args)
    [(a, b, c, d)] = evaluate(module, "k", [2**31 + 5, -1, 0.1, True])
    assert a.dtype == np.int32 and a == -(2**31) + 5
    assert b.dtype == np.int64 and b == -1
    assert c.dtype == np.float16 and c == np.float16(0.1)
    assert d.dtype == np.bool_ and d


def test_constants_keep_their_bits():
    k = Kernel("k", [], [f32, f16, tensor([4], i32), tensor([2], i1)])
    values = (
        k.const(float("-0.0"), f32),
        k.const(65504.0, f16),
        k.const([1, -2, 2**31 - 1, -(2**31)], tensor([4], i32)),
        k.const([True, False], tensor([2], i1)),
    )
    [(z, h, ints, bools)] = evaluate(k.ret(*values), "k", [])
    assert np.signbit(z) and z.dtype == np.float32
    assert h == np.float16(65504.0)
    np.testing.assert_array_equal(ints, np.array([1, -2, 2**31 - 1, -(2**31)], np.int32))
    np.testing.assert_array_equal(bools, [True, False])


def test_poison_is_some_value_of_its_type():
    k = Kernel("k", [], [tensor([4], f32)])
    [(value,)] = evaluate(k.ret(k.op(ub.PoisonOp, tensor([4], f32))), "k", [])
    assert value.shape == (4,) and value.dtype == np.float32


def test_an_op_without_a_meaning_is_named():
    k = Kernel("k", [tensor([4], f32)], [tensor([4], f32)])
    asm = k.op(
        tt.ElementwiseInlineAsmOp,
        [k.args[0]],
        asm_string=StringAttr("mov.b32 $0, $1;"),
        constraints=StringAttr("=r,r"),
        pure=BoolAttr(True),
        packed_element=IntegerAttr(1, i32),
        result=[tensor([4], f32)],
    )
    module = k.ret(asm)
    with pytest.raises(UnsupportedOpError, match=r"tt\.elementwise_inline_asm"):
        evaluate(module, "k", [np.zeros(4, np.float32)])


def test_an_unregistered_op_is_named():
    k = Kernel("k", [f32], [f32])
    odd = k.builder.insert(create_operation("mydialect.frob", [k.args[0]], [f32], {}))
    k.op(tt.ReturnOp, [odd.results[0]])
    with pytest.raises(UnsupportedOpError, match=r"no meaning for 'mydialect\.frob'"):
        evaluate(k.module, "k", [1.0])


def test_wrong_arguments_are_reported():
    module = vector_add()
    with pytest.raises(EvaluationError, match="takes 4 argument"):
        evaluate(module, "add", [np.zeros(4, np.float32)])
    with pytest.raises(EvaluationError, match="pointer"):
        evaluate(module, "add", [1, 2, 3, 4])
    x = np.zeros(4, np.float32)
    with pytest.raises(EvaluationError, match="must be an integer"):
        evaluate(module, "add", [x, x, x, 4.0])
    with pytest.raises(EvaluationError, match=r"no tt\.func named @nope"):
        evaluate(module, "nope", [])
