"""Each `ttg` encoding's linear layout, three ways:

- against Triton 3.8 itself: tests/fixture_kernels/ttgir/linear_layouts.json holds Triton's
  layouts of 419 seeded random encodings and shapes, some over several CTAs
  (scripts/linear_layout_fixtures.py);
- against an independent brute-force reference of each encoding's definition, which computes the
  element a (register, lane, warp) holds with integer arithmetic (the mma.sync fragments as the
  PTX ISA draws them), never with bases;
- against a few values Triton's documentation and tests spell out.
"""

import json
import random
from itertools import product
from pathlib import Path

import pytest

from naiad.backends.nvidia.layouts import LinearLayout, to_linear_encoding, to_linear_layout
from naiad.dialects.ttg import attributes as attrs
from naiad.ir.parser import Parser

FIXTURE = Path(__file__).resolve().parents[2] / "fixture_kernels" / "ttgir" / "linear_layouts.json"
RECORDS = json.loads(FIXTURE.read_text())
FAMILIES = ["blocked", "cga", "dot_blocked", "dot_mma", "mma", "slice", "swizzled_shared"]


@pytest.mark.parametrize("family", FAMILIES)
def test_layouts_match_triton(family):
    records = [r for r in RECORDS if r["family"] == family]
    assert len(records) >= 59  # 60 drawn per family; Triton refuses one CTA layout
    for record in records:
        tensor = Parser(record["type"]).parse_type()
        layout = to_linear_layout(tensor.encoding, tensor.shape)
        got = {name: [list(v) for v in layout.bases(name)] for name in record["bases"]}
        assert got == record["bases"], record["type"]
        assert layout.out_shape == {f"dim{i}": d for i, d in enumerate(tensor.shape)}


# -- brute-force references: (register, lane, warp) -> element, from the definitions


def digits(value, sizes, order):
    """`value` as a mixed-radix number over `sizes`, `order[0]` the fastest digit."""
    out = [0] * len(sizes)
    for d in order:
        out[d] = value % sizes[d]
        value //= sizes[d]
    return out


