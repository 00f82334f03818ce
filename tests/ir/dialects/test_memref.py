"""`memref` buffers, accesses, copies, casts, dims, atomics and metadata: built from Python,
printed as upstream prints them, read back, read by xDSL (or, for the ops xDSL lacks, checked
against tests/middle/golden/memref.mlir), and one invalid case per verifier rule."""

from pathlib import Path

import pytest
from dialect_helpers import arg, args, fails
from kernel_helpers import body_lines, check, kernel
from middle.upstream import assert_round_trip, assert_upstream_valid

from naiad.dialects import arith, memref
from naiad.ir import (
    DYNAMIC,
    Builder,
    IntegerAttr,
    MemRefType,
    StridedLayoutAttr,
    UnrankedMemRefType,
    create_operation,
    f16,
    f32,
    i32,
    i64,
    index,
    verify,
)
from naiad.ir.affine import AffineMap, AffineMapAttr, dim, symbol
from naiad.ir.parser import parse_module
from naiad.ir.printer import print_module

D = DYNAMIC
GOLDEN = Path(__file__).parents[2] / "middle" / "golden"


def test_alloc_alloca_dealloc():
    mixed = MemRefType([4, D], f32)
    with_symbol = MemRefType(
        [8, 64], f32, AffineMapAttr(AffineMap(2, 1, [dim(0) + symbol(0), dim(1)]))
    )

    def body(b, n):
        static = b.create(memref.AllocOp, MemRefType([1024], f32)).memref
        b.create(memref.AllocOp, mixed, [n])
        b.create(memref.AllocaOp, MemRefType([16], f16), alignment=64)
        b.create(memref.AllocOp, with_symbol, [], [n])
        b.create(memref.DeallocOp, static)

    check(
        kernel([index], body),
        [
            "%alloc = memref.alloc() : memref<1024xf32>",
            "%alloc_0 = memref.alloc(%arg0) : memref<4x?xf32>",
            "%alloca = memref.alloca() {alignment = 64 : i64} : memref<16xf16>",
            "%alloc_1 = memref.alloc()[%arg0] : memref<8x64xf32, "
            "affine_map<(d0, d1)[s0] -> (d0 + s0, d1)>>",
            "memref.dealloc %alloc : memref<1024xf32>",
        ],
    )


def test_alloc_rules():
    (n,) = args(index)
    fails(memref.AllocOp(MemRefType([D, D], f32), [n]), "dimension operand count does not equal")
    strided = MemRefType([4], f32, StridedLayoutAttr([D], D))
    fails(
        memref.AllocaOp(strided, [], [n]),
        "symbol operand count does not equal memref symbol count: expected 2, got 1",
    )
    fails(memref.AllocOp(MemRefType([4], f32), alignment=-8), "attribute 'alignment' failed")
    fails(memref.AllocOp(UnrankedMemRefType(f32)), "result #0 ('memref') must be memref")
    fails(memref.AllocOp(MemRefType([D], f32), [arg(i32)]), "must be 'index'")


def test_load_store():
    t = MemRefType([4, D], f32)

    def body(b, m, i, j):
        x = b.create(memref.LoadOp, m, [i, j]).result
        y = b.create(memref.LoadOp, m, [j, i], nontemporal=True, alignment=16).result
        total = b.create(arith.AddFOp, x, y).result
        b.create(memref.StoreOp, total, m, [i, j])
        b.create(memref.StoreOp, total, m, [i, j], nontemporal=False)

    check(
        kernel([t, index, index], body),
        [
            "%0 = memref.load %arg0[%arg1, %arg2] : memref<4x?xf32>",
            "%1 = memref.load %arg0[%arg2, %arg1] {alignment = 16 : i64, nontemporal = true} "
            ": memref<4x?xf32>",
            "%2 = arith.addf %0, %1 : f32",
            "memref.store %2, %arg0[%arg1, %arg2] : memref<4x?xf32>",
            "memref.store %2, %arg0[%arg1, %arg2] : memref<4x?xf32>",
        ],
    )


