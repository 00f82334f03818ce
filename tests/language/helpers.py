"""Shared helpers of the language's arithmetic tests: dtype tables, random inputs, references.

The references are written here, independently of Naiad, from Triton's rules:

- `promoted(a, b, ...)` is Triton's `computation_type_impl` (semantic.py): the dtype `a op b`
  computes in, with Python scalars taking part only when their kind is above the tensor's.
- Integer results are computed on Python integers and wrapped to the result's width; `//` and `%`
  are C's (truncation toward zero, remainder with the dividend's sign).
- Float results are computed exactly (float64 holds every product and quotient well enough: for
  + - * / and sqrt, rounding a float64 result again to fp32/fp16/bf16 is innocuous, since
  53 >= 2 * 24 + 2) and rounded once with `round_float`, our own round-to-nearest-even (or
  toward zero) onto each format's grid, so no NumPy/ml_dtypes cast stands in the reference path.

Inputs are random and never zero: a zero hides a lost sign or a wrong operand order, and zero
divisors have tests of their own. Outputs are poisoned before a launch.
"""

from __future__ import annotations

import contextlib
import fractions
import math
import os

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import naiad
import naiad.language as tl
from naiad.errors import CompilationError
from naiad.testing import check

INT_DTYPES = ("int8", "int16", "int32", "int64")
UINT_DTYPES = ("uint8", "uint16", "uint32", "uint64")
INTEGRAL_DTYPES = INT_DTYPES + UINT_DTYPES
FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")
DTYPES = INTEGRAL_DTYPES + FLOAT_DTYPES  # Triton's dtypes_with_bfloat16
DTYPES_WITH_BOOL = ("int1", *DTYPES)

_NP = {
    "int1": np.dtype(bool),
    **{name: np.dtype(name) for name in INTEGRAL_DTYPES},
    "float16": np.dtype(np.float16),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "float32": np.dtype(np.float32),
    "float64": np.dtype(np.float64),
    "float8e4nv": np.dtype(ml_dtypes.float8_e4m3fn),
    "float8e5": np.dtype(ml_dtypes.float8_e5m2),
}
_TL_NAMES = {"int1": "int1", "bool": "int1"}

# (significand bits with the implicit one, smallest normal exponent, largest exponent)
_FORMATS = {
    "float16": (11, -14, 15),
    "bfloat16": (8, -126, 127),
    "float32": (24, -126, 127),
    "float64": (53, -1022, 1023),
    "float8e5": (3, -14, 15),
}


def np_dtype(name: str) -> np.dtype:
    """The NumPy dtype of host arrays holding values of the Triton dtype `name`."""
    return _NP[name]


def tl_dtype(name: str):
    """`tl.<name>` for a NumPy-style name ("float16", "bfloat16", "int1", "uint32", ...)."""
    return getattr(tl, _TL_NAMES.get(name, name))


def bitwidth(name: str) -> int:
    return 1 if name == "int1" else np_dtype(name).itemsize * 8


def is_float(name: str) -> bool:
    return name.startswith(("float", "bfloat"))


def is_signed(name: str) -> bool:
    return name in INT_DTYPES


def is_unsigned(name: str) -> bool:
    return name in UINT_DTYPES or name == "int1"


def int_range(name: str) -> tuple[int, int]:
    bits = bitwidth(name)
    if is_signed(name):
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


# -------------------------------------------------------------------------------------------------
# random inputs
# -------------------------------------------------------------------------------------------------
def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def hypothesis_settings(max_examples: int) -> settings:
    """Derandomized (a fixed seed per test), without an example database: runs repeat exactly.
    No shrinking: a failing example is reported as drawn (shrinking would compile a kernel per
    step on the compiled back ends)."""
    return settings(
        derandomize=True,
        phases=(Phase.explicit, Phase.reuse, Phase.generate),
        database=None,
        deadline=None,
        max_examples=max_examples,
        print_blob=False,
        # `backend` (conftest.py) is function-scoped, and the same for every example.
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.function_scoped_fixture,
        ],
    )


