"""Conversions: `x.to(...)`, `tl.cast(...)`, `x.cast(...)`, bitcasts, rounding modes, fp8, pointers.

Every conversion is exact per the tolerance table, and checked bit for bit against references
written here: integers wrap (sign- or zero-extended by the source's signedness); int -> float and
narrowing float -> float round once (to nearest even, or toward zero with
`fp_downcast_rounding="rtz"`: IEEE overflow, inf under rtne, the largest finite value under rtz);
float -> int truncates and saturates as the GPU's `cvt.rzi` does (PTX ISA: NaN becomes 0, or
1 << (width - 1) from fp64 or into 64 bits; 8-bit results are the low byte of the 16-bit
conversion, naiad/runtime/interpreter/floats.py); fp8 conversions saturate (`.satfinite`).
"""

import math

import numpy as np
import pytest
from dtype_tables import (
    FLOAT_DTYPES,
    INTEGRAL_DTYPES,
    bitwidth,
    int_range,
    is_float,
    is_signed,
    np_dtype,
    tl_dtype,
)
from exact_arithmetic import pyints, round_float, wrap
from helpers import assert_exact, cpu_rules, kernel_error, running_on
from hypothesis import given
from hypothesis import strategies as st
from inputs import arrays, hypothesis_settings, numpy_random, poisoned, specials

import naiad
import naiad.language as tl

SPELLINGS = ("to", "tl.cast", "cast")
N = 64


@naiad.jit
def _cast_kernel(
    x_ptr,
    z_ptr,
    N: tl.constexpr,
    DST: tl.constexpr,
    SPELLING: tl.constexpr,
    ROUNDING: tl.constexpr,
    BITCAST: tl.constexpr,
):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    if SPELLING == "to":
        z = x.to(DST, fp_downcast_rounding=ROUNDING, bitcast=BITCAST)
    elif SPELLING == "tl.cast":
        z = tl.cast(x, DST, fp_downcast_rounding=ROUNDING, bitcast=BITCAST)
    else:
        z = x.cast(DST, fp_downcast_rounding=ROUNDING, bitcast=BITCAST)
    tl.static_assert(z.dtype == DST, "unexpected result dtype")
    tl.store(z_ptr + offs, z)


def run_cast(x, dst: str, rounding=None, bitcast=False, spelling="to") -> np.ndarray:
    z = poisoned(x.shape, dst)
    _cast_kernel[(1,)](
        x, z, N=x.shape[0], DST=tl_dtype(dst), SPELLING=spelling, ROUNDING=rounding, BITCAST=bitcast
    )
    return z


def pad(values, n=None) -> np.ndarray:
    """`values` repeated to a power-of-two length."""
    n = n or 1 << (len(values) - 1).bit_length()
    return np.resize(np.asarray(values), n)


# -------------------------------------------------------------------------------------------------
# references
# -------------------------------------------------------------------------------------------------
def float_to_int(x, src: str, dst: str) -> np.ndarray:
    """`cvt.rzi` (at 16 bits at least): truncate toward zero, saturate; NaN as the PTX ISA says."""
    if dst == "int1":
        return x.astype(np.float64) != 0  # `x != 0`, unordered: NaN is true
    bits = bitwidth(dst)
    width = max(bits, 16)
    lo, hi = (
        (-(1 << (width - 1)), (1 << (width - 1)) - 1) if is_signed(dst) else (0, (1 << width) - 1)
    )
    out = []
    for v in x.astype(np.float64):
        if math.isnan(v):
            out.append(1 << (width - 1) if src == "float64" or width == 64 else 0)
        elif math.isinf(v):
            out.append(hi if v > 0 else lo)
        else:
            out.append(min(max(math.trunc(v), lo), hi))
    return wrap(out, dst)


def float_to_float(x, src: str, dst: str, rounding: str = "rtne") -> np.ndarray:
    return round_float(x.astype(np.float64), dst, rounding)


