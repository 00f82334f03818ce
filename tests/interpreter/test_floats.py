"""The interpreter's float conversions against a slow, independent model written here.

The model works on Python floats (every value of these formats, and every midpoint between two
neighbours of an 8- or 16-bit format, is exact in a double): it finds a value's neighbours in the
sorted list of a format's finite values and picks one. The GPU rules it encodes are spelled out
in `RULE` and in the edge-case table; `tests/gpu/test_floats_triton.py` checks the same module
against Triton on a Hopper GPU. Integer conversions are in `test_floats_int.py`.
"""

import math
from bisect import bisect_right
from functools import cache

import ml_dtypes
import numpy as np
import pytest

from naiad.runtime.interpreter.floats import convert, from_float64, numpy_dtype, to_float64

pytestmark = pytest.mark.filterwarnings("error")

# name: (exponent bits, mantissa bits, bias, which patterns are special)
LAYOUT = {
    "fp64": (11, 52, 1023, "ieee"),
    "fp32": (8, 23, 127, "ieee"),
    "fp16": (5, 10, 15, "ieee"),
    "bf16": (8, 7, 127, "ieee"),
    "fp8e5": (5, 2, 15, "ieee"),
    "fp8e4nv": (4, 3, 7, "fn"),
    "fp8e4b8": (4, 3, 8, "fnuz"),
    "fp8e5b16": (5, 2, 16, "fnuz"),
    "fp8e4b15": (4, 3, 15, "none"),
}
FP8 = ("fp8e4nv", "fp8e5", "fp8e4b8", "fp8e5b16", "fp8e4b15")
NAN = {
    "fp64": 0x7FFF_FFFF_FFFF_FFFF,
    "fp32": 0x7FFF_FFFF,
    "fp16": 0x7FFF,
    "bf16": 0x7FFF,
    "fp8e5": 0x7F,
    "fp8e4nv": 0x7F,
    "fp8e4b8": 0x80,
    "fp8e5b16": 0x80,
}
# What a magnitude beyond the largest finite value (infinity included) becomes on Hopper:
# "ieee": inf when rounding to nearest, the largest finite toward zero, inf stays inf;
# "sat": the largest finite (cvt .satfinite); "fnuz": the largest finite, but inf -> NaN 0x80.
RULE = {
    ("fp8e4nv", "rtne"): "sat",
    ("fp8e4nv", "rtz"): "sat",
    ("fp8e5", "rtne"): "sat",
    ("fp8e5", "rtz"): "ieee",
}


def width(name):
    e, m, _, _ = LAYOUT[name]
    return 1 + e + m


def held(bits, name):
    """NumPy values of `name` from a sequence of bit patterns."""
    return np.asarray(bits, np.uint64).astype(f"uint{width(name)}").view(numpy_dtype(name))


def bits_of(values, name):
    return [int(b) for b in np.asarray(values).view(f"uint{width(name)}").ravel()]


def ref_decode(bits, name):
    """The value of a bit pattern as a Python float (exact for every format here)."""
    e_bits, m_bits, bias, special = LAYOUT[name]
    sign = -1.0 if bits >> (e_bits + m_bits) else 1.0
    e, f = (bits >> m_bits) & ((1 << e_bits) - 1), bits & ((1 << m_bits) - 1)
    if special == "ieee" and e == (1 << e_bits) - 1:
        return sign * math.inf if f == 0 else math.nan
    if (special == "fn" and e == (1 << e_bits) - 1 and f == (1 << m_bits) - 1) or (
        special == "fnuz" and bits == 1 << (e_bits + m_bits)
    ):
        return math.nan
    if e == 0:
        return sign * math.ldexp(f, 1 - bias - m_bits)
    return sign * math.ldexp(f + (1 << m_bits), e - bias - m_bits)


@cache
def finite_values(name):
    """Sorted non-negative finite values of `name` and their patterns (ascending with the bits)."""
    pairs = [(ref_decode(b, name), b) for b in range(1 << (width(name) - 1))]
    pairs = [(v, b) for v, b in pairs if not math.isnan(v) and not math.isinf(v)]
    return [v for v, _ in pairs], [b for _, b in pairs]


