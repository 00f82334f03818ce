"""Integer conversions of the interpreter: float -> int as Hopper's `cvt.rzi`, int -> float,
int -> int.

The saturation table holds values measured with Triton 3.6 on an H200; the random cases use a
pure-Python model of the same rule: truncate toward zero, saturate at max(width, 16) bits, keep
the low `width` bits; NaN gives 0, or 0x80...0 from fp64 or into 64 bits.
"""

import math

import ml_dtypes
import numpy as np
import pytest

from naiad.runtime.interpreter.floats import convert, numpy_dtype

pytestmark = pytest.mark.filterwarnings("error")

WIDTHS = {
    "int8": 8,
    "int16": 16,
    "int32": 32,
    "int64": 64,
    "uint8": 8,
    "uint16": 16,
    "uint32": 32,
    "uint64": 64,
}
NAN, INF = math.nan, math.inf

# value: expected bit patterns from fp32 and fp64 sources, in the order of WIDTHS (as measured).
SATURATION = [
    # NaN: 0 from fp32 into <= 32 bits; the lowest signed pattern from fp64 or into 64 bits.
    (NAN, "fp32", [0, 0, 0, 1 << 63, 0, 0, 0, 1 << 63]),
    (NAN, "fp64", [0, 0x8000, 0x8000_0000, 1 << 63, 0, 0x8000, 0x8000_0000, 1 << 63]),
    # inf saturates; an 8-bit result is the low byte of the 16-bit one, so +inf -> int8 -1.
    (INF, "fp32", [0xFF, 0x7FFF, 0x7FFF_FFFF, (1 << 63) - 1, 0xFF, 0xFFFF, 2**32 - 1, 2**64 - 1]),
    (-INF, "fp64", [0, 0x8000, 0x8000_0000, 1 << 63, 0, 0, 0, 0]),
    # 2**31: int32 saturates, uint32 holds it.
    (2.0**31, "fp32", [0xFF, 0x7FFF, 0x7FFF_FFFF, 2**31, 0xFF, 0xFFFF, 2**31, 2**31]),
    # -2**31 - 1 (exact in fp64): saturates to int32's minimum, unsigned ones to 0.
    (-(2.0**31) - 1, "fp64", [0, 0x8000, 0x8000_0000, 2**64 - 2**31 - 1, 0, 0, 0, 0]),
    # 2**32: uint32 saturates at 2**32 - 1.
    (2.0**32, "fp64", [0xFF, 0x7FFF, 0x7FFF_FFFF, 2**32, 0xFF, 0xFFFF, 2**32 - 1, 2**32]),
    # -1.5 truncates to -1; unsigned results saturate at 0.
    (-1.5, "fp32", [0xFF, 0xFFFF, 2**32 - 1, 2**64 - 1, 0, 0, 0, 0]),
    # 8-bit results wrap the 16-bit conversion: 256 -> 0, -129 -> 127, 32768 -> int8 -1.
    (256.0, "fp32", [0, 0x100, 0x100, 0x100, 0, 0x100, 0x100, 0x100]),
    (-129.0, "fp32", [0x7F, 0xFF7F, 2**32 - 129, 2**64 - 129, 0, 0, 0, 0]),
    (32768.0, "fp64", [0xFF, 0x7FFF, 0x8000, 0x8000, 0, 0x8000, 0x8000, 0x8000]),
    (70000.0, "fp32", [0xFF, 0x7FFF, 70000, 70000, 0xFF, 0xFFFF, 70000, 70000]),
    # 2**63 and 2**64: int64 saturates; uint64 holds 2**63 and saturates at 2**64.
    (2.0**63, "fp32", [0xFF, 0x7FFF, 0x7FFF_FFFF, (1 << 63) - 1, 0xFF, 0xFFFF, 2**32 - 1, 2**63]),
    (
        2.0**64,
        "fp64",
        [0xFF, 0x7FFF, 0x7FFF_FFFF, (1 << 63) - 1, 0xFF, 0xFFFF, 2**32 - 1, 2**64 - 1],
    ),
    (-0.5, "fp64", [0] * 8),
]


def patterns(values):
    return [int(v) for v in np.asarray(values).view(f"uint{values.dtype.itemsize * 8}")]


@pytest.mark.parametrize("x, src, want", SATURATION, ids=[f"{r[1]}({r[0]})" for r in SATURATION])
def test_float_to_int_saturation_table(x, src, want):
    values = np.array([x], numpy_dtype(src))
    got = [patterns(convert(values, src, dst))[0] for dst in WIDTHS]
    assert got == want


def ref_float_to_int(x, dst, from_fp64):
    """The `cvt.rzi` model: saturate at max(width, 16) bits, keep `width` bits."""
    width = WIDTHS[dst]
    wide = max(width, 16)
    if math.isnan(x):
        value = 1 << (wide - 1) if from_fp64 or wide == 64 else 0
    else:
        low, high = (
            (0, 2**wide - 1) if dst.startswith("u") else (-(2 ** (wide - 1)), 2 ** (wide - 1) - 1)
        )
        value = min(max(int(x), low), high) if math.isfinite(x) else (high if x > 0 else low)
    return value % 2**width