# -------------------------------------------------------------------------------------------------
# the four spellings
# -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "src, dst, rounding, bitcast",
    [
        ("float32", "float16", None, False),
        ("float32", "bfloat16", "rtz", False),
        ("int32", "int8", None, False),
        ("float32", "int32", None, False),
        ("float32", "uint32", None, True),
        ("int16", "float16", None, True),
    ],
)
def test_spellings_agree(src, dst, rounding, bitcast, gen):
    x = numpy_random(N, src, gen)
    results = [run_cast(x, dst, rounding, bitcast, spelling) for spelling in SPELLINGS]
    for other in results[1:]:
        assert_exact(other, results[0])


# -------------------------------------------------------------------------------------------------
# integers
# -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "src, dst",
    [(a, b) for a in ("int1", *INTEGRAL_DTYPES) for b in ("int1", *INTEGRAL_DTYPES) if a != b],
)
def test_int_to_int(src, dst, gen):
    x = pad(
        np.concatenate(
            [
                numpy_random(48, src, gen),
                specials(src) if src != "int1" else np.array([True, False]),
            ]
        ),
        N,
    )
    expected = x != 0 if dst == "int1" else wrap(pyints(x), dst)
    assert_exact(run_cast(x, dst), expected)


@pytest.mark.parametrize("src", ("int1", *INTEGRAL_DTYPES))
@pytest.mark.parametrize("dst", FLOAT_DTYPES)
@hypothesis_settings(max_examples=3)
@given(data=st.data())
def test_int_to_float_rounds_to_nearest_even(src, dst, data):
    x = data.draw(arrays(src, N), label="x")
    if src != "int1":
        x[: len(specials(src))] = specials(src)
    assert_exact(run_cast(x, dst), round_float(pyints(x), dst))


def test_int_to_float_ties():
    # 2**24 + 1 is halfway between two fp32 values: to even. 2**24 + 3 rounds up.
    x = np.array(
        [2**24 + 1, 2**24 + 3, -(2**24) - 1, 2**53 + 1, 2**63 - 1, -(2**63), 2049, 2051], np.int64
    )
    assert pyints(run_cast(x, "float32")[:3].astype(np.int64)) == [2**24, 2**24 + 4, -(2**24)]
    assert list(run_cast(x, "float16")[6:]) == [2048.0, 2052.0]
    assert_exact(run_cast(x, "float64"), round_float(pyints(x), "float64"))
    u = np.array([2**64 - 1, 2**63 + 2**39, 1, 3], np.uint64)
    assert_exact(run_cast(u, "float32"), round_float(pyints(u), "float32"))


# -------------------------------------------------------------------------------------------------
# float -> int: truncation and saturation
# -------------------------------------------------------------------------------------------------
def _float_inputs(src, dst, gen):
    bits = bitwidth(dst)
    values = gen.standard_normal(40) * np.exp2(gen.integers(0, bits + 2, 40))
    lo, hi = int_range(dst)
    edges = [
        0.5,
        -0.5,
        1.5,
        -1.5,
        2.5,
        -2.7,
        127.9,
        -128.9,
        255.5,
        300.0,
        -300.0,
        65535.9,
        float(hi),
        float(lo) or -1.0,
        float(hi) * 2,
        -float(hi) * 2,
        np.inf,
        -np.inf,
        np.nan,
    ]
    with np.errstate(over="ignore"):  # beyond fp16's range: inf, on purpose
        host = np.float32 if src == "bfloat16" else np_dtype(src)
        x = np.concatenate([values, edges]).astype(host)
        return pad(x.astype(np_dtype(src)), N)


@pytest.mark.parametrize("src", FLOAT_DTYPES)
@pytest.mark.parametrize("dst", ("int1", *INTEGRAL_DTYPES))
def test_float_to_int_truncates_and_saturates(src, dst, gen):
    x = _float_inputs(src, dst, gen)
    assert_exact(run_cast(x, dst), float_to_int(x, src, dst))