def ref_round(x, name, rounding):
    """The pattern of `name` that Hopper gives for float `x` (one rounding step)."""
    if math.isnan(x):
        return NAN[name]
    rule = "fnuz" if LAYOUT[name][3] == "fnuz" else RULE.get((name, rounding), "ieee")
    values, patterns = finite_values(name)
    a, largest = abs(x), len(values) - 1
    if math.isinf(a):
        out = {"ieee": patterns[-1] + 1, "sat": patterns[-1], "fnuz": 0x80}[rule]
    else:
        i = bisect_right(values, a) - 1
        out = patterns[i]
        if values[i] != a and rounding == "rtne":
            if i == largest:
                spacing = values[-1] - values[-2]
                if a >= values[-1] + spacing / 2 and rule == "ieee":
                    out = patterns[-1] + 1  # overflow to infinity
            else:
                middle = (values[i] + values[i + 1]) / 2
                if a > middle or (a == middle and patterns[i] & 1):
                    out = patterns[i + 1]
    if math.copysign(1.0, x) < 0 and not (rule == "fnuz" and out == 0):
        out |= 1 << (width(name) - 1)
    return out


def ref_fp16_to_fp8e4b15(half_bits):
    """Triton's clamp to 1.75 (NaN too), then round half away from zero; the sign bit is copied."""
    x = ref_decode(half_bits, "fp16")
    a = 1.75 if math.isnan(x) else min(abs(x), 1.75)
    values, patterns = finite_values("fp8e4b15")
    i = bisect_right(values, a) - 1
    out = patterns[i]
    if values[i] != a and a >= (values[i] + values[i + 1]) / 2:
        out = patterns[i + 1]
    return out | ((half_bits >> 15) << 7)


def ref_convert(bits, src, dst, rounding):
    if dst == "fp8e4b15":
        if src != "fp16":  # Triton goes fp32 -> fp16 by rtz first
            bits = ref_round(ref_decode(bits, src), "fp16", "rtz")
        return ref_fp16_to_fp8e4b15(bits)
    return ref_round(ref_decode(bits, src), dst, rounding)


def check(src, dst, rounding, patterns):
    got = bits_of(convert(held(patterns, src), src, dst, rounding), dst)
    want = [ref_convert(b, src, dst, rounding) for b in patterns]
    bad = [(hex(p), hex(g), hex(w)) for p, g, w in zip(patterns, got, want) if g != w]
    assert not bad, f"{len(bad)} differ (input, got, want): {bad[:8]}"


# -- exhaustive ------------------------------------------------------------------------------------
@pytest.mark.parametrize("src", FP8)
@pytest.mark.parametrize("dst", ["fp16", "bf16", "fp32", "fp64"])
def test_every_fp8_pattern_widens_exactly(src, dst):
    got = bits_of(convert(held(range(256), src), src, dst), dst)
    for b, g in zip(range(256), got):
        x = ref_decode(b, src)
        if src == "fp8e5" and dst == "bf16" and (b & 0x7C) == 0x7C:
            # The 2**112 multiply treats the all-ones exponent as a number: inf -> 65536.
            x = math.copysign(math.ldexp(4 + (b & 3), 14), -1.0 if b & 0x80 else 1.0)
        if math.isnan(x):  # canonical NaN; into fp64 it is fp32's, widened
            assert g == (0x7FFF_FFFF_E000_0000 if dst == "fp64" else NAN[dst]), hex(b)
        else:
            assert ref_decode(g, dst) == x and math.copysign(
                1, ref_decode(g, dst)
            ) == math.copysign(1, x), hex(b)


@pytest.mark.parametrize("src", ["fp8e4nv", "fp8e5", "fp8e4b8", "fp8e5b16"])
def test_fp8_values_agree_with_ml_dtypes(src):
    values = held(range(256), src)
    ours, theirs = to_float64(values, src), values.astype(np.float64)
    assert np.array_equal(ours, theirs, equal_nan=True)


@pytest.mark.parametrize("src", ["fp16", "bf16"])
@pytest.mark.parametrize("dst", FP8)
@pytest.mark.parametrize("rounding", ["rtne", "rtz"])
def test_every_16_bit_pattern_to_fp8(src, dst, rounding):
    check(src, dst, rounding, range(1 << 16))