def test_load_store_rules():
    m, i, x = args(MemRefType([4, 4], f32), index, i32)
    fails(memref.LoadOp(m, [i]), "incorrect number of indices for load, expected 2 but got 1")
    fails(memref.LoadOp(m, [i, i], result=i32), "result type matches element type of 'memref'")
    fails(memref.LoadOp(m, [i, i], alignment=12), "attribute 'alignment' failed")
    fails(memref.StoreOp(x, m, [i, i]), "type of 'value' matches element type of 'memref'")
    y = arg(f32)
    fails(memref.StoreOp(y, m, [i]), "store index operand count not equal to memref rank")
    fails(memref.LoadOp(arg(UnrankedMemRefType(f32)), []), "must be memref of any type")


def test_copy_cast_dim():
    strided = MemRefType([4, 8], f32, StridedLayoutAttr([16, 1], 4))

    def body(b, src, i):
        dst = b.create(memref.AllocOp, MemRefType([4, 8], f32)).memref
        b.create(memref.CopyOp, src, dst)
        loose = b.create(memref.CastOp, src, MemRefType([D, 8], f32, StridedLayoutAttr([D, 1], D)))
        b.create(memref.CastOp, dst, UnrankedMemRefType(f32))
        b.create(memref.DimOp, loose.dest, i)

    check(
        kernel([strided, index], body),
        [
            "%alloc = memref.alloc() : memref<4x8xf32>",
            "memref.copy %arg0, %alloc : memref<4x8xf32, strided<[16, 1], offset: 4>> to "
            "memref<4x8xf32>",
            "%cast = memref.cast %arg0 : memref<4x8xf32, strided<[16, 1], offset: 4>> to "
            "memref<?x8xf32, strided<[?, 1], offset: ?>>",
            "%cast_0 = memref.cast %alloc : memref<4x8xf32> to memref<*xf32>",
            "%dim = memref.dim %cast, %arg1 : memref<?x8xf32, strided<[?, 1], offset: ?>>",
        ],
        allow={"memref.copy", "memref.cast"},
    )


@pytest.mark.parametrize(
    ("source", "dest"),
    [
        (MemRefType([4], f32), MemRefType([4], i32)),
        (MemRefType([4], f32), MemRefType([4, 1], f32)),
        (MemRefType([4], f32), MemRefType([5], f32)),
        (MemRefType([4], f32), MemRefType([4], f32, None, 1)),
        (
            MemRefType([4], f32, StridedLayoutAttr([2])),
            MemRefType([4], f32, StridedLayoutAttr([3])),
        ),
        (MemRefType([4], f32, StridedLayoutAttr([1], 2)), MemRefType([4], f32)),
        (UnrankedMemRefType(f32), UnrankedMemRefType(f32)),
        (UnrankedMemRefType(f32), MemRefType([4], i32)),
    ],
)
def test_cast_rules(source, dest):
    fails(memref.CastOp(arg(source), dest), "are cast incompatible")


def test_copy_and_dim_rules():
    a, b, c = args(MemRefType([4], f32), MemRefType([4], i32), MemRefType([5], f32))
    fails(memref.CopyOp(a, b), "requires the same element type for all operands")
    fails(memref.CopyOp(a, c), "requires the same shape for all operands")
    verify(memref.CopyOp(a, arg(MemRefType([D], f32))))
    fails(memref.DimOp(arg(MemRefType([], f32)), arg(index)), "must be non-0-ranked or unranked")


