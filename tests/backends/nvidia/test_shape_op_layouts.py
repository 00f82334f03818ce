"""Layout inference through `tt.reshape`, `tt.trans`, `tt.join` and `tt.split`
(passes/layout_inference.py):
each keeps every element in the thread and register that holds it, so that the lowering only
renumbers registers. Read from the layouts themselves and from the TTGIR and PTX of a kernel;
no GPU here (the values on the GPU are tests/language/test_shapes.py's, `-m gpu`)."""

import random
import re

import pytest
from test_convert_emission import _Value, execute_lowering
from test_convert_plan import random_encoding

import naiad
import naiad.language as tl
from naiad.backends.nvidia.layouts import to_linear_layout
from naiad.backends.nvidia.passes.layout_inference import (
    join_encoding,
    permute_encoding,
    reshape_encoding,
    split_encoding,
)
from naiad.dialects.ttg.attributes import BlockedEncodingAttr
from naiad.ir import FloatType, RankedTensorType


def _flat(coords, shape) -> int:
    index = 0
    for c, size in zip(coords, shape):
        index = index * size + c
    return index


def _elements(layout):
    """Every (register, lane, warp) -> its coordinates."""
    sizes = {name: layout.in_dim_size(name) for name in ("register", "lane", "warp")}
    for w in range(sizes["warp"]):
        for lane in range(sizes["lane"]):
            for r in range(sizes["register"]):
                yield (r, lane, w), layout.apply(register=r, lane=lane, warp=w)


BLOCKED = [
    ((1024,), BlockedEncodingAttr([4], [32], [4], [0]), (512, 2)),
    ((1024,), BlockedEncodingAttr([1], [32], [8], [0]), (32, 32)),
    ((64, 32), BlockedEncodingAttr([1, 4], [4, 8], [4, 1], [1, 0]), (2048,)),
    ((64, 32), BlockedEncodingAttr([2, 1], [8, 4], [2, 2], [0, 1]), (16, 4, 32)),
]


@pytest.mark.parametrize("shape, encoding, new_shape", BLOCKED)
def test_a_reshape_keeps_every_element_where_it_is(shape, encoding, new_shape):
    source = to_linear_layout(encoding, shape)
    result = to_linear_layout(reshape_encoding(encoding, shape, new_shape), new_shape)
    for (r, lane, w), coords in _elements(source):
        moved = result.apply(register=r, lane=lane, warp=w)
        assert _flat(moved, new_shape) == _flat(coords, shape)


@pytest.mark.parametrize("shape, encoding", [(s, e) for s, e, _ in BLOCKED])
def test_a_join_pairs_registers_and_a_split_takes_them_apart(shape, encoding):
    joined = join_encoding(encoding, shape)
    layout = to_linear_layout(joined, (*shape, 2))
    source = to_linear_layout(encoding, shape)
    for (r, lane, w), coords in _elements(source):  # register 2r + j holds element [..., j]
        for j in (0, 1):
            assert layout.apply(register=2 * r + j, lane=lane, warp=w) == (*coords, j)
    assert to_linear_layout(split_encoding(joined, (*shape, 2)), shape) == source


def _random_case(rng):
    """A random encoding of every family over a random shape, and a random reshape of it."""
    while True:
        rank = rng.choice([1, 2, 2, 3])
        shape = [1 << rng.randrange(1, 6) for _ in range(rank)]
        encoding = random_encoding(rng, shape, 1 << rng.randrange(4))
        try:
            to_linear_layout(encoding, shape)
        except ValueError:
            continue
        bits = sum(s.bit_length() - 1 for s in shape)
        cuts = sorted(rng.sample(range(1, bits), rng.randrange(min(3, bits)))) if bits > 1 else []
        new_shape = [1 << (b - a) for a, b in zip([0, *cuts], [*cuts, bits])]
        return shape, encoding, new_shape


@pytest.mark.parametrize("seed", range(200))
def test_the_rules_keep_elements_in_place_for_every_kind_of_layout(seed):
    """Blocked, slice, mma, dot operand and linear layouts, random shapes: a reshape keeps
    each element's flat index, a join's registers 2r + j hold element [..., j] of register r,
    and a split of a join gives the operand's layout back."""
    shape, encoding, new_shape = _random_case(random.Random(seed))
    source = to_linear_layout(encoding, shape)
    reshaped = to_linear_layout(reshape_encoding(encoding, shape, new_shape), new_shape)
    joined = join_encoding(encoding, shape)
    pairs = to_linear_layout(joined, (*shape, 2))
    for (r, lane, w), coords in _elements(source):
        moved = reshaped.apply(register=r, lane=lane, warp=w)
        assert _flat(moved, new_shape) == _flat(coords, shape)
        for j in (0, 1):
            assert pairs.apply(register=2 * r + j, lane=lane, warp=w) == (*coords, j)
    assert to_linear_layout(split_encoding(joined, (*shape, 2)), shape) == source


@pytest.mark.parametrize("seed", range(100))
def test_a_permutation_keeps_every_element_in_its_register(seed):
    """`tt.trans` of a layout of any family: result element at the permuted coordinates is
    the one the same register, lane and warp held."""
    rng = random.Random(seed)
    shape, encoding, _ = _random_case(rng)
    order = list(range(len(shape)))
    rng.shuffle(order)
    new_shape = [shape[d] for d in order]
    source = to_linear_layout(encoding, shape)
    result = to_linear_layout(permute_encoding(encoding, shape, order), new_shape)
    for (r, lane, w), coords in _elements(source):
        assert result.apply(register=r, lane=lane, warp=w) == tuple(coords[d] for d in order)


