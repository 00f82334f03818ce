"""Casts lowered to LLVM IR, bit-exact with the reference evaluator, NaN encodings included:
float <-> float in both rounding modes, int -> float, float -> int (saturating), bitcasts and
scalar constants.

Narrow sources run every bit pattern; f32 / f64 sources include the midpoints between
neighbouring values of every narrow format (and their neighbours), NaNs with payloads and signs,
and the saturation and overflow thresholds. Integer sources include values one above, at and
below the halfway points of each format's precision, so a double rounding would show.
"""

import numpy as np
import pytest
from scalar_jit import ScalarKernels, make_op, run_all
from scalar_values import NARROW, int_values, values

from naiad.dialects.arith.attributes import RoundingMode
from naiad.dialects.tt.attributes import RoundingMode as TTRoundingMode
from naiad.ir import FloatAttr, FloatType, IntegerAttr, IntegerType
from naiad.runtime.evaluator.values import constant

KINDS = ("f32", "f64", *NARROW)
WIDTHS = (1, 8, 16, 32, 64)
N = 4096


def _float_to_float_cases(src: str, rng, n=N):
    s = FloatType(src)
    cases = []
    for dst in KINDS:
        if dst == src:
            continue
        d = FloatType(dst)
        for rounding in ("rtne", "rtz"):
            attrs = {"rounding": TTRoundingMode.get(rounding)}
            cases.append((make_op("tt.fp_to_fp", [s], [d], attrs), [values(s, n, rng)]))
    if src in ("f32", "f64"):  # arith.truncf spells the mode its own way
        for mode in ("to_nearest_even", "toward_zero"):
            attrs = {"roundingmode": RoundingMode.get(mode)}
            op = make_op("arith.truncf", [s], [FloatType("f16")], attrs)
            cases.append((op, [values(s, n, rng)]))
    return cases


@pytest.mark.parametrize("src", KINDS)
def test_float_to_float_conversions_match_the_reference(src):
    run_all(_float_to_float_cases(src, np.random.default_rng(len(src))), nan_bits=True)


def _halfway_ints(width: int, rng, n: int) -> np.ndarray:
    """Integers at, one above and one below the rounding midpoints of 3- to 24-bit precision."""
    if width < 8:
        return int_values(width, n, rng)
    precision = rng.integers(3, 25, n)
    top = rng.integers(0, 2**62, n, dtype=np.uint64) >> np.uint64(64 - width)
    shift = np.maximum(width - 1 - precision, 1).astype(np.uint64)
    kept = (top >> shift) << shift
    half = np.uint64(1) << (shift - np.uint64(1))
    offset = rng.integers(-1, 2, n).astype(np.int64).view(np.uint64)
    out = (kept + half + offset).astype(f"uint{width}").view(f"int{width}")
    return np.where(rng.random(n) < 0.5, out, -out).astype(f"int{width}")


def _int_to_float_cases(width: int, rng):
    s = IntegerType(width)
    cases = []
    for dst in KINDS:
        for name in ("arith.sitofp", "arith.uitofp"):
            inputs = np.concatenate([int_values(width, N // 2, rng), _halfway_ints(width, rng, N)])
            cases.append((make_op(name, [s], [FloatType(dst)]), [inputs]))
    return cases


@pytest.mark.parametrize("width", WIDTHS)
def test_int_to_float_conversions_match_the_reference(width):
    run_all(_int_to_float_cases(width, np.random.default_rng(width)), nan_bits=True)


def _float_to_int_cases(src: str, rng):
    s = FloatType(src)
    cases = []
    for width in WIDTHS:
        for name in ("arith.fptosi", "arith.fptoui"):
            op = make_op(name, [s], [IntegerType(width)])
            cases.append((op, [values(s, N, rng)]))
    return cases


@pytest.mark.parametrize("src", KINDS)
def test_float_to_int_conversions_saturate_as_the_reference(src):
    run_all(_float_to_int_cases(src, np.random.default_rng(len(src) + 50)))


def test_bitcasts_keep_the_bits():
    rng = np.random.default_rng(5)
    cases = []
    for kind in KINDS:
        f = FloatType(kind)
        i = IntegerType(f.width)
        cases.append((make_op("arith.bitcast", [f], [i]), [values(f, N, rng)]))
        cases.append((make_op("tt.bitcast", [i], [f]), [int_values(f.width, N, rng)]))
    run_all(cases, nan_bits=True)


def test_scalar_constants_are_the_reference_values():
    kernels = ScalarKernels()
    cases = []
    for kind in KINDS:
        for value in (0.0, -0.0, 1.0, -2.5, 0.1, float("inf"), float("nan"), 1e-3, 448.0):
            if kind.startswith("f8") and (value != value or abs(value) in (float("inf"),)):
                continue  # not every fp8 format has inf or NaN attributes
            attr = FloatAttr(value, FloatType(kind))
            cases.append((make_op("arith.constant", [], [attr.type], {"value": attr}), attr))
    for width in WIDTHS:
        for value in (0, 1, -1, 77, -(2 ** (width - 1))):
            attr = IntegerAttr(value, IntegerType(width))
            cases.append((make_op("arith.constant", [], [attr.type], {"value": attr}), attr))
    names = [kernels.add(op) for op, _ in cases]
    kernels.compile()
    for (_, attr), name in zip(cases, names):
        got = kernels.run(name, [], count=3)
        want = np.broadcast_to(constant(attr, attr.type), (3,)).astype(got.dtype)
        assert got.tobytes() == want.tobytes(), (attr, got, want)


@pytest.mark.full
@pytest.mark.parametrize("src", KINDS)
def test_float_to_float_conversions_on_many_inputs(src):
    rng = np.random.default_rng(1000 + len(src))
    cases = _float_to_float_cases(src, rng, n=1 << 17) + _float_to_int_cases(src, rng)
    run_all(cases, nan_bits=True, vectorize=True)


@pytest.mark.full
@pytest.mark.parametrize("width", WIDTHS)
def test_int_to_float_conversions_vectorized(width):
    run_all(_int_to_float_cases(width, np.random.default_rng(2000 + width)), vectorize=True)
