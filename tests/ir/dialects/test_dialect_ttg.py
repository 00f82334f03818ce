"""The `ttg` dialect: Triton 3.8's own TTGIR dumps read and printed back, TTGIR built in Python
printed as Triton prints it (attribute aliases at the top), the encodings' text, and the
verifier's rules."""

from pathlib import Path

import pytest

from naiad.dialects import arith, tt, ttg
from naiad.dialects.tt.types import PointerType
from naiad.dialects.ttg import attributes as attrs
from naiad.dialects.ttg.attributes import SHARED_MEMORY
from naiad.dialects.ttg.types import ASYNC_TOKEN, MemDescType
from naiad.ir import (
    Builder,
    FunctionType,
    IntegerAttr,
    ModuleOp,
    RankedTensorType,
    VerificationError,
    f16,
    f32,
    i32,
    verify,
)
from naiad.ir.equality import assert_structurally_equal
from naiad.ir.parser import ParseError, Parser, parse_module
from naiad.ir.printer import print_module

FIXTURES = Path(__file__).resolve().parents[2] / "fixture_kernels" / "ttgir"
TTGIR = sorted(p.name for p in FIXTURES.glob("*.ttgir"))
BLOCKED = attrs.BlockedEncodingAttr([1, 8], [4, 8], [8, 1], [1, 0])
MMA = attrs.NvidiaMmaEncodingAttr(2, 0, [2, 4], [16, 8])
SHARED = attrs.SwizzledSharedEncodingAttr(8, 1, 8, [1, 0])


def round_trip(module, **options):
    printed = set()
    text = print_module(module, record=printed, **options)
    parsed = parse_module(text, "roundtrip.mlir")
    locations = printed.__contains__ if options.get("locations", True) else False
    assert_structurally_equal(module, parsed, locations=locations)
    return text


# -- Triton's dumps


def test_every_fixture_is_here():
    assert set(TTGIR) >= {
        "add_sm90.ttgir",
        "matmul_sm80.ttgir",
        "row_sum_sm80.ttgir",
        "softmax_sm90.ttgir",
        "transpose_sm80.ttgir",
    }


@pytest.mark.parametrize("name", TTGIR)
def test_fixture_prints_back_byte_for_byte(name):
    text = (FIXTURES / name).read_text()
    module = parse_module(text, name)
    verify(module)
    printed = print_module(module)
    if "scf.for" not in text:
        assert printed == text
        return
    # scf.for's block arguments print without their locations (tests/ir/text explains): the
    # reprinted module names them %argN, and then is a fixed point.
    assert printed.splitlines()[:5] == text.splitlines()[:5]  # the aliases
    assert print_module(parse_module(printed, name)) == printed


@pytest.mark.parametrize("name", TTGIR)
def test_fixture_round_trips_structurally(name):
    module = parse_module((FIXTURES / name).read_text(), name)
    round_trip(module)
    round_trip(module, generic=True)
    round_trip(module, locations=False)


def test_fixture_encodings_are_the_named_classes():
    module = parse_module((FIXTURES / "matmul_sm80.ttgir").read_text())
    allocs = [op for op in module.walk() if op.name == "ttg.local_alloc"]
    memdesc = allocs[0].result.type
    assert memdesc == MemDescType([2, 128, 64], f16, SHARED, SHARED_MEMORY, mutable=True)
    loads = [op for op in module.walk() if op.name == "ttg.local_load"]
    operand = loads[0].result.type.encoding
    assert operand == attrs.DotOperandEncodingAttr(0, MMA, 2)
    assert loads[0].operands[0].type.alloc_shape == (128, 64)
    waits = [op for op in module.walk() if op.name == "ttg.async_wait"]
    assert waits[0].results[0].type is ASYNC_TOKEN
    assert waits[0].attributes["num"] == IntegerAttr(2, i32)
    assert module.attributes == ttg.module_attributes(8, "cuda:80")


# -- TTGIR built in Python


