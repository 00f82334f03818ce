"""Whole-tensor ops in the reference evaluator: reductions and scans with their combine
regions, dots, shape ops, atomics, block pointers, tensor descriptors, library calls and the
debug ops."""

import ml_dtypes
import numpy as np
import pytest
from evaluator_helpers import Kernel, tensor

from naiad.dialects import arith, math, scf, tt
from naiad.dialects.tt.attributes import DescriptorReduceKind, ScaleDotElemType
from naiad.ir import (
    Block,
    BoolAttr,
    FloatType,
    IntegerAttr,
    Region,
    f16,
    f32,
    i1,
    i8,
    i32,
    i64,
)
from naiad.runtime.evaluator import DeviceAssertionError, UnsupportedOpError, evaluate
from naiad.tools.tensor_descriptor import TensorDescriptor

RNG = np.random.default_rng(5)
f8 = FloatType("f8E4M3FN")


def test_reduce_with_a_two_operand_combine_region():
    """argmax along axis 1: (value, index) pairs, the larger value (the first on ties) wins."""
    t, ti = tensor([4, 8], f32), tensor([4, 8], i32)
    k = Kernel("k", [t, ti], [tensor([4], f32), tensor([4], i32)])
    red = k.create(tt.ReduceOp, k.args, 1)
    a, ia, b, ib = red.combineOp.block.arguments
    with k.at_end(red.combineOp.block):
        take_a = k.op(arith.CmpFOp, "oge", a, b)
        k.op(
            tt.ReduceReturnOp,
            [k.op(arith.SelectOp, take_a, a, b), k.op(arith.SelectOp, take_a, ia, ib)],
        )
    module = k.ret(*red.results)
    x = RNG.standard_normal((4, 8)).astype(np.float32)
    x[2, 5] = x[2].max() + 1
    x[2, 6] = x[2, 5]
    index = np.broadcast_to(np.arange(8, dtype=np.int32), (4, 8)).copy()
    [(values, indices)] = evaluate(module, "k", [x, index])
    np.testing.assert_array_equal(values, x.max(axis=1))
    np.testing.assert_array_equal(indices, x.argmax(axis=1))


def test_reduce_region_with_control_flow_runs_one_element_at_a_time():
    """A combine region with an `scf.if` on its scalar arguments: the evaluator retries one
    element at a time, as the interpreter does, and gets the same sum."""
    k = Kernel("k", [tensor([8], i32)], [i32])
    red = k.create(tt.ReduceOp, k.args, 0)
    a, b = red.combineOp.block.arguments
    with k.at_end(red.combineOp.block):
        branch = k.create(scf.IfOp, k.op(arith.CmpIOp, "sgt", a, b), [i32])
        with k.at_end(branch.then_block):
            k.op(scf.YieldOp, [k.op(arith.AddIOp, a, b)])
        with k.at_end(branch.else_block):
            k.op(scf.YieldOp, [k.op(arith.AddIOp, b, a)])
        k.op(tt.ReduceReturnOp, [branch.results[0]])
    x = RNG.integers(-100, 100, 8, dtype=np.int32)
    assert evaluate(k.ret(red.results[0]), "k", [x]) == [(x.sum(),)]


def test_scan_forward_and_reverse():
    t = tensor([16], f32)
    k = Kernel("k", [t], [t, t])
    outs = []
    for reverse in (False, True):
        scan = k.create(tt.ScanOp, k.args, 0, reverse)
        a, b = scan.combineOp.block.arguments
        with k.at_end(scan.combineOp.block):
            k.op(tt.ScanReturnOp, [k.op(arith.AddFOp, a, b)])
        outs.append(scan.results[0])
    x = RNG.integers(-8, 8, 16).astype(np.float32)  # exact sums: any order agrees
    [(forward, backward)] = evaluate(k.ret(*outs), "k", [x])
    np.testing.assert_array_equal(forward, np.cumsum(x))
    np.testing.assert_array_equal(backward, np.cumsum(x[::-1])[::-1])