@pytest.mark.parametrize("src", ["fp16", "bf16", "fp32", "fp64", "fp8e4nv", "fp8e4b15"])
@pytest.mark.parametrize("dst", list(WIDTHS))
def test_float_to_int_random(src, dst):
    rng = np.random.default_rng(3)
    width = numpy_dtype(src).itemsize * 8
    if width <= 16:
        bits = np.arange(1 << width, dtype=np.uint64)
    else:
        bits = rng.integers(0, 1 << 63, 20000, dtype=np.uint64) >> np.uint64(64 - width)
        bits = np.concatenate([bits, bits | np.uint64(1 << (width - 1))])
        scales = np.concatenate([rng.normal(0, 2.0**k, 500) for k in (4, 8, 16, 31, 40, 63, 64)])
        bits = np.concatenate([bits, patterns(scales.astype(numpy_dtype(src)))])
    values = bits.astype(f"uint{width}").view(numpy_dtype(src))
    with np.errstate(invalid="ignore"):  # NumPy warns when it widens a signalling NaN
        x = values.astype(np.float64) if src != "fp8e4b15" else convert(values, src, "fp64")
    got = patterns(convert(values, src, dst))
    want = [ref_float_to_int(float(v), dst, src == "fp64") for v in x]
    bad = [(float(v), g, w) for v, g, w in zip(x, got, want) if g != w]
    assert not bad, bad[:8]


def test_float_to_int1_is_unordered_not_equal():
    x = np.array([NAN, 0.0, -0.0, 0.25, -INF, 1e-45], np.float32)
    assert convert(x, "fp32", "int1").tolist() == [True, False, False, True, True, True]


def ref_round_int(n, precision):
    """n rounded to `precision` significant bits, to nearest, ties to even."""
    magnitude = abs(n)
    drop = max(magnitude.bit_length() - precision, 0)
    kept, rest = magnitude >> drop, magnitude & ((1 << drop) - 1)
    if drop and (rest > 1 << (drop - 1) or (rest == 1 << (drop - 1) and kept & 1)):
        kept += 1
    return math.copysign(kept << drop, n)


INT_EDGES = {
    "int64": [
        0,
        1,
        -1,
        2**24 + 1,
        2**24 + 3,
        -(2**24) - 1,
        2**53 + 1,
        2**62 + 2**38 + 1,
        2**63 - 1,
        -(2**63),
        -(2**63) + 1,
    ],
    "uint64": [0, 1, 2**24 + 1, 2**53 + 1, 2**63, 2**63 + 2**39, 2**63 + 2**39 + 1, 2**64 - 1],
    "int32": [2**24 + 2**16 + 1, 2**24 + 2**16, 2**31 - 1, -(2**31), 65519, 65520, -65520],
}


@pytest.mark.parametrize("src", list(INT_EDGES))
@pytest.mark.parametrize("dst, precision", [("fp64", 53), ("fp32", 24), ("bf16", 8), ("fp16", 11)])
def test_int_to_float_rounds_once(src, dst, precision):
    rng = np.random.default_rng(9)
    info = np.iinfo(numpy_dtype(src))
    shifts = rng.integers(0, info.bits, 3000).astype(np.uint64)
    randoms = rng.integers(info.min, info.max, 3000, dtype=numpy_dtype(src), endpoint=True)
    randoms = randoms >> shifts.astype(numpy_dtype(src))  # every magnitude, not only huge ones
    values = np.concatenate([randoms, np.array(INT_EDGES[src], numpy_dtype(src))])
    got = convert(values, src, dst).astype(np.float64)
    largest = float(np.finfo(np.float16).max) if dst == "fp16" else math.inf
    want = [ref_round_int(int(n), precision) for n in values]
    want = [w if abs(w) <= largest else math.copysign(INF, w) for w in want]
    assert got.tolist() == want
    if dst == "fp64":  # Python's int -> float is correctly rounded too
        assert got.tolist() == [float(int(n)) for n in values]


def test_int32_to_bf16_does_not_round_twice():
    # Through fp32 (as ml_dtypes casts) 2**24 + 2**16 + 1 lands on a tie and rounds down.
    n = np.array([2**24 + 2**16 + 1], np.int32)
    assert convert(n, "int32", "bf16").astype(np.float64).tolist() == [2**24 + 2**17]
    assert n.astype(ml_dtypes.bfloat16).astype(np.float64).tolist() == [2**24]


def test_int_to_fp8_saturates_like_floats():
    n = np.array([0, 3, -3, 17, 1000, -100000], np.int32)
    assert convert(n, "int32", "fp8e4nv").astype(np.float64).tolist() == [0, 3, -3, 16, 448, -448]
    assert patterns(convert(n, "int32", "fp8e4b8"))[-2:] == [0x7F, 0xFF]  # fnuz: +-240


def test_int_to_int_wraps_and_extends_by_source_signedness():
    assert convert(np.array([300, -1], np.int32), "int32", "int8").tolist() == [44, -1]
    assert convert(np.array([-1], np.int8), "int8", "uint32").tolist() == [2**32 - 1]
    assert convert(np.array([255], np.uint8), "uint8", "int64").tolist() == [255]
    assert convert(np.array([2**63], np.uint64), "uint64", "int64").tolist() == [-(2**63)]
    assert convert(np.array([0, 2, -4], np.int16), "int16", "int1").tolist() == [False, True, True]
    assert convert(np.array([True, False]), "int1", "int32").tolist() == [1, 0]
    assert convert(np.array([True]), "int1", "fp32").tolist() == [1.0]
