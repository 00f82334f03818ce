"""8-bit elements exchanged within warps a word at a time (lowering/convert_words.py): tutorial
06's fp8 P, the first dot's wgmma accumulator rounded to fp8, becomes the second dot's register
A (kWidth 4) by a select, a shuffle and a `prmt` a word, with no round trip through shared
memory. The plan for each tile the tutorial's configs make, its code executed for every
thread, and the PTX of the fp8 attention chain."""

import random

import pytest
from test_convert_emission import run_conversion
from test_pipeline_loads import DOT_KERNELS, _modules
from test_toolchain import needs_ptxas
from test_wgmma import _ptx

from naiad.backends.nvidia.layouts import LinearLayout, to_linear_encoding, to_linear_layout
from naiad.backends.nvidia.lowering.convert_lanes import Shuffle
from naiad.backends.nvidia.lowering.convert_plan import plan_convert
from naiad.backends.nvidia.lowering.convert_words import PER_WORD, plan_words
from naiad.dialects.ttg.attributes import DotOperandEncodingAttr, NvidiaMmaEncodingAttr
from naiad.ir import FloatType, IntegerType, RankedTensorType

# (rows, columns, warps) of P at tutorial 06's configs (BLOCK_M x BLOCK_N).
TILES = [(64, 64, 4), (128, 64, 4), (128, 32, 4), (64, 32, 4), (128, 128, 8)]


def _p_types(m: int, n: int, warps: int, element=None):
    """(accumulator, wgmma register A) tensor types of an fp8 P of m x n."""
    mma = NvidiaMmaEncodingAttr(3, 0, [warps, 1], [16, n, 32])
    element = element or FloatType("f8E5M2")
    return tuple(
        RankedTensorType((m, n), element, encoding)
        for encoding in (mma, DotOperandEncodingAttr(0, mma, 4))
    )


@pytest.mark.parametrize("m, n, warps", TILES)
def test_fp8_p_goes_a_word_at_a_time(m, n, warps):
    """Each pack's candidates are whole words of consecutive source registers (a lane sends
    the word of its two rows at columns c, c + 1 or at c + 8, c + 9: one select), each
    destination word one `prmt` of two received words; the plan is chosen over a round
    trip."""
    src, dst = (to_linear_layout(t.encoding, t.shape) for t in _p_types(m, n, warps))
    plan = plan_convert(src, dst, 8)
    assert isinstance(plan, Shuffle)
    words = plan_words(plan)
    assert words.whole and plan.send.selects == 1
    registers = src.in_dim_size("register")
    assert len(words.sent) == len(words.gathers) == registers // PER_WORD
    for candidates in words.sent:
        for sources in candidates:
            assert sources[0] % PER_WORD == 0
            assert list(sources) == list(range(sources[0], sources[0] + PER_WORD))
    assert all(len(set(g.selectors)) == 2 for g in words.gathers)  # per reader lane: 2 ways


@pytest.mark.parametrize("m, n, warps", TILES)
def test_fp8_p_exchange_delivers_every_element(m, n, warps):
    got, expected = run_conversion(*_p_types(m, n, warps))
    assert got == expected


def test_random_byte_exchanges_run_as_planned():
    """Random layout pairs within warps of 8-bit elements and of i1 (which travels as a
    byte): where the word-at-a-time form applies, its code delivers every element."""
    from test_convert_plan import random_pair

    rng = random.Random(5)
    seen = 0
    for i in range(40):
        src, dst = random_pair(rng)
        plan = plan_convert(src, dst, 8)
        if not isinstance(plan, Shuffle) or not plan_words(plan).whole:
            continue
        seen += 1
        element = IntegerType(1) if i % 2 else IntegerType(8)
        shape = tuple(src.out_shape.values())
        types = [
            RankedTensorType(shape, element, to_linear_encoding(layout)) for layout in (src, dst)
        ]
        got, expected = run_conversion(*types)
        assert got == expected, (src, dst, element)
    assert seen >= 3


def test_wider_elements_keep_the_element_wise_exchange():
    """Only 8-bit elements go a word at a time."""
    src = LinearLayout.identity1d(32, "lane", "dim0") * LinearLayout.identity1d(
        2, "register", "dim0"
    )
    dst = LinearLayout.identity1d(2, "register", "dim0") * LinearLayout.identity1d(
        32, "lane", "dim0"
    )
    plan = plan_convert(src, dst, 16)
    assert isinstance(plan, Shuffle) and plan_words(plan) is None


@needs_ptxas
def test_fp8_attention_chain_exchanges_p_in_registers(tmp_path):
    """The fp8 chain (attention's fp8 mode, 64 x 64, 4 warps): P reaches the second wgmma by
    8 word shuffles and 8 `prmt`, its words assembled from the paired conversions (`mov.b32`
    of two 16-bit results), with no shared memory round trip (`bar.warp.sync`)."""
    args = ("*fp8e4nv", "*fp8e4nv", "*fp8e4nv", "*fp32")
    _, after = _modules(DOT_KERNELS.chain_fp8, args, {"M": 64, "K": 64}, 3)
    text = _ptx(after, tmp_path)
    assert text.count("shfl.sync.idx.b32") == 8
    assert text.count("prmt.b32") == 8
    assert "bar.warp.sync" not in text
    assert text.count("cvt.rn.satfinite.e4m3x2.f32") == 16
    assert len([line for line in text.splitlines() if "mov.b32" in line and "{%rs" in line]) == 8
