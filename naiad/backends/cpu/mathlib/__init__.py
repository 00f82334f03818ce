"""The CPU math library, written in LLVM IR so that the loop vectorizer can widen it.

No vector math library is reachable through llvmlite, so every function of the `math` dialect
that is not an LLVM intrinsic is defined here, in a form the vectorizer accepts: branch-free
(selects), calling only intrinsics that have vector forms, `alwaysinline` and `linkonce_odr`.
Once inlined into a loop `out[i] = exp(in[i])`, the loop becomes 8-wide AVX2 (4-wide NEON) code.

    fn = math_function(module, "exp", ir.FloatType())   # defined on first use, once per module
    builder.call(fn, [x])

Ops that are single LLVM intrinsics (sqrt, floor, fma, ...) are listed in `INTRINSICS` instead.
The families: exp_log, trig, inverse_trig, hyperbolic, special (erf, erfc), power (pow, cbrt,
rsqrt); poly holds the emitter they are written with, fit the tool that derived their
coefficients. Each family's docstring states its algorithms and accuracy bounds.
"""

from __future__ import annotations

from llvmlite import ir

from . import exp_log, hyperbolic, inverse_trig, power, special, trig
from .poly import Emitter, float_format

# `math` dialect op name -> LLVM intrinsic; the overload suffix (".f32", ".f64") is appended by
# the caller, and every one of them is correctly rounded or exact, as the dialect requires.
INTRINSICS: dict[str, str] = {
    "sqrt": "llvm.sqrt",
    "floor": "llvm.floor",
    "ceil": "llvm.ceil",
    "trunc": "llvm.trunc",
    "round": "llvm.round",
    "roundeven": "llvm.roundeven",
    "absf": "llvm.fabs",
    "copysign": "llvm.copysign",
    "fma": "llvm.fma",
}

_FUNCTIONS = {
    **exp_log.FUNCTIONS,
    **trig.FUNCTIONS,
    **inverse_trig.FUNCTIONS,
    **hyperbolic.FUNCTIONS,
    **special.FUNCTIONS,
    **power.FUNCTIONS,
}
_BINARY = frozenset({"atan2", "pow"})

NAMES = frozenset(_FUNCTIONS)


def symbol_name(name: str, float_type: ir.Type) -> str:
    """The LLVM name of the library's `name` for `float_type`: naiad.math.<name>.<f32|f64>."""
    return f"naiad.math.{name}.{float_format(float_type).kind}"


def math_function(
    module: ir.Module, name: str, float_type: ir.Type, features: str = ""
) -> ir.Function:
    """The definition of math function `name` for `float_type` in `module`, emitted on first use.

    Args:
        module: the module the caller is building; the definition is added to it once.
        name: a name of `NAMES` ("exp", "sin", "atan2", "pow", ...).
        float_type: `ir.FloatType()` or `ir.DoubleType()`.
        features: the target's CPU features as LLVM spells them ("+avx512f,+fma,..."). They
            choose instructions only, never results: every variant computes the same bits, so
            the `linkonce_odr` definitions of modules built for different targets agree.

    Raises:
        KeyError: `name` is not a function of the library.
        TypeError: `float_type` is neither float nor double.
    """
    if name not in _FUNCTIONS:
        raise KeyError(f"no math function {name!r}; the library has {', '.join(sorted(NAMES))}")
    symbol = symbol_name(name, float_type)
    existing = module.globals.get(symbol)
    if existing is not None:
        return existing
    arity = 2 if name in _BINARY else 1
    function = ir.Function(module, ir.FunctionType(float_type, [float_type] * arity), symbol)
    # linkonce_odr: several modules may carry the same definition, and unused ones are dropped.
    function.linkage = "linkonce_odr"
    function.attributes.add("alwaysinline")
    function.attributes.add("nounwind")
    builder = ir.IRBuilder(function.append_basic_block("entry"))
    emitter = Emitter(builder, float_type, vector_ldexp="+avx512f" in features.split(","))
    builder.ret(_FUNCTIONS[name](emitter, *function.args))
    return function