@pytest.mark.parametrize("dst", ("int16", "int32", "int64", "uint16", "uint32", "uint64"))
def test_float_to_int_saturation_values(dst):
    lo, hi = int_range(dst)
    x = np.array([np.inf, -np.inf, 1e30, -1e30, -0.9, 0.9, -1.5, 2.5], np.float32)
    z = pyints(run_cast(x, dst))
    assert z[:4] == [hi, lo, hi, lo]
    assert z[4:] == [0, 0, 0 if lo == 0 else -1, 2]
    nan = pyints(run_cast(np.full(4, np.nan, np.float32), dst))
    # PTX: NaN -> 0, except into 64 bits (1 << 63: INT64_MIN, or 2**63 unsigned)
    assert nan == [0] * 4 if bitwidth(dst) < 64 else [lo or 2**63] * 4


@pytest.mark.parametrize("src", ("float32", "float64"))
def test_float_to_int8_is_the_low_byte_of_the_16_bit_conversion(src):
    # The GPU has no 8-bit registers: fptosi to i8 is cvt.rzi.s16 and a truncation.
    x = np.array([300.0, -300.0, 1e6, -1e6, np.inf, -np.inf, 127.0, -128.0], np_dtype(src))
    assert pyints(run_cast(x, "int8")) == [44, -44, -1, 0, -1, 0, 127, -128]
    assert pyints(run_cast(x, "uint8")) == [44, 0, 255, 0, 255, 0, 127, 0]


# -------------------------------------------------------------------------------------------------
# float -> float
# -------------------------------------------------------------------------------------------------
NARROWING = [
    ("float64", "float32"),
    ("float64", "float16"),
    ("float64", "bfloat16"),
    ("float32", "float16"),
    ("float32", "bfloat16"),
]
# NVIDIA rounds toward zero only from fp32 (to fp16, bf16 and fp8e5); the others are refused.
RTZ_NARROWING = [(src, dst) for src, dst in NARROWING if src == "float32"]


@pytest.mark.parametrize("rounding", (None, "rtne", "rtz"))
@pytest.mark.parametrize("src, dst", NARROWING)
@hypothesis_settings(max_examples=4)
@given(data=st.data())
def test_narrowing_float_rounding(src, dst, rounding, data):
    if rounding == "rtz" and (src, dst) not in RTZ_NARROWING:
        if cpu_rules():
            pytest.skip("a rule of the CUDA target (the CPU rounds toward zero from any float)")
        with pytest.raises(naiad.CompilationError, match="not supported"):
            run_cast(np.ones(N, np_dtype(src)), dst, rounding)
        return
    x = data.draw(arrays(src, N, special=True), label="x")
    x[:15] = specials(src)
    z = run_cast(x, dst, rounding)
    assert_exact(z, float_to_float(x, src, dst, rounding or "rtne"))


@pytest.mark.parametrize("src, dst", RTZ_NARROWING)
def test_rtz_truncates_and_rtne_rounds(src, dst):
    ulp = {"float32": 2.0**-23, "float16": 2.0**-10, "bfloat16": 2.0**-7}[dst]  # at 1.0
    big = float(np.finfo(np_dtype(src)).max) if src == "float32" else 1e300
    x = np.array(
        [
            1 + 0.75 * ulp,
            -(1 + 0.75 * ulp),
            1 + 0.25 * ulp,
            -(1 + 0.25 * ulp),
            big,
            -big,
            np.inf,
            -np.inf,
        ],
        np.float64,
    ).astype(np_dtype(src))
    largest = float(round_float([big], dst, "rtz")[0])
    rtz = run_cast(x, dst, "rtz").astype(np.float64)
    rtne = run_cast(x, dst, "rtne").astype(np.float64)
    # rtz: toward zero, a finite overflow to the largest finite value, inf stays inf
    assert list(rtz) == [1, -1, 1, -1, largest, -largest, np.inf, -np.inf]
    # rtne: to nearest, a finite overflow to inf
    assert list(rtne) == [1 + ulp, -(1 + ulp), 1, -1, np.inf, -np.inf, np.inf, -np.inf]