def numpy_random(shape, dtype: str, gen: np.random.Generator, low=None, high=None) -> np.ndarray:
    """Random values of the Triton dtype `dtype`, never zero (as Triton's `numpy_random`).

    Integers span the whole range of the dtype unless `low`/`high` (inclusive) narrow it, so they
    are safe divisors; floats are normal(0, 1) scaled by 2**k for k in [-4, 4) unless `low`/`high`
    give a uniform range; bfloat16 values are float32 values rounded to bfloat16.
    """
    if dtype == "int1":
        return gen.random(shape) < 0.5
    if not is_float(dtype):
        lo, hi = int_range(dtype)
        lo = lo if low is None else max(low, lo)
        hi = hi if high is None else min(high, hi)
        wide = np.uint64 if dtype == "uint64" else np.int64
        values = gen.integers(lo, hi, size=shape, endpoint=True, dtype=wide)
        values = np.where(values == 0, 1 if hi >= 1 else -1, values)
        return values.astype(np_dtype(dtype))
    if low is None and high is None:
        values = gen.standard_normal(shape) * np.exp2(gen.integers(-4, 4, shape))
    else:
        values = gen.uniform(low, high, shape)
    values = np.where(values == 0, 0.5, values)
    host = np.float32 if dtype == "bfloat16" else np_dtype(dtype)  # bf16: fp32 values rounded
    out = values.astype(host).astype(np_dtype(dtype))
    return np.where(out.astype(np.float64) == 0, np.array(1.0, out.dtype), out)


def elements(dtype: str, low=None, high=None, special: bool = False) -> st.SearchStrategy:
    """A hypothesis strategy of nonzero scalars of `dtype` (infinities too if `special`; NaN
    inputs are in `specials`)."""
    if dtype == "int1":
        return st.booleans()
    if not is_float(dtype):
        lo, hi = int_range(dtype)
        lo = lo if low is None else max(low, lo)
        hi = hi if high is None else min(high, hi)
        nonzero = 1 if hi >= 1 else -1
        return st.integers(lo, hi).map(lambda v: v or nonzero)
    width = {"float16": 16, "bfloat16": 32, "float32": 32, "float64": 64}[dtype]
    values = st.floats(
        min_value=low,
        max_value=high,
        width=width,
        allow_nan=False,
        allow_infinity=special and low is None and high is None,
        allow_subnormal=True,
    )
    if dtype == "bfloat16":  # the float32 values that are bfloat16 values: low 16 bits clear
        values = values.map(
            lambda v: float(
                np.array(v, np.float32)
                .view(np.uint32)
                .__and__(np.uint32(0xFFFF0000))
                .view(np.float32)
            )
        )
    # A map, not a filter: hypothesis rewrites `!= 0` filters of fp16 floats into unsatisfiable
    # bounds.
    return values.map(lambda v: v or (1.0 if high is None or high >= 1 else high))


def arrays(dtype: str, n: int, **kwargs) -> st.SearchStrategy:
    """A hypothesis strategy of 1-D arrays of `n` nonzero values of `dtype` (see `elements`)."""
    host = np.float32 if dtype == "bfloat16" else np_dtype(dtype)
    # fill=nothing(): every element drawn (a sparse fill of fp16 with infinities is unsatisfiable)
    strategy = hnp.arrays(host, n, elements=elements(dtype, **kwargs), fill=st.nothing())
    return strategy.map(lambda a: a.astype(np_dtype(dtype)))


def poisoned(shape, dtype: str) -> np.ndarray:
    """An output array whose every element is poison: NaN for floats, bytes 0xAB otherwise."""
    out = np.empty(shape, np_dtype(dtype))
    if is_float(dtype):
        out[...] = np.nan
    else:
        out.view(np.uint8)[...] = 0xAB
    return out