def build_module():
    """A kernel touching every op: a layout conversion, shared memory, an async copy."""
    module = ModuleOp()
    module.attributes.update(ttg.module_attributes(8, "cuda:80"))
    pointers = RankedTensorType([128, 64], PointerType(f16), BLOCKED)
    func = tt.FuncOp("kernel", FunctionType([pointers, i32], []), visibility="public")
    module.body.append(func)
    ptrs, index = func.body.blocks[0].arguments
    buffers = MemDescType([2, 128, 64], f16, SHARED, SHARED_MEMORY, mutable=True)
    buffer = MemDescType([128, 64], f16, SHARED, SHARED_MEMORY, mutable=True)
    view = MemDescType([128, 16], f16, SHARED, SHARED_MEMORY, True, [128, 64])
    b = Builder()
    with b.at_end(func.body.blocks[0]):
        alloc = b.create(ttg.LocalAllocOp, result=buffers).result
        one = b.create(ttg.MemDescIndexOp, alloc, index, result=buffer).result
        copy = b.create(ttg.AsyncCopyGlobalToLocalOp, ptrs, one, token=ASYNC_TOKEN).token
        group = b.create(ttg.AsyncCommitGroupOp, [copy], asyncToken=ASYNC_TOKEN).asyncToken
        done = b.create(ttg.AsyncWaitOp, [group], num=IntegerAttr(0, i32), retToken=ASYNC_TOKEN)
        sub = b.create(ttg.MemDescSubsliceOp, one, offsets=_offsets([0, 16]), result=view).result
        operand = RankedTensorType([128, 16], f16, attrs.DotOperandEncodingAttr(0, MMA, 2))
        loaded = b.create(ttg.LocalLoadOp, sub, done.retToken, result=operand).result
        back = b.create(
            ttg.ConvertLayoutOp, loaded, result=RankedTensorType([128, 16], f16, BLOCKED)
        ).result
        b.create(ttg.LocalStoreOp, back, sub)
        b.create(ttg.LocalDeallocOp, alloc)
        b.create(tt.ReturnOp, [])
    return module


def _offsets(values):
    from naiad.ir.attributes import DenseArrayAttr

    return DenseArrayAttr(i32, values)


EXPECTED = """\
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [8, 1], order = [1, 0]}>
#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 4], instrShape = [16, 8]}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @kernel(%arg0: tensor<128x64x!tt.ptr<f16>, #blocked>, %arg1: i32) {
    %0 = ttg.local_alloc : () -> !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable>
    %1 = ttg.memdesc_index %0[%arg1] : !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
    %2 = ttg.async_copy_global_to_local %arg0, %1 : tensor<128x64x!tt.ptr<f16>, #blocked> -> <128x64xf16, #shared, #smem, mutable>
    %3 = ttg.async_commit_group tokens %2
    %4 = ttg.async_wait %3 {num = 0 : i32}
    %5 = ttg.memdesc_subslice %1[0, 16] : !ttg.memdesc<128x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<128x16xf16, #shared, #smem, mutable, 128x64>
    %6 = ttg.local_load %5 token %4 : !ttg.memdesc<128x16xf16, #shared, #smem, mutable, 128x64> -> tensor<128x16xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>
    %7 = ttg.convert_layout %6 : tensor<128x16xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>> -> tensor<128x16xf16, #blocked>
    ttg.local_store %7, %5 : tensor<128x16xf16, #blocked> -> !ttg.memdesc<128x16xf16, #shared, #smem, mutable, 128x64>
    ttg.local_dealloc %0 : !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable>
    tt.return
  }
}
"""  # noqa: E501


def test_built_module_prints_as_triton():
    module = build_module()
    verify(module)
    assert print_module(module, locations=False) == EXPECTED
    round_trip(module)
    round_trip(module, generic=True)


def test_generic_form_keeps_the_aliases():
    text = print_module(build_module(), generic=True, locations=False)
    assert text.startswith("#blocked = #ttg.blocked<")
    assert (
        '"ttg.convert_layout"(%6) : (tensor<128x16xf16, #ttg.dot_op<{opIdx = 0, parent = #mma'
        in text
    )