@pytest.mark.parametrize(
    "src, dst",
    [
        ("float32", "float16"),
        ("float32", "bfloat16"),
        ("float64", "float32"),
        ("float64", "float16"),
    ],
)
def test_rtne_matches_numpy_and_ml_dtypes_on_normal_values(src, dst, gen):
    x = (gen.standard_normal(N) * np.exp2(gen.integers(-10, 10, N))).astype(np_dtype(src))
    via = x.astype(np.float32) if dst == "bfloat16" else x  # ml_dtypes' bf16 from fp32
    assert_exact(run_cast(x, dst), via.astype(np_dtype(dst)))


@pytest.mark.parametrize(
    "src, dst",
    [(a, b) for a in FLOAT_DTYPES for b in FLOAT_DTYPES if a != b and (a, b) not in NARROWING],
)
def test_widening_and_same_width_float_conversions(src, dst, gen):
    x = pad(np.concatenate([numpy_random(48, src, gen), specials(src)]), N)
    # fp16 <-> bf16 go through fp32, exactly: one rounding to nearest even.
    assert_exact(run_cast(x, dst), float_to_float(x, src, dst))


@pytest.mark.parametrize(
    "src, dst",
    [
        ("float32", "float64"),
        ("float16", "float32"),
        ("int32", "float32"),
        ("float32", "int32"),
        ("float16", "bfloat16"),
        ("bfloat16", "float16"),
    ],
)
def test_rounding_mode_only_for_narrowing_float_conversions(src, dst):
    x = np.ones(4, np_dtype(src))
    with kernel_error("fp_downcast_rounding should be set only for truncating fp conversions"):
        run_cast(x, dst, "rtz")


def test_unknown_rounding_mode_raises():
    with kernel_error("rtne.*rtz|rtz.*rtne"):
        run_cast(np.ones(4, np.float32), "float16", "rtn")


# -------------------------------------------------------------------------------------------------
# bool
# -------------------------------------------------------------------------------------------------
def test_bool_conversions(gen):
    f = np.array([0.5, -0.0, np.nan, -2.0, np.inf, 1e-45, 3.0, -1e-30], np.float32)
    assert list(run_cast(f, "int1")) == [True, False, True, True, True, True, True, True]
    b = pad(np.array([True, False]), 8)
    assert list(run_cast(b, "int8")) == [1, 0] * 4  # zero-extended: True is 1, not -1
    assert list(run_cast(b, "int64")) == [1, 0] * 4
    assert list(run_cast(b, "float32")) == [1.0, 0.0] * 4
    assert list(run_cast(b, "bfloat16").astype(np.float32)) == [1.0, 0.0] * 4
    i = np.array([0, 1, -1, 2, 256, -128, 3, 0], np.int16)
    assert list(run_cast(i, "int1")) == [False, True, True, True, True, True, True, False]


# -------------------------------------------------------------------------------------------------
# bitcast
# -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "src, dst",
    [
        ("float32", "int32"),
        ("float32", "uint32"),
        ("int32", "float32"),
        ("uint32", "float32"),
        ("float16", "int16"),
        ("int16", "float16"),
        ("bfloat16", "uint16"),
        ("uint16", "bfloat16"),
        ("float16", "bfloat16"),
        ("float64", "int64"),
        ("uint64", "float64"),
        ("int8", "uint8"),
        ("int64", "uint64"),
        ("uint8", "float8e4nv"),
        ("float8e5", "int8"),
    ],
)
def test_bitcast_keeps_the_bits(src, dst, gen):
    if src.startswith("float8"):
        x = gen.integers(0, 256, N).astype(np.uint8).view(np_dtype(src))
    else:
        x = numpy_random(N, src, gen)
    z = run_cast(x, dst, bitcast=True)
    assert (z.view(np.uint8) == x.view(np.uint8)).all()


@pytest.mark.parametrize(
    "src, dst, message",
    [
        ("float32", "int16", "Cannot bitcast data-type of size 32 to data-type of size 16"),
        ("int8", "float16", "Cannot bitcast data-type of size 8 to data-type of size 16"),
        ("float64", "float32", "size 64 to data-type of size 32"),
    ],
)
def test_bitcast_of_other_size_raises(src, dst, message):
    with kernel_error(message):
        run_cast(np.ones(4, np_dtype(src)), dst, bitcast=True)