@naiad.jit
def halved_epilogue(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """A dot's accumulator stored as two column halves, as tutorial 09's subtiled epilogue:
    reshape, permute, split."""
    rows, cols, ks = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    a = tl.load(a_ptr + rows[:, None] * BK + ks[None, :])
    b = tl.load(b_ptr + ks[:, None] * BN + cols[None, :])
    acc = tl.dot(a, b)
    left, right = tl.split(tl.permute(tl.reshape(acc, (BM, 2, BN // 2)), (0, 2, 1)))
    halves = rows[:, None] * BN + tl.arange(0, BN // 2)[None, :]
    tl.store(c_ptr + halves, left)
    tl.store(c_ptr + halves + BN // 2, right)


def test_a_subtiled_epilogue_moves_no_element_between_threads():
    """On sm_90a the accumulator is wgmma's: reshaped, permuted and split in registers. The
    kernel's shared memory is then the larger of its operands' buffers and one half's
    conversion to the stores' coalesced layout (64 KiB); converting the 3-D accumulator
    through shared memory took 256 KiB."""
    compiled = halved_epilogue.warmup(
        "*fp16", "*fp16", "*fp32", 128, 256, 64, num_warps=8, grid=(1,), target="cuda:sm_90a"
    )
    ttgir = compiled.asm["ttgir"]
    assert "ttng.warp_group_dot" in ttgir and "tt.trans" in ttgir
    assert compiled.metadata["shared"] <= 128 * 128 * 4


def test_a_split_across_lanes_has_no_layout_of_its_own():
    """The pair in two lanes: the source must be converted first (to the halves' joined)."""
    assert split_encoding(BlockedEncodingAttr([1, 1], [16, 2], [4, 1], [1, 0]), (512, 2)) is None


@naiad.jit
def pairs_kernel(x_ptr, y_ptr, z_ptr, N: tl.constexpr):
    """Unpacks adjacent pairs, uses both halves, packs them again."""
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    a, b = tl.split(tl.reshape(x, (N // 2, 2)))
    tl.store(y_ptr + tl.arange(0, N // 2), a * 2.0 + b)
    tl.store(z_ptr + offs, tl.reshape(tl.join(b, a), (N,)) + 1.0)


def test_reshape_split_and_join_move_no_element_between_threads():
    compiled = pairs_kernel.warmup(
        "*fp32", "*fp32", "*fp32", N=1024, num_warps=4, grid=(1,), target="cuda:sm_90a"
    )
    ttgir, ptx = compiled.asm["ttgir"], compiled.asm["ptx"]
    # One conversion, of `a * 2 + b` (two adjacent elements a thread) to the store's coalesced
    # layout (four); the loads and the other store stay 16-byte vectors.
    assert ttgir.count("ttg.convert_layout") == 1
    shared = re.findall(r"(st|ld)\.shared\.\S+", ptx)
    assert len(shared) == 4
    assert ptx.count("ld.global.v4") == 2 and ptx.count("st.global.v4") == 3


class _Join:
    """What the lowering of a `tt.join` reads of its op."""

    name = "tt.join"
    next_op = None
    attributes = None  # read by no lowering of a join

    def __init__(self, operand_t, result_t):
        self.lhs, self.rhs, self.result = _Value(operand_t), _Value(operand_t), _Value(result_t)


def _code(coords, half: int, shape) -> int:
    """The value of element `coords` of the lhs (half 0) or the rhs (half 1): distinct."""
    return _flat(coords, shape) * 2 + half + 1


def _run_join(operand_t, result_t) -> tuple[list, list, str]:
    """Lower a join alone and execute it for every thread: (each thread's result registers,
    the expected ones, the LLVM IR)."""
    src = to_linear_layout(operand_t.encoding, operand_t.shape)
    dst = to_linear_layout(result_t.encoding, result_t.shape)
    op = _Join(operand_t, result_t)
    threads = 32 * src.in_dim_size("warp")
    shape = operand_t.shape

    def half(j):
        def value_of(tid, r):
            return _code(src.apply(register=r, lane=tid % 32, warp=tid // 32), j, shape)

        return value_of

    count = src.in_dim_size("register")
    got, code = execute_lowering(op, threads, [(op.lhs, count, half(0)), (op.rhs, count, half(1))])
    expected = []
    for tid in range(threads):
        held = [dst.apply(register=r, lane=tid % 32, warp=tid // 32) for r in range(len(got[0]))]
        expected.append([_code(c[:-1], c[-1], shape) for c in held])
    return got, expected, "\n".join(code)


def _tensor(shape, encoding):
    return RankedTensorType(list(shape), FloatType("f32"), encoding)


JOINS = {
    # The halves in two lanes (the default layout of a join of two size-1 tensors): through
    # the scratch, where the thread part of a coordinate picks the half.
    "across lanes": (
        (1,),
        BlockedEncodingAttr([1], [32], [4], [0]),
        BlockedEncodingAttr([1, 1], [16, 2], [4, 1], [1, 0]),
    ),
    "inferred": ((256,), BlockedEncodingAttr([2], [32], [4], [0]), None),
    "pairs in registers": (
        (64,),
        BlockedEncodingAttr([1], [32], [2], [0]),
        BlockedEncodingAttr([1, 2], [32, 1], [2, 1], [1, 0]),
    ),
}


@pytest.mark.parametrize("name", sorted(JOINS))
def test_join_delivers_each_element_of_each_half(name):
    shape, operand, result = JOINS[name]
    result = result or join_encoding(operand, shape)
    got, expected, code = _run_join(_tensor(shape, operand), _tensor((*shape, 2), result))
    assert got == expected
    through_scratch = "addrspace(3)" in code
    assert through_scratch == (name == "across lanes")
