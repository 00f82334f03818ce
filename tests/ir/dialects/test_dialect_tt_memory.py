"""`tt` loads, stores, atomics, block pointers and tensor descriptors."""

from dialect_helpers import arg, args, const, fails, folded, tensor

from naiad.dialects import tt
from naiad.ir import (
    BoolAttr,
    DenseArrayAttr,
    IntegerAttr,
    MemoryRead,
    MemoryWrite,
    Pure,
    f16,
    f32,
    i1,
    i32,
    i64,
    verify,
)

P = tt.ptr(f32)
PTRS = tensor([128], P)


def test_load_infers_the_pointee_and_keeps_defaults_out():
    ptrs, mask, other = args(PTRS, tensor([128], i1), tensor([128], f32))
    op = tt.LoadOp(ptrs, mask, other, cache="none", evict="evict_last", isVolatile=False)
    assert op.result.type is tensor([128], f32)
    assert "cache" not in op.attributes and "isVolatile" not in op.attributes
    assert op.evict is tt.EvictionPolicy.get("evict_last")
    assert op.attributes["operandSegmentSizes"] is DenseArrayAttr(i32, [1, 1, 1])
    assert op.mask is mask and op.other is other
    verify(op)
    scalar = tt.LoadOp(arg(P))
    assert scalar.result.type is f32 and scalar.mask is None
    verify(scalar)


def test_load_rules():
    ptrs = arg(PTRS)
    fails(tt.LoadOp(ptrs, result=tensor([128], f16)), "result matches ptr type")
    fails(tt.LoadOp(ptrs, arg(tensor([64], i1))), "requires the same shape")
    fails(tt.LoadOp(ptrs, arg(tensor([128], i32))), "must be 1-bit signless integer")
    fails(tt.LoadOp(ptrs, arg(tensor([128], i1)), arg(tensor([128], f16))), "other matches ptr")
    fails(tt.LoadOp(arg(f32), result=f32), "must be ptr-like or tensor pointer")


def test_load_through_a_block_pointer():
    block = tt.ptr(tensor([64, 32], f16))
    op = tt.LoadOp(arg(block), boundaryCheck=[0, 1], padding="zero")
    assert op.result.type is tensor([64, 32], f16)
    assert op.boundaryCheck is DenseArrayAttr(i32, [0, 1])
    verify(op)


def test_volatile_loads_write_too():
    ptrs = arg(PTRS)
    plain = tt.LoadOp(ptrs)
    volatile = tt.LoadOp(ptrs, isVolatile=True)
    assert MemoryRead in plain.traits and MemoryWrite not in plain.traits
    assert MemoryWrite in volatile.traits
    assert MemoryWrite not in tt.LoadOp.traits  # the class's own, what the verifier checks


def test_store():
    ptrs, value, mask = args(PTRS, tensor([128], f32), tensor([128], i1))
    op = tt.StoreOp(ptrs, value, mask, cache="wb")
    assert op.cache is tt.CacheModifier.get("wb")
    assert "operandSegmentSizes" not in op.attributes  # one optional group: no sizes
    verify(op)
    verify(tt.StoreOp(arg(P), arg(f32)))
    fails(tt.StoreOp(ptrs, arg(tensor([128], f16))), "value type matches ptr type")
    fails(tt.StoreOp(ptrs, value, arg(tensor([64], i1))), "requires the same shape")


def test_atomic_rmw():
    ptrs, val, mask = args(PTRS, tensor([128], f32), tensor([128], i1))
    op = tt.AtomicRMWOp("fadd", ptrs, val, mask, sem="acq_rel", scope="gpu")
    assert op.result.type is val.type
    assert op.atomic_rmw_op is IntegerAttr(5, i32) and op.sem is IntegerAttr(4, i32)
    verify(op)
    counter = tt.AtomicRMWOp("add", arg(tt.ptr(i32)), arg(i32), const(True, i1), sem="relaxed")
    verify(counter)
    fails(tt.AtomicRMWOp("add", ptrs, arg(tensor([128], i32))), "ptr type matches value type")
    fails(tt.AtomicRMWOp("fadd", ptrs, val, arg(i1)), "requires the same shape")
    fails(tt.AtomicRMWOp("fadd", ptrs, val, arg(tensor([128], i32))), "must be 1-bit")
    assert {MemoryRead, MemoryWrite} <= op.traits and Pure not in op.traits