def specials(dtype: str) -> np.ndarray:
    """The non-random values worth a look: range ends, +-1, +-inf, NaN, tiny and huge values
    (never zero: an unsigned type's lowest value here is 1)."""
    if not is_float(dtype):
        lo, hi = int_range(dtype)
        values = [lo or 1, lo + 1, hi, hi - 1, 1, 2, 3, 7]
        if is_signed(dtype):
            values += [-1, -2, -3, -7]
        return np.array(values, dtype=object).astype(np_dtype(dtype))
    p, emin, emax = _FORMATS[dtype]
    largest = (2 - 2.0 ** (1 - p)) * 2.0**emax
    values = [
        1.0,
        -1.0,
        1.5,
        -2.5,
        np.inf,
        -np.inf,
        np.nan,
        largest,
        -largest,
        2.0**emin,
        -(2.0**emin),
        2.0 ** (emin - p + 1),
        3.0 * 2.0 ** (emin - p + 1),
        1.0 / 3.0,
        100.0,
    ]
    return np.array(values, np.float64).astype(np_dtype(dtype))


# -------------------------------------------------------------------------------------------------
# exact references
# -------------------------------------------------------------------------------------------------
def pyints(a) -> list[int]:
    """The values of an integer or bool array as Python integers."""
    return [int(v) for v in np.asarray(a).reshape(-1)]


def wrap(values, dtype: str) -> np.ndarray:
    """Python integers reduced modulo 2**bits into `dtype` (two's complement for signed types)."""
    bits = bitwidth(dtype)
    out = []
    for v in values:
        v %= 1 << bits
        if is_signed(dtype) and v >= 1 << (bits - 1):
            v -= 1 << bits
        out.append(v)
    if dtype == "int1":
        return np.array(out, dtype=bool)
    return np.array(out, dtype=object).astype(np_dtype(dtype))


def c_div(a: int, b: int) -> int:
    """C's integer division: the quotient truncated toward zero."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def c_rem(a: int, b: int) -> int:
    """C's remainder: a - b * c_div(a, b), with the sign of the dividend."""
    return a - b * c_div(a, b)


def gpu_float_rem(x, y, dtype: str) -> np.ndarray:
    """Float `%` as compiled for the GPU, by Naiad and by Triton alike: both emit LLVM's `frem`,
    which the NVPTX back end expands to fma.rn(-trunc(div.rn(x, y)), y, x), then x where y is
    infinite. This is not C's fmod: the quotient rounds (and may overflow to inf), so the result
    can be far off, and an exact cancellation gives +0.0 where fmod keeps the dividend's sign."""
    out = []
    for a, b in zip(np.asarray(x, np.float64).ravel(), np.asarray(y, np.float64).ravel()):
        if np.isinf(b):
            out.append(a)
            continue
        with np.errstate(all="ignore"):
            q = np.divide(a, b)  # right where it is not finite or zero (IEEE's specials)
        if np.isfinite(a) and np.isfinite(b) and b != 0 and a != 0:  # (0 / b keeps its sign)
            q = _rounded_once(fractions.Fraction(a) / fractions.Fraction(b), dtype)
        t = np.trunc(q)
        fused = (
            fractions.Fraction(a) - fractions.Fraction(t) * fractions.Fraction(b)
            if np.isfinite(t)
            else 0
        )
        if fused == 0:  # specials and exact cancellations: float64 computes these exactly
            with np.errstate(all="ignore"):
                out.append(np.float64(a) - t * np.float64(b))
        else:
            out.append(_rounded_once(fused, dtype))
    return round_float(np.array(out, np.float64), dtype).reshape(np.shape(x))


def _rounded_once(exact: fractions.Fraction, dtype: str) -> np.float64:
    """`exact` rounded to nearest on `dtype`'s grid, overflowing to a signed infinity."""
    try:
        return np.float64(round_float([exact], dtype)[0])
    except OverflowError:
        return np.float64(math.inf if exact > 0 else -math.inf)