# -------------------------------------------------------------------------------------------------
# fp8
# -------------------------------------------------------------------------------------------------
FP8 = {"float8e4nv": 448.0, "float8e5": 57344.0}  # largest finite values


def _all_fp8(name: str) -> np.ndarray:
    """Every finite fp8 bit pattern of `name`, except NaNs and infinities."""
    values = np.arange(256, dtype=np.uint8).view(np_dtype(name))
    return values[np.isfinite(values.astype(np.float32))]


@pytest.mark.parametrize("fp8", FP8)
@pytest.mark.parametrize("wide", ("float16", "float32", "bfloat16"))
def test_fp8_round_trip(fp8, wide):
    x = pad(_all_fp8(fp8), 256)
    up = run_cast(x, wide, spelling="to")
    assert_exact(up, x.astype(np.float64).astype(np_dtype(wide)))  # exact upcast
    back = run_cast(up, fp8, spelling="tl.cast")
    assert (back.view(np.uint8) == x.view(np.uint8)).all()


@pytest.mark.parametrize("fp8", FP8)
@pytest.mark.parametrize("src", ("float16", "float32"))
def test_fp8_rounding_matches_ml_dtypes_in_range(fp8, src, gen):
    largest = FP8[fp8]
    x = gen.uniform(-largest, largest, 256) * np.exp2(-gen.integers(0, 16, 256))
    x = x.astype(np_dtype(src))
    assert_exact(run_cast(x, fp8), x.astype(np_dtype(fp8)))


@pytest.mark.parametrize("fp8", FP8)
def test_fp8_saturates(fp8):
    largest = FP8[fp8]
    x = np.array([1e6, -1e6, np.inf, -np.inf, largest * 1.5, 1.0, np.nan, 2.0], np.float32)
    z = run_cast(x, fp8).astype(np.float32)
    assert list(z[:6]) == [largest, -largest, largest, -largest, largest, 1.0]
    assert np.isnan(z[6])


@naiad.jit
def _e4b15_kernel(
    bytes_ptr, half_ptr, single_ptr, up_ptr, up_bf16_ptr, down_ptr, down_f32_ptr, N: tl.constexpr
):
    offs = tl.arange(0, N)
    fp8 = tl.load(bytes_ptr + offs).to(tl.float8e4b15, bitcast=True)
    tl.store(up_ptr + offs, fp8.to(tl.float32))
    tl.store(up_bf16_ptr + offs, fp8.to(tl.bfloat16))
    down = tl.load(half_ptr + offs).to(tl.float8e4b15)
    tl.store(down_ptr + offs, down.to(tl.uint8, bitcast=True))
    down = tl.load(single_ptr + offs).to(tl.float8e4b15)
    tl.store(down_f32_ptr + offs, down.to(tl.uint8, bitcast=True))


def _e4b15_value(byte: int) -> float:
    """Triton's fp8e4b15: 1 sign, 4 exponent (bias 15), 3 mantissa bits; every pattern finite."""
    exponent, mantissa = (byte >> 3) & 15, byte & 7
    value = math.ldexp(8 + mantissa, exponent - 18) if exponent else math.ldexp(mantissa, -17)
    return -value if byte & 0x80 else value


def _e4b15_from_half(bits: int) -> int:
    """Triton's fp16 -> fp8e4b15 on the bits: |x| clamped to 1.75 (NaN and infinities too),
    rounded half away from zero, the sign kept."""
    return ((min(bits & 0x7FFF, 0x3F00) + 0x40) >> 7) | ((bits >> 8) & 0x80)


