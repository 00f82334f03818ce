"""`tt.extern_elementwise` lowered to LLVM IR: every libdevice symbol the CPU back end implements,
on the signature the language declares for it, against the interpreter's libdevice.

Exact functions (bit operations, conversions in every rounding mode, rn arithmetic with the
GPU's flush of fp32 subnormals, rounding to integers, classification) must match bit for bit;
the C math functions are the CPU math library's, within the tolerance table's CPU bound for
transcendental functions (4 ulp). The special functions (Bessel, gamma, the inverse error
functions, ...) are checked against mpmath by test_libdevice_special.py.
"""

import numpy as np
import pytest
from scalar_jit import ScalarKernels, assert_bits_equal, make_op, reference
from scalar_values import moderate_values, values

from naiad.backends.cpu import mathlib
from naiad.backends.cpu.lower_scalar.libdevice.table import SYMBOLS
from naiad.ir import BoolAttr, FloatType, IntegerType, StringAttr
from naiad.language.extra.libdevice_signatures import FUNCTIONS
from naiad.testing.tolerance import ulp_distance

_IR_TYPES = {
    "fp32": FloatType("f32"),
    "fp64": FloatType("f64"),
    "int32": IntegerType(32),
    "uint32": IntegerType(32),
    "int64": IntegerType(64),
    "uint64": IntegerType(64),
    "int1": IntegerType(1),
}
_SIGNATURES = {
    symbol: (args, result)
    for function in FUNCTIONS.values()
    for args, symbol, result in function.signatures
}
# Stems computed by the math library (to within ulps), by the name the library gives them.
_MATH = (
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "sinh",
    "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "atan2", "pow", "erf",
    "erfc", "cbrt",
)  # fmt: skip
# Stems computed to within ulps by libdevice/special.py and specialerf.py, which
# test_libdevice_special.py checks against mpmath.
_SPECIAL = (
    "exp10", "hypot", "rhypot", "norm3d", "norm4d", "rnorm3d", "rnorm4d", "rcbrt", "sinpi",
    "cospi", "lgamma", "tgamma", "j0", "j1", "jn", "y0", "y1", "yn", "powi", "erfcx", "erfinv",
    "erfcinv", "normcdf", "normcdfinv", "cyl_bessel_i0", "cyl_bessel_i1",
)  # fmt: skip
N = 2048


def _math_name(symbol: str) -> str | None:
    stem = symbol.removeprefix("__nv_").removeprefix("fast_")
    for name in (stem, stem.removesuffix("f")):
        if name in _MATH:
            return name
    return None


def _op(symbol: str):
    args, result = _SIGNATURES[symbol]
    attributes = {
        "libname": StringAttr("libdevice"),
        "libpath": StringAttr(""),
        "symbol": StringAttr(symbol),
        "pure": BoolAttr(1),
    }
    operand_types = [_IR_TYPES[a] for a in args]
    return make_op("tt.extern_elementwise", operand_types, [_IR_TYPES[result]], attributes)


def _cases(symbols, rng, make=values):
    cases = []
    for symbol in symbols:
        op = _op(symbol)
        cases.append((symbol, op, [make(v.type, N, rng) for v in op.operands]))
    return cases


def _declared(symbols):
    return sorted(s for s in symbols if s in _SIGNATURES)


def _special(symbol: str) -> bool:
    stem = symbol.removeprefix("__nv_").removeprefix("fast_")
    return stem in _SPECIAL or stem.removesuffix("f") in _SPECIAL


EXACT = _declared(s for s in SYMBOLS if _math_name(s) is None and not _special(s))
APPROXIMATE = _declared(s for s in SYMBOLS if _math_name(s) is not None)


def test_exact_libdevice_functions_match_bit_for_bit():
    cases = _cases(EXACT, np.random.default_rng(11))
    kernels = ScalarKernels()
    names = [kernels.add(op) for _, op, _ in cases]
    kernels.compile()
    for (_, op, inputs), name in zip(cases, names):
        assert_bits_equal(kernels.run(name, inputs), reference(op, inputs), op, inputs)


def test_math_libdevice_functions_are_within_the_cpu_bound():
    symbols = [s for s in APPROXIMATE if _math_name(s) in mathlib.NAMES]
    if not symbols:
        pytest.skip("the math library has none of these functions yet")
    cases = _cases(symbols, np.random.default_rng(12), make=moderate_values)
    kernels = ScalarKernels()
    names = [kernels.add(op) for _, op, _ in cases]
    kernels.compile()
    for (symbol, op, inputs), name in zip(cases, names):
        got, want = kernels.run(name, inputs), reference(op, inputs)
        distance = ulp_distance(got, want)
        bad = distance > 4
        assert not bad.any(), (symbol, [x[bad][:3] for x in inputs], got[bad][:3], want[bad][:3])