@pytest.mark.parametrize("src, dst", [("fp16", "bf16"), ("bf16", "fp16")])
@pytest.mark.parametrize("rounding", ["rtne", "rtz"])
def test_every_fp16_bf16_pattern_to_the_other(src, dst, rounding):
    check(src, dst, rounding, range(1 << 16))


# -- samples ---------------------------------------------------------------------------------------
def fp32_samples():
    """Seeded fp32 patterns: uniform bits, plus exact ties of fp16, bf16 and the fp8 formats."""
    rng = np.random.default_rng(7)
    uniform = rng.integers(0, 1 << 32, 6000, dtype=np.uint64)
    ties = [
        (rng.integers(0, 1 << 32, 1500, dtype=np.uint64) >> np.uint64(d + 1) << np.uint64(d + 1))
        | np.uint64(1 << d)
        for d in (12, 15, 19, 20)
    ]
    return [int(b) for b in np.concatenate([uniform, *ties])]


@pytest.mark.parametrize("dst", ["fp16", "bf16", *FP8])
@pytest.mark.parametrize("rounding", ["rtne", "rtz"])
def test_fp32_samples(dst, rounding):
    check("fp32", dst, rounding, fp32_samples())


@pytest.mark.parametrize("dst", ["fp16", "bf16", *FP8])
def test_fp64_samples_round_once(dst):
    rng = np.random.default_rng(11)
    patterns = [int(b) for b in rng.integers(0, 1 << 63, 4000, dtype=np.uint64) * np.uint64(2)]
    near = np.concatenate([rng.normal(0, s, 2000) for s in (1e-6, 1.0, 300.0, 7e4)])
    patterns += bits_of(near, "fp64")
    finite = [b for b in patterns if not math.isnan(ref_decode(b, "fp64"))]
    check("fp64", dst, "rtne", finite)


def test_fp64_to_fp32_is_numpys_rounding_and_rtz_steps_toward_zero():
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.normal(0, 1, 3000), rng.normal(0, 1, 3000) * 1e38, [1e39, -1e39]])
    with np.errstate(over="ignore"):  # NumPy's own cast warns where it overflows to inf
        nearest32 = x.astype(np.float32)
    assert np.array_equal(convert(x, "fp64", "fp32"), nearest32)
    toward_zero = convert(x, "fp64", "fp32", "rtz").astype(np.float64)
    nearest = nearest32.astype(np.float64)
    stepped = np.where(
        np.abs(nearest) > np.abs(x),
        np.nextafter(nearest.astype(np.float32), np.float32(0)),
        nearest,
    )
    assert np.array_equal(
        toward_zero, np.clip(stepped, -3.4028234663852886e38, 3.4028234663852886e38)
    )