def blocked_reference(enc, shape):
    """Element of each (register, lane, warp): thread tiles of size_per_thread, lanes, then
    warps, along `order`; the CTA tile repeats (more registers) or wraps (mod the shape)."""
    rank = len(shape)
    spt, tpw, wpc = enc.size_per_thread, enc.threads_per_warp, enc.warps_per_cta
    tile = [spt[d] * tpw[d] * wpc[d] for d in range(rank)]
    reps = [max(1, shape[d] // tile[d]) for d in range(rank)]
    per_thread = 1
    for d in range(rank):
        per_thread *= spt[d]
    table = {}
    for reg, lane, warp in product(range(per_thread * _prod(reps)), range(32), range(_prod(wpc))):
        inside = digits(reg % per_thread, spt, enc.order)
        rep = digits(reg // per_thread, reps, enc.order)
        lanes = digits(lane, tpw, enc.order)
        warps = digits(warp, wpc, enc.order)
        table[reg, lane, warp] = tuple(
            (rep[d] * tile[d] + warps[d] * spt[d] * tpw[d] + lanes[d] * spt[d] + inside[d])
            % shape[d]
            for d in range(rank)
        )
    return table


def mma_reference(enc, shape):
    """mma.sync m16n8 accumulator fragments (PTX ISA): lane = 4 * group + t holds rows group
    and group + 8, columns 2t and 2t + 1; warps row-major over `warps_per_cta`; repetitions
    along dim1 first, then dim0."""
    wm, wn = enc.warps_per_cta
    reps = [max(1, shape[0] // (16 * wm)), max(1, shape[1] // (8 * wn))]
    table = {}
    for reg, lane, warp in product(range(4 * reps[0] * reps[1]), range(32), range(wm * wn)):
        col_pair, row_half, rep = reg & 1, reg >> 1 & 1, reg >> 2
        rep_n, rep_m = rep % reps[1], rep // reps[1]
        group, t = lane // 4, lane % 4
        row = rep_m * 16 * wm + (warp // wn) * 16 + group + 8 * row_half
        col = rep_n * 8 * wn + (warp % wn) * 8 + 2 * t + col_pair
        table[reg, lane, warp] = (row % shape[0], col % shape[1])
    return table


def dot_operand_reference(enc, shape):
    """mma.sync operand fragments: A (16 x 8k) lane = 4 * group + t holds row group (and
    group + 8), columns t * k .. t * k + k - 1 (and + 4k); B ((8k) x 8) holds column group,
    rows as A's columns. Warps as the accumulator's, broadcast along K; repetitions along K
    first."""
    k = enc.k_width
    wm, wn = enc.parent.warps_per_cta
    is_a = enc.op_idx == 0
    if is_a:
        tile, warp_tile = (16, 8 * k), (16, 1)
        reps = [max(1, shape[0] // (16 * wm)), max(1, shape[1] // (8 * k))]
    else:
        tile, warp_tile = (8 * k, 8), (1, 8)
        reps = [max(1, shape[0] // (8 * k)), max(1, shape[1] // (8 * wn))]
    per_thread = 4 * k if is_a else 2 * k
    table = {}
    for reg, lane, warp in product(
        range(per_thread * reps[0] * reps[1]), range(32), range(wm * wn)
    ):
        group, t = lane // 4, lane % 4
        inside, rep = reg % per_thread, reg // per_thread
        i = inside % k
        if is_a:
            row_half, k_half = inside // k % 2, inside // (2 * k)
            rep_k, rep_m = rep % reps[1], rep // reps[1]
            row = rep_m * 16 * wm + (warp // wn) * warp_tile[0] + group + 8 * row_half
            col = rep_k * tile[1] + t * k + i + 4 * k * k_half
        else:
            k_half = inside // k
            rep_k, rep_n = rep % reps[0], rep // reps[0]
            row = rep_k * tile[0] + t * k + i + 4 * k * k_half
            col = rep_n * 8 * wn + (warp % wn) * warp_tile[1] + group
        table[reg, lane, warp] = (row % shape[0], col % shape[1])
    return table


def swizzled_reference(enc, shape):
    """offset -> element of a 2-D swizzled buffer: offsets run along a row (`order[0]`); row
    r stores column c at ((c // vec) ^ phase) * vec + c % vec, phase = (r // per_phase) %
    max_phase, so the column stored at c' is c' ^ (vec * phase) (within the row)."""
    col_dim, row_dim = enc.order
    cols = shape[col_dim]
    table = {}
    for offset in range(shape[0] * shape[1]):
        row, stored = offset // cols, offset % cols
        phase = (row // enc.per_phase) % enc.max_phase
        element = [0, 0]
        element[row_dim] = row
        element[col_dim] = stored ^ ((enc.vec * phase) % cols)
        table[offset] = tuple(element)
    return table


def layout_table(layout):
    ins = [n for n in ("register", "lane", "warp") if n in layout.in_dims]
    sizes = [layout.in_dim_size(n) for n in ins]
    return {x: layout.apply(**dict(zip(ins, x))) for x in product(*(range(s) for s in sizes))}


def _prod(values):
    result = 1
    for v in values:
        result *= v
    return result


def _pow2(rng, most):
    return 1 << rng.randrange(most.bit_length())


def _split(rng, total, rank):
    parts = [1] * rank
    while total > 1:
        parts[rng.randrange(rank)] *= 2
        total //= 2
    return parts


@pytest.fixture
def rng():
    return random.Random(99)


def test_blocked_matches_its_definition(rng):
    for _ in range(25):
        rank = rng.choice([1, 2, 3])
        order = list(range(rank))
        rng.shuffle(order)
        enc = attrs.BlockedEncodingAttr(
            [_pow2(rng, 4) for _ in range(rank)],
            _split(rng, 32, rank),
            _split(rng, _pow2(rng, 4), rank),
            order,
        )
        shape = [_pow2(rng, 32) for _ in range(rank)]
        assert layout_table(to_linear_layout(enc, shape)) == blocked_reference(enc, shape)


def test_mma_v2_matches_the_ptx_fragments(rng):
    for _ in range(20):
        enc = attrs.NvidiaMmaEncodingAttr(2, 0, _split(rng, _pow2(rng, 8), 2), [16, 8])
        shape = [_pow2(rng, 64), _pow2(rng, 64)]
        assert layout_table(to_linear_layout(enc, shape)) == mma_reference(enc, shape)


def test_dot_operands_match_the_ptx_fragments(rng):
    for _ in range(30):
        mma = attrs.NvidiaMmaEncodingAttr(2, 0, _split(rng, _pow2(rng, 4), 2), [16, 8])
        enc = attrs.DotOperandEncodingAttr(rng.randrange(2), mma, rng.choice([1, 2, 4]))
        shape = [_pow2(rng, 64), _pow2(rng, 64)]
        assert layout_table(to_linear_layout(enc, shape)) == dot_operand_reference(enc, shape)


def test_slice_holds_the_parent_elements_without_the_dimension(rng):
    for _ in range(20):
        parent = attrs.BlockedEncodingAttr(
            [_pow2(rng, 2), _pow2(rng, 4)], _split(rng, 32, 2), _split(rng, 4, 2), [1, 0]
        )
        dim = rng.randrange(2)
        shape = [_pow2(rng, 64)]
        parent_shape = [1, 1]
        parent_shape[1 - dim] = shape[0]
        parent_table = blocked_reference(parent, parent_shape)
        layout = to_linear_layout(attrs.SliceEncodingAttr(dim, parent), shape)
        for lane, warp in product(range(32), range(4)):
            held = {
                layout.apply(register=r, lane=lane, warp=warp)[0]
                for r in range(layout.in_dim_size("register"))
            }
            expected = {
                v[1 - dim] for (r, ln, w), v in parent_table.items() if (ln, w) == (lane, warp)
            }
            assert held == expected


def test_fma_operand_holds_the_whole_k_extent():
    parent = attrs.BlockedEncodingAttr([2, 2], [4, 8], [2, 2], [1, 0])
    a = to_linear_layout(attrs.DotOperandEncodingAttr(0, parent), [32, 16])
    b = to_linear_layout(attrs.DotOperandEncodingAttr(1, parent), [16, 64])
    for lane, warp in product(range(32), range(4)):
        rows = {a.apply(register=r, lane=lane, warp=warp) for r in range(a.in_dim_size("register"))}
        assert {k for _, k in rows} == set(range(16))
        cols = {b.apply(register=r, lane=lane, warp=warp) for r in range(b.in_dim_size("register"))}
        assert {k for k, _ in cols} == set(range(16))
    assert a.zero_bases_mask("lane") == 0b111  # the lanes along K (dim1) hold the same rows


def test_swizzled_shared_matches_its_definition(rng):
    for _ in range(25):
        order = rng.choice([[1, 0], [0, 1]])
        enc = attrs.SwizzledSharedEncodingAttr(
            rng.choice([1, 2, 4, 8]), rng.choice([1, 2, 4]), rng.choice([1, 2, 4, 8]), order
        )
        shape = [_pow2(rng, 64), _pow2(rng, 64)]
        layout = to_linear_layout(enc, shape)
        assert layout.in_dims == ("offset", "block")
        got = {o: layout.apply(offset=o) for o in range(shape[0] * shape[1])}
        assert got == swizzled_reference(enc, shape)
        assert layout.is_invertible()


def test_the_documented_swizzle_row():
    """Triton's documentation: vec=2, perPhase=1, maxPhase=4, row 1 of an 8-wide tile stores
    columns [10, 11, 8, 9, 14, 15, 12, 13] - as element numbers of an 8-wide row, 8 + c."""
    layout = to_linear_layout(attrs.SwizzledSharedEncodingAttr(2, 1, 4, [1, 0]), [4, 8])
    assert [8 * r + c for r, c in (layout.apply(offset=8 + i) for i in range(8))] == [
        10, 11, 8, 9, 14, 15, 12, 13,
    ]  # fmt: skip


# -- values Triton's tests spell out


def test_known_blocked_layouts():
    simple = to_linear_layout(attrs.BlockedEncodingAttr([1], [4], [4], [0]), [16])
    assert simple.all_bases() == {
        "register": [], "lane": [(1,), (2,)], "warp": [(4,), (8,)], "block": [],
    }  # fmt: skip
    larger = to_linear_layout(attrs.BlockedEncodingAttr([1], [4], [4], [0]), [128])
    assert larger.bases("register") == [(16,), (32,), (64,)]
    smaller = to_linear_layout(attrs.BlockedEncodingAttr([4], [4], [4], [0]), [8])
    assert smaller.bases("lane") == [(4,), (0,)]
    assert smaller.bases("warp") == [(0,), (0,)]
    assert smaller.zero_bases_mask("warp") == 0b11


def test_known_mma_and_slice_layouts():
    mma = attrs.NvidiaMmaEncodingAttr(2, 0, [1, 1], [16, 8])
    layout = to_linear_layout(mma, [32, 32])
    assert layout.bases("register") == [(0, 1), (8, 0), (0, 8), (0, 16), (16, 0)]
    assert layout.bases("lane") == [(0, 2), (0, 4), (1, 0), (2, 0), (4, 0)]
    assert layout.contiguous_registers("dim1") == 2
    sliced = to_linear_layout(
        attrs.SliceEncodingAttr(1, attrs.NvidiaMmaEncodingAttr(2, 0, [2, 2], [16, 8])), [128]
    )
    assert sliced.all_bases() == {
        "register": [(8,), (32,), (64,)],
        "lane": [(0,), (0,), (1,), (2,), (4,)],
        "warp": [(0,), (16,)],
        "block": [],
    }


def test_cga_layout_spreads_ctas():
    enc = attrs.BlockedEncodingAttr([8, 1], [8, 4], [1, 4], [0, 1], [[0, 1]])
    layout = to_linear_layout(enc, [64, 128])
    assert layout.bases("block") == [(0, 64)]
    assert layout.bases("register") == [(1, 0), (2, 0), (4, 0), (0, 16), (0, 32)]


def test_linear_encoding_round_trips_through_its_layout(rng):
    for record in RECORDS[:40]:
        tensor = Parser(record["type"]).parse_type()
        layout = to_linear_layout(tensor.encoding, tensor.shape)
        if "register" not in layout.in_dims:
            continue
        encoding = to_linear_encoding(layout)
        assert isinstance(encoding, attrs.LinearEncodingAttr)
        assert to_linear_layout(encoding, tensor.shape) == layout


def test_linear_encoding_smaller_than_the_shape_repeats_in_registers():
    enc = attrs.LinearEncodingAttr([[1, 0]], [[0, 1], [0, 2], [0, 4], [0, 8], [2, 0]], [], [])
    layout = to_linear_layout(enc, [8, 32])
    assert layout.bases("register") == [(1, 0), (4, 0), (0, 16)]


def test_unsupported_and_invalid_encodings():
    with pytest.raises(NotImplementedError, match="unswizzled"):
        to_linear_layout(attrs.NVMMASharedEncodingAttr(0, False, 16), [64, 64])
    with pytest.raises(ValueError, match="rank"):
        to_linear_layout(attrs.BlockedEncodingAttr([1], [32], [4], [0]), [4, 4])
    with pytest.raises(ValueError, match="powers of two"):
        to_linear_layout(attrs.BlockedEncodingAttr([1], [32], [4], [0]), [12])


def test_a_linear_encoding_larger_than_the_shape_broadcasts():
    """As Triton's: a linear layout made for one shape, on a smaller one (a reduction's
    size-1 dimension), zeroes its largest bases along the dimension that shrank."""
    enc = attrs.LinearEncodingAttr([[0, 1], [4, 0]], [[1, 0], [2, 0], [0, 2]], [], [])
    layout = to_linear_layout(enc, [4, 1])
    assert layout.bases("register") == [(0, 0), (0, 0)]
    assert layout.bases("lane") == [(1, 0), (2, 0), (0, 0)]


def test_conversions_are_cached():
    enc = attrs.BlockedEncodingAttr([4], [32], [4], [0])
    assert to_linear_layout(enc, [1024]) is to_linear_layout(enc, (1024,))
    assert isinstance(to_linear_layout(enc, [1024]), LinearLayout)


def test_registers_to_shared_offsets_by_composition():
    """The offsets a blocked tensor's registers are stored at in a swizzled buffer: the
    register layout composed with the inverse of the shared layout."""
    registers = to_linear_layout(
        attrs.BlockedEncodingAttr([1, 4], [8, 4], [4, 1], [1, 0]), [64, 32]
    )
    shared = to_linear_layout(attrs.SwizzledSharedEncodingAttr(4, 2, 4, [1, 0]), [64, 32])
    to_offset = registers.compose(shared.sublayout(["offset"], shared.out_dims).invert())
    assert to_offset.out_dims == ("offset",)
    for x in product(range(16), range(32), range(4)):
        inputs = dict(zip(("register", "lane", "warp"), x))
        (offset,) = to_offset.apply(**inputs)
        assert shared.apply(offset=offset) == registers.apply(**inputs)


def test_default_blocked_layouts_match_triton():
    """convert-triton-to-tritongpu's layouts of 48 random shapes (default_blocked.json)."""
    records = json.loads((FIXTURE.parent / "default_blocked.json").read_text())
    assert len(records) == 48
    for record in records:
        enc = attrs.BlockedEncodingAttr.default(record["shape"], record["num_warps"])
        assert str(enc) == record["encoding"], record


def test_blocked_for_shape_as_the_coalescer_builds_it():
    """Observed in Triton's TTGIR: a 128x64 fp16 tile, 16-byte vectors, 8 warps."""
    enc = attrs.BlockedEncodingAttr.for_shape([128, 64], [1, 8], [1, 0], num_warps=8)
    assert str(enc) == (
        "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [8, 1],"
        " order = [1, 0]}>"
    )
    vector_add = attrs.BlockedEncodingAttr.for_shape([1024], [4], [0], num_warps=4)
    assert vector_add == attrs.BlockedEncodingAttr([4], [32], [4], [0])
    assert to_linear_layout(vector_add, [1024]).contiguous_registers("dim0") == 4