def test_dot_float_and_integer():
    a, b = (
        RNG.standard_normal((16, 8)).astype(np.float32),
        RNG.standard_normal((8, 16)).astype(np.float32),
    )
    c = RNG.standard_normal((16, 16)).astype(np.float32)
    k = Kernel(
        "k",
        [tensor([16, 8], f32), tensor([8, 16], f32), tensor([16, 16], f32)],
        [tensor([16, 16], f32)],
    )
    module = k.ret(k.op(tt.DotOp, *k.args))
    [(d,)] = evaluate(module, "k", [a, b, c])
    expected = (a.astype(np.float64) @ b.astype(np.float64) + c).astype(np.float32)
    np.testing.assert_array_equal(d, expected)
    ia, ib = (
        RNG.integers(-128, 128, (16, 16), dtype=np.int8),
        RNG.integers(-128, 128, (16, 16), dtype=np.int8),
    )
    t8, t32 = tensor([16, 16], i8), tensor([16, 16], i32)
    k = Kernel("k", [t8, t8, t32], [t32])
    [(d,)] = evaluate(k.ret(k.op(tt.DotOp, *k.args)), "k", [ia, ib, np.zeros((16, 16), np.int32)])
    np.testing.assert_array_equal(d, ia.astype(np.int32) @ ib.astype(np.int32))


def test_shape_ops():
    results = [
        tensor(shape, f32) for shape in ([8, 4], [4, 8, 2], [4, 8], [32], [1, 4, 8], [8, 8], [4, 8])
    ]
    k = Kernel("k", [tensor([4, 8], f32), tensor([4, 8], i32)], [*results, tensor([8], i32)])
    x, idx = k.args
    trans = k.op(tt.TransOp, x, [1, 0])
    joined = k.op(tt.JoinOp, x, x)
    low, _ = k.create(tt.SplitOp, joined).results
    flat = k.op(tt.ReshapeOp, x, shape=[32])
    expanded = k.op(tt.ExpandDimsOp, x, 0)
    cat = k.op(tt.CatOp, x, x, result=tensor([8, 8], f32))
    gathered = k.op(tt.GatherOp, x, idx, 1)
    flat_idx = k.op(tt.ReshapeOp, idx, shape=[32])
    hist = k.op(tt.HistogramOp, flat_idx, result=tensor([8], i32))
    module = k.ret(trans, joined, low, flat, expanded, cat, gathered, hist)
    x = RNG.standard_normal((4, 8)).astype(np.float32)
    idx = RNG.integers(0, 8, (4, 8), dtype=np.int32)
    [(tr, jo, lo, fl, ex, ca, ga, hi)] = evaluate(module, "k", [x, idx])
    np.testing.assert_array_equal(tr, x.T)
    np.testing.assert_array_equal(jo, np.stack([x, x], axis=-1))
    np.testing.assert_array_equal(lo, x)
    np.testing.assert_array_equal(fl, x.reshape(32))
    np.testing.assert_array_equal(ex, x[None])
    np.testing.assert_array_equal(ca, np.concatenate([x, x]))
    np.testing.assert_array_equal(ga, np.take_along_axis(x, idx, 1))
    np.testing.assert_array_equal(hi, np.bincount(idx.reshape(-1), minlength=8))


def test_atomics_masked_unsigned_and_compare_and_swap():
    k = Kernel("k", [tt.ptr(i32), tt.ptr(i32), tt.ptr(i32)], [tensor([8], i32), tensor([8], i32)])
    counts, umax, lock = k.args
    offs = k.op(tt.MakeRangeOp, 0, 8)
    ones = k.const(1, tensor([8], i32))
    half = k.op(arith.CmpIOp, "slt", offs, k.const(4, tensor([8], i32)))
    zero_index = k.const(0, tensor([8], i32))
    old = k.op(tt.AtomicRMWOp, "add", k.ptrs(counts, zero_index), ones, half)
    # -3 .. 4: as unsigned numbers, -3 .. -1 are the largest
    values = k.op(arith.SubIOp, offs, k.const(3, tensor([8], i32)))
    k.op(tt.AtomicRMWOp, "umax", k.ptrs(umax, offs), values)
    swapped = k.op(tt.AtomicCASOp, k.ptrs(lock, zero_index), k.const(0, tensor([8], i32)), ones)
    module = k.ret(old, swapped)
    counts, umax, lock = np.zeros(1, np.int32), np.full(8, 2, np.int32), np.zeros(1, np.int32)
    [(old, swapped)] = evaluate(module, "k", [counts, umax, lock])
    assert counts[0] == 4 and list(old[:4]) == [0, 1, 2, 3]
    expected = np.maximum(
        np.full(8, 2, np.uint32), (np.arange(8) - 3).astype(np.int32).view(np.uint32)
    )
    np.testing.assert_array_equal(umax.view(np.uint32), expected)
    assert lock[0] == 1 and list(swapped) == [0] + [1] * 7  # only the first lane takes the lock