def round_float(values, dtype: str, rounding: str = "rtne") -> np.ndarray:
    """Exact values (float64, Python ints or Fractions) rounded once onto `dtype`'s grid.

    rtne: to nearest, ties to even, overflow to inf; rtz: toward zero, overflow to the largest
    finite value. Subnormals are kept. NaN stays NaN, infinities and zeros keep their sign.
    """
    shape = np.shape(values)
    flat = np.asarray(values, dtype=object).reshape(-1)
    exact64 = all(
        isinstance(v, (float, np.floating))
        or (isinstance(v, (int, np.integer)) and abs(int(v)) < 2**53)
        for v in flat
    )
    if exact64:
        out = _round_float64(np.array([float(v) for v in flat], np.float64), dtype, rounding)
    else:
        out = np.array(
            [_round_exact(fractions.Fraction(v), dtype, rounding) for v in flat], np.float64
        )
    # Every value is now exact in float64 and on the grid of `dtype`: the cast does not round.
    return out.astype(np_dtype(dtype)).reshape(shape)


def _largest(dtype: str) -> float:
    p, _, emax = _FORMATS[dtype]
    return (2 - 2.0 ** (1 - p)) * 2.0**emax


def _round_float64(x: np.ndarray, dtype: str, rounding: str) -> np.ndarray:
    if dtype == "float64":  # already on the grid (and 1 / the subnormal spacing overflows)
        return x.copy()
    p, emin, _ = _FORMATS[dtype]
    magnitude = np.abs(x)
    regular = np.isfinite(x) & (x != 0)
    safe = np.where(regular, magnitude, 1.0)
    _, e2 = np.frexp(safe)  # safe = m * 2**e2 with m in [0.5, 1)
    e = np.maximum(e2 - 1, emin)
    scale = np.ldexp(1.0, (p - 1 - e).astype(np.int64))  # 1 / (the spacing of the grid at x)
    scaled = safe * scale  # exact: a power-of-two scaling
    whole = np.rint(scaled) if rounding == "rtne" else np.trunc(scaled)  # rint: ties to even
    with np.errstate(over="ignore"):
        result = whole / scale
    over = result > _largest(dtype)
    result = np.where(over, _largest(dtype) if rounding == "rtz" else np.inf, result)
    result = np.where(regular, np.copysign(result, x), x)
    return result


def _round_exact(exact: fractions.Fraction, dtype: str, rounding: str) -> float:
    if exact == 0:
        return 0.0
    p, emin, _ = _FORMATS[dtype]
    magnitude = abs(exact)
    e = max(_floor_log2(magnitude), emin)
    quantum = fractions.Fraction(2) ** (e - p + 1)
    whole, rest = divmod(magnitude / quantum, 1)
    half = fractions.Fraction(1, 2)
    if rounding == "rtne" and (rest > half or (rest == half and whole % 2 == 1)):
        whole += 1
    result = float(whole * quantum)
    if result > _largest(dtype):
        result = _largest(dtype) if rounding == "rtz" else math.inf
    return -result if exact < 0 else result


def _floor_log2(x: fractions.Fraction) -> int:
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if fractions.Fraction(2) ** e > x:
        e -= 1
    elif fractions.Fraction(2) ** (e + 1) <= x:
        e += 1
    return e


def exact_values(a) -> list:
    """The exact values of an array: Python ints for integers, Fractions (or inf/NaN) for floats."""
    a = np.asarray(a)
    if a.dtype == bool or a.dtype.kind in "iu":
        return pyints(a)
    out = []
    for v in a.astype(np.float64).reshape(-1):
        out.append(float(v) if not math.isfinite(v) else fractions.Fraction(float(v)))
    return out