def test_aliases_are_numbered_in_order_of_first_use():
    """Eleven blocked layouts: #blocked ... #blocked10 in order of first use, sorted by their
    number (as MLIR prints them), a slice's parent aliased, a linear layout aliased too."""
    module = ModuleOp()
    func = tt.FuncOp("f", FunctionType([], []))
    module.body.append(func)
    b = Builder()
    layouts = [attrs.BlockedEncodingAttr([1 << (10 - i)], [32], [4], [0]) for i in range(11)]
    with b.at_end(func.body.blocks[0]):
        for enc in layouts:
            b.create(tt.MakeRangeOp, 0, 1024, result=RankedTensorType([1024], i32, enc))
        parent = attrs.BlockedEncodingAttr([1, 1], [4, 8], [2, 2], [0, 1])
        sliced = RankedTensorType([64], i32, attrs.SliceEncodingAttr(0, parent))
        b.create(tt.MakeRangeOp, 0, 64, result=sliced)
        linear = attrs.LinearEncodingAttr([[1], [2]], [[4], [8], [16], [32], [0]], [[0], [0]], [])
        b.create(tt.MakeRangeOp, 0, 64, result=RankedTensorType([64], i32, linear))
        b.create(tt.ReturnOp, [])
    text = print_module(module, locations=False)
    header = [line.split(" = ")[0] for line in text.splitlines()[:13]]
    assert header == [*(f"#blocked{i or ''}" for i in range(12)), "#linear"]
    assert "#blocked10 = #ttg.blocked<{sizePerThread = [1]," in text
    assert "tensor<64xi32, #ttg.slice<{dim = 0, parent = #blocked11}>>" in text
    assert "tensor<64xi32, #linear>" in text
    round_trip(module)


def test_location_aliases_sort_among_attribute_aliases():
    text = (FIXTURES / "matmul_sm80.ttgir").read_text()
    header = [line.split(" = ")[0] for line in text.splitlines()[:7]]
    assert header == ["#blocked", "#blocked1", "#loc", "#mma", "#shared", "#smem", "#loc34"]
    assert print_module(parse_module(text)).splitlines()[:7] == text.splitlines()[:7]


def test_modules_without_encodings_print_no_aliases():
    module = ModuleOp()
    func = tt.FuncOp("f", FunctionType([], []))
    module.body.append(func)
    b = Builder()
    with b.at_end(func.body.blocks[0]):
        b.create(arith.ConstantOp, IntegerAttr(1, i32))
        b.create(tt.ReturnOp, [])
    assert print_module(module, locations=False).startswith("module {")


# -- encodings


ENCODINGS = [
    (BLOCKED, "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [8, 1], order = [1, 0]}>"),  # noqa: E501
    (
        attrs.BlockedEncodingAttr([1], [32], [2], [0], [[1]]),
        "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [2], order = [0], CGALayout = [[1]]}>",  # noqa: E501
    ),
    (attrs.SliceEncodingAttr(1, MMA), f"#ttg.slice<{{dim = 1, parent = {MMA}}}>"),
    (MMA, "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 4], instrShape = [16, 8]}>"),  # noqa: E501
    (
        attrs.NvidiaMmaEncodingAttr(3, 0, [8, 1], [16, 64, 16], [[0, 1]]),
        "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [8, 1], CGALayout = [[0, 1]], instrShape = [16, 64, 16]}>",  # noqa: E501
    ),
    (
        attrs.DotOperandEncodingAttr(1, MMA, 4),
        f"#ttg.dot_op<{{opIdx = 1, parent = {MMA}, kWidth = 4}}>",
    ),
    (attrs.DotOperandEncodingAttr(0, BLOCKED), f"#ttg.dot_op<{{opIdx = 0, parent = {BLOCKED}}}>"),
    (SHARED, "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>"),
    (
        attrs.LinearEncodingAttr([[0, 1]], [[1, 0]], [], []),
        "#ttg.linear<{register = [[0, 1]], lane = [[1, 0]], warp = [], block = []}>",
    ),
    (SHARED_MEMORY, "#ttg.shared_memory"),
]  # fmt: skip


@pytest.mark.parametrize(("attr", "text"), ENCODINGS, ids=lambda x: str(x)[:24])
def test_encoding_text(attr, text):
    assert str(attr) == text
    assert Parser(text).parse_attribute() is attr


def test_encoding_parameters_are_plain_data():
    assert BLOCKED.size_per_thread == (1, 8)
    assert BLOCKED.rank == 2
    assert MMA.instr_shape == (16, 8)
    assert SHARED.max_phase == 8
    assert attrs.LinearEncodingAttr([[1]]).bases["lane"] == ()
    assert attrs.BlockedEncodingAttr([1], [32], [4], [0]) is attrs.BlockedEncodingAttr(
        (1,), (32,), (4,), (0,)
    )