def test_atomic_poll_sees_the_value_or_times_out():
    """A flag holding a random value: a poll for it is true, a poll for another with a timeout
    of zero (one read) is false; neither writes."""
    k = Kernel("k", [tt.ptr(i64)], [i1, i1])
    (flag,) = k.args
    value = int(RNG.integers(1, 2**62))
    seen = k.op(tt.AtomicPollOp, flag, k.const(value, i64), sem="relaxed", scope="sys")
    missed = k.op(tt.AtomicPollOp, flag, k.const(value + 1, i64), k.const(0, i64))
    module = k.ret(seen, missed)
    flags = np.array([value], np.int64)
    [(seen, missed)] = evaluate(module, "k", [flags])
    assert bool(seen) and not bool(missed) and flags[0] == value


def test_block_pointers_bound_check_and_pad():
    """A 4x4 window at (2, 6) of a 5x8 tensor: rows and columns past the edge read NaN."""
    base = RNG.standard_normal(40).astype(np.float32)
    k = Kernel("k", [tt.ptr(f32), tt.ptr(f32)])
    src, dst = k.args
    block = tt.ptr(tensor([4, 4], f32))
    shape = [k.const(v, i64) for v in (5, 8)]
    strides = [k.const(v, i64) for v in (8, 1)]
    offsets = [k.const(v, i32) for v in (0, 0)]
    ptr = k.op(tt.MakeTensorPtrOp, src, shape, strides, offsets, [1, 0], result=block)
    ptr = k.op(tt.AdvanceOp, ptr, [k.const(2, i32), k.const(6, i32)], result=block)
    window = k.op(tt.LoadOp, ptr, boundaryCheck=[0, 1], padding="nan")
    out = k.op(tt.MakeTensorPtrOp, dst, shape, strides, offsets, [1, 0], result=block)
    k.op(tt.StoreOp, out, window, boundaryCheck=[0, 1])
    module = k.ret()
    dst = np.zeros(40, np.float32)
    evaluate(module, "k", [base, dst])
    padded = np.full((6, 10), np.nan, np.float32)
    padded[:5, :8] = base.reshape(5, 8)
    expected = np.zeros((5, 8), np.float32)
    expected[:4, :4] = padded[2:6, 6:10]
    np.testing.assert_array_equal(dst.reshape(5, 8), expected)


def test_tensor_descriptors_from_the_kernel_and_from_the_host():
    a = RNG.standard_normal((6, 12)).astype(np.float16)
    k = Kernel("k", [tt.ptr(f16), tt.ptr(f16), i32, i32])
    src, dst, rows, cols = k.args
    desc_type = tt.TensorDescType(tensor([4, 8], f16))
    strides = [k.op(arith.ExtSIOp, cols, out=i64), k.const(1, i64)]
    descs = [
        k.op(tt.MakeTensorDescOp, p, [rows, cols], strides, result=desc_type) for p in (src, dst)
    ]
    pid = [k.op(tt.GetProgramIdOp, axis) for axis in (0, 1)]
    at = [k.op(arith.MulIOp, pid[0], k.const(4, i32)), k.op(arith.MulIOp, pid[1], k.const(8, i32))]
    block = k.op(tt.DescriptorLoadOp, descs[0], at)
    k.op(tt.DescriptorStoreOp, descs[1], block, at)
    module = k.ret()
    out = np.zeros_like(a)
    evaluate(module, "k", [a, out, 6, 12], grid=(2, 2))
    np.testing.assert_array_equal(out, a)

    host = Kernel("h", [desc_type, tt.ptr(f16)])
    desc, dst = host.args
    block = host.op(tt.DescriptorLoadOp, desc, [host.const(4, i32), host.const(8, i32)])
    offs = host.op(tt.MakeRangeOp, 0, 32)
    host.op(tt.StoreOp, host.ptrs(dst, offs), host.op(tt.ReshapeOp, block, shape=[32]))
    out = np.full(32, -1, np.float16)
    evaluate(host.ret(), "h", [TensorDescriptor.from_tensor(a, [4, 8]), out])
    expected = np.zeros((4, 8), np.float16)
    expected[:2, :4] = a[4:, 8:]  # the rest is out of bounds: zero padding
    np.testing.assert_array_equal(out, expected.reshape(32))