def test_atomic_cas():
    lock, cmp, val = args(tt.ptr(i32), i32, i32)
    op = tt.AtomicCASOp(lock, cmp, val, sem="acquire")
    assert op.result.type is i32
    verify(op)
    fails(tt.AtomicCASOp(lock, arg(i64), arg(i64)), "ptr type matches cmp type")


def test_block_pointers():
    base, dims, strides, offsets = arg(tt.ptr(f16)), args(i64, i64), args(i64, i64), args(i32, i32)
    block = tt.ptr(tensor([64, 32], f16))
    op = tt.MakeTensorPtrOp(base, dims, strides, offsets, [1, 0], result=block)
    assert op.offsets == offsets and op.order is DenseArrayAttr(i32, [1, 0])
    verify(op)
    fails(
        tt.MakeTensorPtrOp(base, dims[:1], strides[:1], offsets[:1], [0], result=block),
        "expected 2 shape, stride and offset operands",
    )
    fails(
        tt.MakeTensorPtrOp(arg(tt.ptr(f32)), dims, strides, offsets, [1, 0], result=block),
        "infer pointer type from the result type",
    )
    moved = tt.AdvanceOp(op.result, offsets)
    assert moved.result.type is block
    verify(moved)
    zero = const(0, i32)
    assert folded(tt.AdvanceOp(op.result, [zero, zero])) is op.result
    fails(tt.AdvanceOp(op.result, offsets, result=tt.ptr(tensor([64, 32], f32))), "result type")


def test_tensor_descriptors():
    desc_type = tt.TensorDescType(tensor([64, 64], f16))
    base, m, n, s0, s1 = args(tt.ptr(f16), i32, i32, i64, i64)
    make = tt.MakeTensorDescOp(base, [m, n], [s0, s1], result=desc_type)
    verify(make)
    fails(tt.MakeTensorDescOp(base, [m], [s0], result=desc_type), "expected 2 shape and stride")
    desc = make.result
    load = tt.DescriptorLoadOp(desc, [m, n])
    assert load.result.type is tensor([64, 64], f16)
    verify(load)
    fails(tt.DescriptorLoadOp(desc, [m]), "expected 2 indices")
    fails(tt.DescriptorLoadOp(desc, [m, n], result=tensor([64, 64], f32)), "element types")
    fails(tt.DescriptorLoadOp(desc, [m, n], result=tensor([64, 32], f16)), "number of elements")
    store = tt.DescriptorStoreOp(desc, load.result, [m, n])
    verify(store)
    fails(tt.DescriptorStoreOp(desc, arg(tensor([32], f16)), [m, n]), "number of elements")
    verify(
        tt.DescriptorReduceOp(desc, load.result, [m, n], kind=tt.DescriptorReduceKind.get("add"))
    )
    rows = tt.TensorDescType(tensor([1, 64], f16))
    gathered = tt.DescriptorGatherOp(
        arg(rows), arg(tensor([32], i32)), m, result=tensor([32, 64], f16)
    )
    verify(gathered)
    verify(tt.DescriptorScatterOp(arg(rows), arg(tensor([32], i32)), m, gathered.result))


def test_defaults_table_matches_the_fields():
    assert tt.LoadOp.attribute_defaults["isVolatile"] is BoolAttr(False)
    assert tt.DotOp.attribute_defaults["inputPrecision"] is tt.InputPrecision.get("ieee")