def convert(a, src: str, dst: str) -> np.ndarray:
    """`a` (of dtype `src`) converted to `dst` as Triton's implicit casts convert it, for the
    conversions binary operators make: int -> int wraps, int -> float rounds to nearest even,
    float -> wider float is exact."""
    if src == dst:
        return np.asarray(a)
    if not is_float(dst):
        assert not is_float(src), (src, dst)
        if dst == "int1":
            return np.asarray(a) != 0
        return wrap(pyints(a), dst)
    if is_float(src):
        assert _FORMATS[src][0] <= _FORMATS[dst][0], (src, dst)  # bf16 -> fp16 rounds, once
        return round_float(np.asarray(a).astype(np.float64), dst)
    return round_float(pyints(a), dst)


# -------------------------------------------------------------------------------------------------
# Triton's typing rules
# -------------------------------------------------------------------------------------------------
_KIND = {"int1": 0, **{n: 1 for n in INTEGRAL_DTYPES}, **{n: 2 for n in FLOAT_DTYPES}}


def integer_promote(a: str, b: str) -> str:
    """C's usual arithmetic conversions (Triton's `integer_promote_impl`; int1 is unsigned)."""
    if is_signed(a) == is_signed(b):
        return a if bitwidth(a) > bitwidth(b) else b
    if is_unsigned(a):
        return a if bitwidth(a) >= bitwidth(b) else b
    return b if bitwidth(b) >= bitwidth(a) else a


def literal_dtype(value) -> str:
    """The dtype Triton gives a Python number in a kernel (`to_tensor_type`)."""
    if isinstance(value, bool):
        return "int1"
    if isinstance(value, int):
        for name, lo, hi in (
            ("int32", -(2**31), 2**31),
            ("uint32", 2**31, 2**32),
            ("int64", -(2**63), 2**63),
            ("uint64", 2**63, 2**64),
        ):
            if lo <= value < hi:
                return name
        raise ValueError(value)
    magnitude = abs(value)
    if (
        value == 0
        or math.isinf(value)
        or math.isnan(value)
        or 2.0**-126 <= magnitude <= (2 - 2.0**-23) * 2.0**127
    ):
        return "float32"
    return "float64"


class DifferentSignedness(TypeError):
    """What Triton raises for `/`, `//` or `%` between a signed and an unsigned integer."""


def promoted(
    a: str, b: str, div_or_mod: bool = False, a_scalar: bool = False, b_scalar: bool = False
) -> str:
    """The dtype `a op b` computes in: Triton's `computation_type_impl` (semantic.py)."""
    if a_scalar != b_scalar:
        scalar, tensor = (a, b) if a_scalar else (b, a)
        if _KIND[scalar] <= _KIND[tensor]:
            if div_or_mod and tensor in ("float16", "bfloat16"):
                return "float32"
            return tensor
    if "float64" in (a, b):
        return "float64"
    if "float32" in (a, b):
        return "float32"
    if "float16" in (a, b):
        return "float32" if div_or_mod else "float16"
    if a == b == "bfloat16":
        return "float32" if div_or_mod else "bfloat16"
    if "bfloat16" in (a, b):
        return "float32"
    if div_or_mod and is_signed(a) != is_signed(b):
        raise DifferentSignedness(f"{a} and {b}")
    return integer_promote(a, b)


def result_dtype(op: str, a: str, b: str) -> str:
    """The dtype of `a op b` for tensors, or raise what Triton raises (TypeError subclasses)."""
    div_or_mod = op in ("/", "//", "%")
    ty = promoted(a, b, div_or_mod)
    if op == "/" and not is_float(ty):
        return "float32"
    if op == "//" and is_float(ty):
        raise TypeError(f"`//` of {ty}")
    if op in ("<", "<=", ">", ">=", "==", "!="):
        return "int1"
    return ty


# -------------------------------------------------------------------------------------------------
# checking
# -------------------------------------------------------------------------------------------------
# The back end a test runs on, as conftest.py's `backend` fixture names it, and as the tolerance
# table does: a bound that is exact in the interpreter may be k ulp on the GPU (fp32 `/`).
_TABLE_NAME = {"interpreter": "interpreter", "cpu": "cpu", "cuda": "gpu"}
_running_on = {"backend": "interpreter"}