def test_library_calls_and_math_functions():
    t, t16 = tensor([8], f32), tensor([8], f16)
    ti = tensor([8], i32)
    k = Kernel("k", [t, t16, ti], [t, t16, ti, tensor([8], i1)])
    x, h, n = k.args
    tanh = k.op(tt.ExternElementwiseOp, [x], "__nv_tanhf", libname="libdevice", result=t)
    tanh16 = k.op(math.TanhOp, h)
    hi = k.op(tt.ExternElementwiseOp, [n, n], "__nv_umulhi", libname="libdevice", result=ti)
    nan = k.op(math.IsNaNOp, k.op(math.LogOp, x))
    module = k.ret(tanh, tanh16, hi, nan)
    x = RNG.standard_normal(8).astype(np.float32)
    n = np.array([-1, 2, -(2**31), 7, 0, 1, -5, 3], np.int32)
    [(t32, t16, hi, nan)] = evaluate(module, "k", [x, x.astype(np.float16), n])
    np.testing.assert_array_equal(t32, np.tanh(x.astype(np.float64)).astype(np.float32))
    np.testing.assert_allclose(t16, np.tanh(x.astype(np.float16)), rtol=1e-3)
    u = n.view(np.uint32).astype(np.uint64)
    np.testing.assert_array_equal(hi.view(np.uint32), ((u * u) >> np.uint64(32)).astype(np.uint32))
    np.testing.assert_array_equal(nan, x < 0)


def test_print_and_assert():
    k = Kernel("k", [tensor([4], i32)])
    (x,) = k.args
    k.op(tt.PrintOp, " x: ", [x], isSigned=[0])
    positive = k.op(arith.CmpIOp, "sge", x, k.const(0, tensor([4], i32)))
    k.op(tt.AssertOp, positive, "x must not be negative")
    module = k.ret()
    lines = []
    evaluate(module, "k", [np.array([1, 2, 3, 4], np.int32)], out=lines.append)
    assert lines[1] == "pid (0, 0, 0) idx (1) x: 2"
    lines.clear()
    with pytest.raises(DeviceAssertionError, match="x must not be negative"):
        evaluate(module, "k", [np.array([1, -2, 3, 4], np.int32)], out=lines.append)
    assert lines[1] == f"pid (0, 0, 0) idx (1) x: {2**32 - 2}"  # printed unsigned


def test_map_elementwise_runs_its_scalar_region():
    """|x| written with an `scf.if` on the scalar: run one element at a time."""
    t = tensor([8], f32)
    k = Kernel("k", [t], [t])
    region = Region([Block([f32])])
    mapped = k.create(
        tt.MapElementwiseOp,
        [k.args[0]],
        pack=IntegerAttr(1, i32),
        result=[t],
        scalarOp=region,
    )
    (x,) = region.blocks[0].arguments
    with k.at_end(region.blocks[0]):
        branch = k.create(scf.IfOp, k.op(arith.CmpFOp, "olt", x, k.const(0.0, f32)), [f32])
        with k.at_end(branch.then_block):
            k.op(scf.YieldOp, [k.op(arith.NegFOp, x)])
        with k.at_end(branch.else_block):
            k.op(scf.YieldOp, [x])
        k.op(tt.MapElementwiseReturnOp, [branch.results[0]])
    x = RNG.standard_normal(8).astype(np.float32)
    [(y,)] = evaluate(k.ret(mapped.results[0]), "k", [x])
    np.testing.assert_array_equal(y, np.abs(x))