# -- edge cases, one GPU behaviour each ------------------------------------------------------------
EDGES = [
    # (src, src bits, dst, rounding, expected bits, the behaviour)
    ("fp32", 0x7F800000, "fp8e4nv", "rtne", 0x7E, "satfinite: +inf -> +448"),
    ("fp32", 0xFF800000, "fp8e5", "rtne", 0xFB, "satfinite: -inf -> -57344"),
    ("fp32", 0x47800000, "fp8e5", "rtne", 0x7B, "satfinite: 65536 -> 57344, not inf"),
    ("fp32", 0x43E80000, "fp8e4nv", "rtne", 0x7E, "satfinite: 464 (a tie above 448) -> 448"),
    ("fp32", 0xFFC00000, "fp8e4nv", "rtne", 0x7F, "NaN -> 0x7f, sign dropped"),
    ("fp32", 0x7FC00001, "fp8e5", "rtne", 0x7F, "NaN -> 0x7f whatever the payload"),
    ("fp32", 0x7F800000, "fp8e5", "rtz", 0x7C, "rtz through fp16: inf stays inf"),
    ("fp32", 0x477FE000, "fp8e5", "rtz", 0x7B, "rtz: 65504 -> 57344"),
    ("fp32", 0x3A800000, "fp8e4nv", "rtne", 0x00, "2**-10, half the smallest subnormal: even 0"),
    ("fp32", 0x3B400000, "fp8e4nv", "rtne", 0x02, "1.5 * 2**-9: tie between subnormals 1 and 2"),
    ("fp32", 0x80000001, "fp8e4nv", "rtne", 0x80, "tiny negative keeps its sign: -0"),
    ("fp32", 0x477FF000, "fp16", "rtne", 0x7C00, "65520 (tie above 65504) overflows to inf"),
    ("fp32", 0x477FF000, "fp16", "rtz", 0x7BFF, "rtz overflow -> 65504"),
    ("fp32", 0x7F800000, "fp16", "rtz", 0x7C00, "rtz keeps inf"),
    ("fp32", 0x7F7FFFFF, "bf16", "rtne", 0x7F80, "largest fp32 rounds up to bf16 inf"),
    ("fp32", 0x7F7FFFFF, "bf16", "rtz", 0x7F7F, "rtz: largest bf16"),
    ("fp32", 0x00000001, "fp16", "rtne", 0x0000, "fp32 subnormal -> +0 (nothing flushed, tiny)"),
    ("fp32", 0x33000000, "fp16", "rtne", 0x0000, "2**-25: tie with the smallest subnormal -> 0"),
    ("fp32", 0x33000001, "fp16", "rtne", 0x0001, "just above the tie -> smallest subnormal"),
    ("fp32", 0xFFC00000, "fp16", "rtne", 0x7FFF, "NaN -> canonical fp16 NaN"),
    ("fp32", 0x7F800001, "bf16", "rtne", 0x7FFF, "signalling NaN -> canonical bf16 NaN"),
    ("fp32", 0x7F800000, "fp8e4b8", "rtne", 0x80, "fnuz: inf -> the NaN 0x80"),
    ("fp32", 0x80000000, "fp8e4b8", "rtne", 0x00, "fnuz: -0 -> +0"),
    ("fp32", 0x4F800000, "fp8e5b16", "rtne", 0x7F, "fnuz: overflow saturates to 57344"),
    ("fp16", 0x7C00, "fp8e4nv", "rtne", 0x7E, "fp16 inf saturates too"),
    ("fp16", 0xFE00, "fp8e5", "rtne", 0x7F, "fp16 -NaN -> 0x7f"),
    ("bf16", 0x7F80, "fp16", "rtne", 0x7C00, "bf16 inf through fp32 stays inf"),
    ("bf16", 0x4780, "fp16", "rtne", 0x7C00, "bf16 65536 overflows fp16"),
    ("fp8e5", 0x7C, "bf16", "rtne", 0x4780, "fp8e5 inf -> bf16 65536 (the 2**112 multiply)"),
    ("fp8e5", 0xFD, "bf16", "rtne", 0xC7A0, "fp8e5 -NaN 0xfd -> bf16 -81920"),
    ("fp8e5", 0x7C, "fp16", "rtne", 0x7C00, "fp8e5 inf -> fp16 inf"),
    ("fp8e5", 0x7E, "fp32", "rtne", 0x7FFFFFFF, "fp8e5 NaN -> canonical fp32 NaN"),
    ("fp8e4nv", 0xFF, "fp16", "rtne", 0x7FFF, "fp8e4nv -NaN -> canonical fp16 NaN"),
    ("fp8e4nv", 0x7E, "fp32", "rtne", 0x43E00000, "fp8e4nv 0x7e is 448"),
    ("fp8e4b15", 0x7F, "fp16", "rtne", 0x3F80, "fp8e4b15 0x7f is 1.875, a number"),
    ("fp8e4b15", 0x01, "fp32", "rtne", 0x37000000, "fp8e4b15 smallest subnormal is 2**-17"),
    ("fp16", 0x3F80, "fp8e4b15", "rtne", 0x7E, "1.875 clamps to 1.75: 0x7f never comes out"),
    ("fp16", 0x7E00, "fp8e4b15", "rtne", 0x7E, "fp16 NaN -> 1.75 (min.f16x2 drops NaN)"),
    ("fp16", 0xFC00, "fp8e4b15", "rtne", 0xFE, "fp16 -inf -> -1.75"),
    ("fp16", 0x0040, "fp8e4b15", "rtne", 0x01, "2**-18: tie rounds AWAY from zero"),
    ("fp16", 0x3C40, "fp8e4b15", "rtz", 0x79, "1.0625: tie -> 1.125 whatever the rounding"),
    ("fp32", 0xFFC00000, "fp8e4b15", "rtne", 0x7E, "fp32 NaN -> canonical fp16 -> +1.75"),
    ("fp32", 0x3F87FFFF, "fp8e4b15", "rtne", 0x78, "fp32 rz to fp16 first: just below the tie"),
    ("fp64", 0xFFF0FCE61C2CFA43, "fp32", "rtne", 0xFFC7E730, "fp64 NaN keeps sign and payload"),
    ("fp64", 0xFFF0FCE61C2CFA43, "fp16", "rtne", 0xFE3F, "fp64 -> fp16 NaN payload, quieted"),
    ("fp64", 0x7FFA08360E250EAD, "bf16", "rtne", 0x7FD0, "fp64 -> bf16 NaN payload"),
    ("fp32", 0xFFAAD38F, "fp64", "rtne", 0xFFFD5A71E0000000, "fp32 sNaN -> fp64, quieted"),
    ("bf16", 0x7F81, "fp32", "rtne", 0x7F810000, "bf16 -> fp32 is a shift: sNaN kept"),
    ("bf16", 0xFF81, "fp64", "rtne", 0xFFF8200000000000, "bf16 -> fp32 -> fp64 NaN payload"),
    ("fp16", 0xFC01, "fp64", "rtne", 0x7FFFFFFFE0000000, "fp16 NaN -> canonical fp32 -> fp64"),
    ("fp64", 0x0000000000000001, "fp32", "rtne", 0x00000000, "fp64 subnormal -> +0"),
    ("fp64", 0x380FFFFFF0000000, "fp32", "rtne", 0x00800000, "rounds up into the normal range"),
]