KINDS = {
    "addf": 0, "addi": 1, "andi": 2, "assign": 3, "maximumf": 4, "maxnumf": 5, "maxs": 6,
    "maxu": 7, "minimumf": 8, "minnumf": 9, "mins": 10, "minu": 11, "mulf": 12, "muli": 13,
    "ori": 14, "xori": 15,
}  # fmt: skip
FLOAT_KINDS = {"addf", "maximumf", "maxnumf", "minimumf", "minnumf", "mulf"}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_atomic_rmw_kinds(kind):
    element = f32 if kind in FLOAT_KINDS or kind == "assign" else i32
    t = MemRefType([16], element)

    def body(b, m, v, i):
        b.create(memref.AtomicRMWOp, kind, v, m, [i])

    module = kernel([t, element, index], body)
    assert body_lines(assert_round_trip(module)) == [
        f"%0 = memref.atomic_rmw {kind} %arg1, %arg0[%arg2] : ({element}, {t}) -> {element}"
    ]
    generic = print_module(module, generic=True, locations=False)
    assert f"<{{kind = {KINDS[kind]} : i64}}>" in generic
    assert_upstream_valid(print_module(module), allow={"memref.atomic_rmw"})


def test_atomic_rmw_rules():
    m, x, i = args(MemRefType([4], f32), f32, index)
    fails(memref.AtomicRMWOp("addf", x, m, []), "expects the number of subscripts")
    n, y = args(MemRefType([4], i32), i32)
    fails(memref.AtomicRMWOp("addf", y, n, [i]), "with kind 'addf' expects a floating-point type")
    fails(memref.AtomicRMWOp("maxs", x, m, [i]), "with kind 'maxs' expects an integer type")
    fails(memref.AtomicRMWOp("assign", y, m, [i]), "value type matches element type of memref")
    fails(memref.AtomicRMWOp("addf", x, m, [i], result=f16), "all of {value, result} have same")
    with pytest.raises(ValueError, match="unknown AtomicRMWKind keyword 'xorf'"):
        memref.AtomicRMWOp("xorf", x, m, [i])


def _generic_rmw(b, m, v, i):
    op = b.create(memref.GenericAtomicRMWOp, m, [i])
    with b.at_end(op.body):
        total = b.create(arith.AddFOp, op.current_value, v).result
        b.create(memref.AtomicYieldOp, total)
    return op


def test_generic_atomic_rmw():
    module = kernel([MemRefType([10], f32), f32, index], _generic_rmw)
    assert body_lines(assert_round_trip(module)) == [
        "%0 = memref.generic_atomic_rmw %arg0[%arg2] : memref<10xf32> {",
        "^bb0(%arg3: f32):",
        "%1 = arith.addf %arg3, %arg1 : f32",
        "memref.atomic_yield %1 : f32",
        "}",
    ]
    assert_upstream_valid(
        print_module(module), allow={"memref.generic_atomic_rmw", "memref.atomic_yield"}
    )


def test_generic_atomic_rmw_rules():
    m, v, i = args(MemRefType([10], f32), f32, index)
    b = Builder()
    bad_yield = memref.GenericAtomicRMWOp(m, [i])
    bad_yield.body.append(memref.AtomicYieldOp(arg(i32)))
    fails(bad_yield, "types mismatch between yield op: i32 and its parent: f32")
    effect = memref.GenericAtomicRMWOp(m, [i])
    with b.at_end(effect.body):
        b.create(memref.StoreOp, v, m, [i])
        b.create(memref.AtomicYieldOp, v)
    fails(effect, "should contain only operations with no side effects")
    two_args = memref.GenericAtomicRMWOp(m, [i])
    two_args.body.insert_argument(1, f32)
    two_args.body.append(memref.AtomicYieldOp(v))
    fails(two_args, "expected single number of entry block arguments")
    wrong_arg = memref.GenericAtomicRMWOp(m, [i])
    wrong_arg.body.erase_argument(0)
    wrong_arg.body.insert_argument(0, f16)
    wrong_arg.body.append(memref.AtomicYieldOp(v))
    fails(wrong_arg, "expected block argument of the same type result type")
    fails(memref.AtomicYieldOp(v), "expects parent op to be one of 'memref.generic_atomic_rmw'")