def test_invalid_encodings():
    with pytest.raises(ParseError, match=r"missing \['order'\]"):
        Parser(
            "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4]}>"
        ).parse_attribute()
    with pytest.raises(ParseError, match=r"unknown \['bogus'\]"):
        Parser("#ttg.slice<{dim = 0, parent = #ttg.shared_memory, bogus = 1}>").parse_attribute()
    with pytest.raises(ValueError, match="permutation"):
        attrs.BlockedEncodingAttr([1, 1], [4, 8], [1, 1], [0, 0])
    with pytest.raises(ValueError, match="opIdx"):
        attrs.DotOperandEncodingAttr(2, MMA)


def test_memdesc_type_text():
    view = MemDescType([16, 128], f16, SHARED, SHARED_MEMORY, True, [64, 128])
    text = "!ttg.memdesc<16x128xf16, #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>, #ttg.shared_memory, mutable, 64x128>"  # noqa: E501
    assert str(view) == text
    assert Parser(text).parse_type() is view
    constant = MemDescType([64], f32, SHARED, SHARED_MEMORY)
    assert Parser(str(constant)).parse_type() is constant
    assert view.clone(shape=(16, 64)).alloc_shape == (16, 64)
    assert str(ASYNC_TOKEN) == "!ttg.async.token"
    assert Parser("!ttg.async.token").parse_type() is ASYNC_TOKEN


# -- verifier


def test_convert_layout_keeps_shape_and_element_type():
    source = RankedTensorType([128, 64], f16, BLOCKED)
    func = tt.FuncOp("f", FunctionType([source], []))
    value = func.body.blocks[0].arguments[0]
    bad = ttg.ConvertLayoutOp(value, result=RankedTensorType([64, 128], f16, BLOCKED))
    with pytest.raises(VerificationError, match="same shape"):
        verify(bad)
    bad = ttg.ConvertLayoutOp(value, result=RankedTensorType([128, 64], f32, BLOCKED))
    with pytest.raises(VerificationError, match="element type"):
        verify(bad)


def test_local_load_needs_a_memdesc():
    tensor = RankedTensorType([16], f16, BLOCKED)
    func = tt.FuncOp("f", FunctionType([tensor], []))
    value = func.body.blocks[0].arguments[0]
    with pytest.raises(VerificationError, match="shared memory descriptor"):
        verify(ttg.LocalLoadOp(value, result=tensor))


def test_barrier_is_part_of_the_dialect():
    text = "module {\n  tt.func @f() {\n    ttg.barrier local|global_read\n    tt.return\n  }\n}\n"
    module = parse_module(text)
    assert any(isinstance(op, ttg.BarrierOp) for op in module.walk())
    assert print_module(module, locations=False) == text


OPS_TEXT = """\
#blocked = #ttg.blocked<{sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func @f(%arg0: tensor<1024xf16, #blocked>, %arg1: tensor<1024x!tt.ptr<f16>, #blocked>, %arg2: tensor<1024xi1, #blocked>) {
    %0 = ttg.local_alloc %arg0 {alignment = 16 : i32} : (tensor<1024xf16, #blocked>) -> !ttg.memdesc<1024xf16, #shared, #smem, mutable>
    %1 = ttg.async_copy_global_to_local %arg1, %0 mask %arg2 other %arg0 cacheModifier = cg evictionPolicy = evict_last {isVolatile = true} : tensor<1024x!tt.ptr<f16>, #blocked> -> <1024xf16, #shared, #smem, mutable>
    %2 = ttg.async_wait {num = 0 : i32}
    %3 = ttg.local_load %0 : !ttg.memdesc<1024xf16, #shared, #smem, mutable> -> tensor<1024xf16, #blocked>
    tt.return
  }
}
"""  # noqa: E501


def test_op_spellings_read_and_print_back():
    module = parse_module(OPS_TEXT)
    verify(module)
    assert print_module(module, locations=False) == OPS_TEXT
    copy = next(op for op in module.walk() if op.name == "ttg.async_copy_global_to_local")
    assert copy.operands[2] is copy.mask
    assert str(copy.attributes["cache"]) == "3 : i32"
    round_trip(module, generic=True)