@pytest.mark.parametrize(
    "src, src_bits, dst, rounding, want, why", EDGES, ids=[e[5] for e in EDGES]
)
def test_edge_case(src, src_bits, dst, rounding, want, why):
    assert bits_of(convert(held([src_bits], src), src, dst, rounding), dst) == [want]


# -- API -------------------------------------------------------------------------------------------
def test_numpy_dtypes():
    assert numpy_dtype("bf16") == ml_dtypes.bfloat16
    assert numpy_dtype("fp8e4nv") == ml_dtypes.float8_e4m3fn
    assert numpy_dtype("fp8e5") == ml_dtypes.float8_e5m2
    assert numpy_dtype("fp8e4b8") == ml_dtypes.float8_e4m3fnuz
    assert numpy_dtype("fp8e5b16") == ml_dtypes.float8_e5m2fnuz
    assert numpy_dtype("fp8e4b15") == np.uint8  # bit patterns: no library type has bias 15
    assert numpy_dtype("int1") == np.bool_ and numpy_dtype("uint32") == np.uint32
    with pytest.raises(ValueError, match="unknown"):
        numpy_dtype("fp8e4m3")


def test_fp8e4b15_to_float64_and_back():
    values = held(range(256), "fp8e4b15")
    x = to_float64(values, "fp8e4b15")
    assert [float(v) for v in x] == [ref_decode(b, "fp8e4b15") for b in range(256)]
    back = from_float64(x, "fp8e4b15")  # exact values survive fp16; 0x7f clamps to 0x7e
    assert bits_of(back, "fp8e4b15") == [b - 1 if b & 0x7F == 0x7F else b for b in range(256)]


@pytest.mark.parametrize("name", ["fp64", "fp32", "fp16", "bf16", "fp8e5"])
def test_infinities_and_nans_widen_without_a_warning(name):
    """An infinity's or NaN's lane overflows the exact decode's ldexp before it is replaced:
    no RuntimeWarning reaches the user (this module turns warnings into errors)."""
    specials = np.array([np.inf, -np.inf, np.nan, 1.5, -0.0])
    held_specials = specials.astype(numpy_dtype(name))
    x = to_float64(held_specials, name)
    np.testing.assert_array_equal(x, specials)


def test_shapes_and_identity():
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    assert convert(x, "fp32", "bf16").shape == (3, 4)
    assert convert(np.float32(2.5), "fp32", "fp8e4nv").shape == ()
    same = convert(x, "fp32", "fp32")
    assert np.array_equal(same, x) and same is not x


def test_refuses_wrong_holders_and_rounding():
    with pytest.raises(TypeError, match="held as float32"):
        convert(np.zeros(2, np.float64), "fp32", "fp16")
    with pytest.raises(ValueError, match="rounding"):
        convert(np.zeros(2, np.float32), "fp32", "fp16", "rtn")