def set_backend(name: str) -> None:
    """Called by the `backend` fixture before each test, so that the checks use its bounds."""
    _running_on["backend"] = name


def running_on() -> str:
    """The fixture's name of the back end this test runs on: "interpreter", "cpu" or "cuda"."""
    return _running_on["backend"]


def table_backend() -> str:
    """The tolerance table's name of the back end this test runs on ("gpu" for "cuda")."""
    return _TABLE_NAME[running_on()]


def assert_exact(actual, expected, op: str = "cast"):
    """Bit-identical in `expected`'s dtype (any NaN equals any NaN), or within the bound that
    naiad.testing's table gives `op` on the back end this test runs on."""
    expected = np.asarray(expected)
    actual = np.asarray(actual)
    if expected.dtype == bool:
        assert actual.shape == expected.shape, (actual.shape, expected.shape)
        # Compare stored bytes, so that an unwritten 0xAB byte never reads as True.
        bad = actual.view(np.uint8) != expected.astype(np.uint8)
        assert not bad.any(), (
            f"{int(bad.sum())} of {bad.size} differ; first at "
            f"{np.argwhere(bad)[0]}: {actual[bad][:4]} vs {expected[bad][:4]}"
        )
        return
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    check(op, actual, expected, table_backend(), expected.dtype)


@contextlib.contextmanager
def kernel_error(match: str, kind=CompilationError):
    """Expect a kernel error of `kind` matching `match`, located at a kernel line of these tests
    (never inside Naiad)."""
    with pytest.raises(kind, match=match) as info:
        yield info
    error = info.value
    if isinstance(error, CompilationError) and error.location is not None:
        here = os.path.dirname(os.path.abspath(__file__))
        assert os.path.dirname(os.path.abspath(error.location.filename)) == here, str(error)


# -------------------------------------------------------------------------------------------------
# kernels shared by the test files
# -------------------------------------------------------------------------------------------------
@naiad.jit
def apply_binary(x, y, OP: tl.constexpr):
    """`x OP y` for an operator spelled as in Python source."""
    if OP == "+":
        z = x + y
    elif OP == "-":
        z = x - y
    elif OP == "*":
        z = x * y
    elif OP == "/":
        z = x / y
    elif OP == "//":
        z = x // y
    elif OP == "%":
        z = x % y
    elif OP == "<":
        z = x < y
    elif OP == "<=":
        z = x <= y
    elif OP == ">":
        z = x > y
    elif OP == ">=":
        z = x >= y
    elif OP == "==":
        z = x == y
    elif OP == "!=":
        z = x != y
    elif OP == "&":
        z = x & y
    elif OP == "|":
        z = x | y
    elif OP == "^":
        z = x ^ y
    elif OP == "<<":
        z = x << y
    elif OP == ">>":
        z = x >> y
    else:
        tl.static_assert(False, "unknown operator")
    return z


@naiad.jit
def binary_kernel(x_ptr, y_ptr, z_ptr, N: tl.constexpr, OP: tl.constexpr, RESULT: tl.constexpr):
    """z = x OP y over N elements, whose dtype must be RESULT."""
    offs = tl.arange(0, N)
    z = apply_binary(tl.load(x_ptr + offs), tl.load(y_ptr + offs), OP)
    tl.static_assert(z.dtype == RESULT, "unexpected result dtype")
    tl.store(z_ptr + offs, z)


def run_binary(op: str, x: np.ndarray, y: np.ndarray, result: str) -> np.ndarray:
    """Launch `binary_kernel` on 1-D arrays and return z, an array of the `result` dtype."""
    z = poisoned(x.shape, result)
    binary_kernel[(1,)](x, y, z, N=x.shape[0], OP=op, RESULT=tl_dtype(result))
    return z