def test_map_elementwise_with_pack_two():
    """Pack 2: the region takes (x0, x1) and returns (x1 - x0, x0 * x1) for the pair of
    consecutive elements it reads, and the result keeps each element's own lane: so element
    2i is x[2i+1] - x[2i] and element 2i+1 is x[2i] * x[2i+1]; with a branch (scalars only)."""
    t = tensor([16], f32)
    k = Kernel("k", [t], [t])
    region = Region([Block([f32, f32])])
    mapped = k.create(
        tt.MapElementwiseOp, [k.args[0]], pack=IntegerAttr(2, i32), result=[t], scalarOp=region
    )
    x0, x1 = region.blocks[0].arguments
    with k.at_end(region.blocks[0]):
        branch = k.create(scf.IfOp, k.op(arith.CmpFOp, "olt", x0, x1), [f32])
        with k.at_end(branch.then_block):
            k.op(scf.YieldOp, [k.op(arith.SubFOp, x1, x0)])
        with k.at_end(branch.else_block):
            k.op(scf.YieldOp, [k.op(arith.SubFOp, x1, x0)])
        k.op(tt.MapElementwiseReturnOp, [branch.results[0], k.op(arith.MulFOp, x0, x1)])
    x = RNG.standard_normal(16).astype(np.float32)
    [(y,)] = evaluate(k.ret(mapped.results[0]), "k", [x])
    expected = np.empty(16, np.float32)
    expected[0::2] = x[1::2] - x[0::2]
    expected[1::2] = x[0::2] * x[1::2]
    np.testing.assert_array_equal(y, expected)


def test_descriptor_gather_and_reduce():
    """Rows 3, 0, 9 (out of bounds: zeros) of an 8x16 tensor from column 4; then an atomic
    add of ones into the block at (6, 8), half of which lies outside."""
    a = RNG.standard_normal((8, 16)).astype(np.float32)
    desc_type = tt.TensorDescType(tensor([1, 8], f32))
    k = Kernel("k", [desc_type, tt.TensorDescType(tensor([4, 8], f32))], [tensor([4, 8], f32)])
    rows = k.const([3, 0, 9, 7], tensor([4], i32))
    gathered = k.op(
        tt.DescriptorGatherOp, k.args[0], rows, k.const(4, i32), result=tensor([4, 8], f32)
    )
    ones = k.const(1.0, tensor([4, 8], f32))
    at = [k.const(6, i32), k.const(12, i32)]
    kind = DescriptorReduceKind.get("add")
    k.op(tt.DescriptorReduceOp, k.args[1], ones, at, kind=kind)
    module = k.ret(gathered)
    base = a.copy()
    descs = [TensorDescriptor.from_tensor(base, block) for block in ([1, 8], [4, 8])]
    [(g,)] = evaluate(module, "k", descs)
    padded = np.zeros((10, 16), np.float32)
    padded[:8] = a
    np.testing.assert_array_equal(g, padded[[3, 0, 9, 7], 4:12])
    expected = a.copy()
    expected[6:8, 12:16] += 1
    np.testing.assert_array_equal(base, expected)


def test_block_scaled_dots_are_refused_by_name():
    t8 = tensor([16, 32], f8)
    k = Kernel("k", [t8, tensor([32, 16], f8), tensor([16, 16], f32)], [tensor([16, 16], f32)])
    kinds = {name: ScaleDotElemType.get("e4m3") for name in ("a_elem_type", "b_elem_type")}
    d = k.op(tt.DotScaledOp, *k.args, None, None, fastMath=BoolAttr(False), **kinds)
    a, b = np.zeros((16, 32), ml_dtypes.float8_e4m3fn), np.zeros((32, 16), ml_dtypes.float8_e4m3fn)
    with pytest.raises(UnsupportedOpError, match=r"tt\.dot_scaled"):
        evaluate(k.ret(d), "k", [a, b, np.zeros((16, 16), np.float32)])