def test_fp8e4b15_converts_as_triton(gen):
    """Every byte converts up to f32 and bf16 exactly; fp16 values (integers that clamp, random
    magnitudes down to fp8e4b15's subnormals, specials) convert down by Triton's rule, and f32
    values by rounding toward zero to fp16 first."""
    every = np.arange(256, dtype=np.uint8)
    halves = np.concatenate(
        [
            every.astype(np.float64).astype(np.float16),  # 0 .. 255: clamps
            gen.uniform(-2, 2, 512).astype(np.float16)
            * np.exp2(-gen.integers(0, 18, 512)).astype(np.float16),
            np.array(
                [np.nan, np.inf, -np.inf, -0.0, 1.75, 1.8125, 2.0**-17, 3 * 2.0**-18], np.float16
            ),
        ]
    )[:1024]
    halves = np.resize(halves, 1024)
    singles = (gen.uniform(-2, 2, 1024) * np.exp2(-gen.integers(0, 18, 1024))).astype(np.float32)
    up, up_bf16 = np.zeros(1024, np.float32), np.zeros(1024, np_dtype("bfloat16"))
    down, down_f32 = np.zeros(1024, np.uint8), np.zeros(1024, np.uint8)
    _e4b15_kernel[(1,)](
        np.resize(every, 1024), halves, singles, up, up_bf16, down, down_f32, N=1024
    )
    values = [_e4b15_value(b) for b in range(256)]
    assert up[:256].tolist() == values
    assert up_bf16[:256].astype(np.float64).tolist() == values
    assert down.tolist() == [_e4b15_from_half(int(h)) for h in halves.view(np.uint16)]
    toward_zero = round_float(singles, "float16", "rtz").view(np.uint16)
    assert down_f32.tolist() == [_e4b15_from_half(int(h)) for h in toward_zero]


# -------------------------------------------------------------------------------------------------
# pointers
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _pointer_cast_kernel(x_ptr, addr_ptr, y_ptr, bits_ptr, flag_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    addr = (x_ptr + offs).to(tl.int64)
    tl.static_assert(addr.dtype == tl.int64)
    tl.store(addr_ptr + offs, addr)
    back = addr.to(tl.pointer_type(tl.float32))  # int64 -> pointer
    tl.static_assert(back.dtype == tl.pointer_type(tl.float32))
    tl.store(y_ptr + offs, tl.load(back) * 2)
    as_int = tl.cast(x_ptr, tl.pointer_type(tl.int32))  # pointer -> pointer: reinterpret
    tl.store(bits_ptr + offs, tl.load(as_int + offs))
    tl.store(flag_ptr + offs, tl.zeros([N], tl.int1) | x_ptr.to(tl.int1))


def test_pointer_casts(gen):
    x = numpy_random(16, "float32", gen)
    addr, y = poisoned(16, "int64"), poisoned(16, "float32")
    bits, flag = poisoned(16, "int32"), poisoned(16, "int1")
    _pointer_cast_kernel[(1,)](x, addr, y, bits, flag, N=16)
    # On the GPU `x` is a device copy: its address is not the host array's.
    base = pyints(addr)[0] if running_on() == "cuda" else x.ctypes.data
    assert pyints(addr) == [base + 4 * i for i in range(16)]
    assert_exact(y, x * 2)
    assert_exact(bits, x.view(np.int32))
    assert flag.all()


@naiad.jit
def _pointer_to_int32_kernel(x_ptr):
    x_ptr.to(tl.int32)


def test_pointer_to_narrow_int_raises():
    with pytest.raises(naiad.CompilationError):
        _pointer_to_int32_kernel[(1,)](np.ones(4, np.float32))


# -------------------------------------------------------------------------------------------------
# the cast of the kernel-argument dtypes of Triton's test_cast: the full matrix
# -------------------------------------------------------------------------------------------------
_ALL = ("int1", *INTEGRAL_DTYPES, *FLOAT_DTYPES)


@pytest.mark.full
@pytest.mark.parametrize("src, dst", [(a, b) for a in _ALL for b in _ALL if a != b])
@hypothesis_settings(max_examples=10)
@given(data=st.data())
def test_cast_full(src, dst, data):
    x = data.draw(arrays(src, N, special=is_float(src)), label="x")
    if is_float(src) and not is_float(dst):
        expected = float_to_int(x, src, dst)
    elif is_float(src):
        expected = float_to_float(x, src, dst)
    elif is_float(dst):
        expected = round_float(pyints(x), dst)
    else:
        expected = x != 0 if dst == "int1" else wrap(pyints(x), dst)
    assert_exact(run_cast(x, dst), expected)