def test_extract_strided_metadata():
    t = MemRefType([2, D], f32, StridedLayoutAttr([D, 1], D))

    def body(b, m):
        op = b.create(memref.ExtractStridedMetadataOp, m)
        assert [v.type for v in (*op.sizes, *op.strides)] == [index] * 4
        sizes = [2, op.sizes[1]]
        strides = [op.strides[0], 1]
        b.create(memref.ReinterpretCastOp, op.base_buffer, t, op.offset, sizes, strides)

    check(
        kernel([t], body),
        [
            "%base_buffer, %offset, %sizes:2, %strides:2 = memref.extract_strided_metadata "
            "%arg0 : memref<2x?xf32, strided<[?, 1], offset: ?>> -> memref<f32>, index, index, "
            "index, index, index",
            "%reinterpret_cast = memref.reinterpret_cast %base_buffer to offset: [%offset], "
            "sizes: [2, %sizes#1], strides: [%strides#0, 1] : memref<f32> to "
            "memref<2x?xf32, strided<[?, 1], offset: ?>>",
        ],
    )


def test_extract_strided_metadata_rules():
    m = arg(MemRefType([4], f32))
    wrong = create_operation(
        "memref.extract_strided_metadata", [m], [MemRefType([], f32, None, 1), index, index, index]
    )
    fails(wrong, "inferred type(s) 'memref<f32>', 'index', 'index', 'index' are incompatible")
    fails(
        create_operation("memref.extract_strided_metadata", [m], [MemRefType([], f32), i64]),
        "result #1 ('offset') must be 'index'",
    )
    transposed = MemRefType([2, 2], f32, AffineMapAttr(AffineMap(2, 0, [dim(1), dim(0)])))
    fails(memref.ExtractStridedMetadataOp(arg(transposed)), "must be strided memref")


def test_golden_file_of_the_ops_xdsl_cannot_read():
    """The custom syntax of the allow-listed ops, against a hand-checked file."""
    golden = (GOLDEN / "memref.mlir").read_text()
    module = parse_module(golden)
    verify(module)
    assert print_module(module, locations=False) == golden
    generic = print_module(module, generic=True, locations=False)
    assert print_module(parse_module(generic), locations=False) == golden
    assert_upstream_valid(
        golden,
        allow={
            "memref.atomic_rmw",
            "memref.atomic_yield",
            "memref.cast",
            "memref.copy",
            "memref.generic_atomic_rmw",
            "memref.reinterpret_cast",
        },
    )


def test_golden_file_matches_what_the_builders_make():
    unranked = UnrankedMemRefType(f32)

    def body(b, p, n, v):
        off = b.create(arith.IndexCastOp, n, out=index).out
        view = b.create(memref.ReinterpretCastOp, p, None, off, [4, off], [off, 1]).result
        b.create(memref.AtomicRMWOp, "maxnumf", v, view, [off, off])
        rmw = b.create(memref.GenericAtomicRMWOp, view, [off, off])
        with b.at_end(rmw.body):
            largest = b.create(arith.MaximumFOp, rmw.current_value, v).result
            b.create(memref.AtomicYieldOp, largest)
        flat = b.create(memref.CastOp, view, unranked).dest
        strided = MemRefType([4, D], f32, StridedLayoutAttr([D, 1], D))
        back = b.create(memref.CastOp, flat, strided).dest
        buffer = b.create(memref.AllocaOp, MemRefType([4, D], f32), [off]).memref
        b.create(memref.CopyOp, back, buffer)

    module = kernel([unranked, i32, f32], body)
    golden = (GOLDEN / "memref.mlir").read_text()
    assert print_module(module, locations=False) == golden


def test_index_constant_names():
    def body(b):
        b.create(arith.ConstantOp, IntegerAttr(0, index))

    assert body_lines(assert_round_trip(kernel([], body))) == ["%c0 = arith.constant 0 : index"]
