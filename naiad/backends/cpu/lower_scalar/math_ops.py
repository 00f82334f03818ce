"""Transcendental `math` ops: calls of the CPU math library (mathlib/), written in LLVM IR so
that, inlined into a loop, the loop vectorizer widens them.

f32 and f64 call the library's function of that type; narrower formats compute in f32 and round
back, the way the reference reaches them: `exp exp2 log log2 sin cos erf` are NumPy ufuncs on
the narrow array (ARITH rounding, compute.py), the others go through libdevice's f32 function and
a cast back (CONVERT rounding, `.satfinite` into fp8). Accuracy: the tolerance table's ulp bounds.
"""

from __future__ import annotations

from ....dialects.math import BUILTIN_LIBM_STEMS, LIBDEVICE_LIBM_STEMS
from .compute import arith_kind, narrow, widen
from .conversions import convert_float
from .registry import lowers, unsupported
from .types import NATIVE_FLOATS

# op -> the library's function name: the builtins' functions round back to a narrow float as
# arithmetic does; the libdevice-only ones compute in f32 and convert, as libdevice's wrappers do.
_ARITH_PATH = BUILTIN_LIBM_STEMS
_CAST_PATH = LIBDEVICE_LIBM_STEMS


def call_math(b, ctx, name: str, args, op=None):
    """The math library's `name` applied to f32 / f64 `args`, declared once per context."""
    from ..mathlib import math_function  # the library is optional until a math op needs it

    ty = args[0].type
    key = (name, str(ty))
    fn = ctx.math_functions.get(key)
    if fn is None:
        try:
            fn = math_function(ctx.module, name, ty, ctx.features)
        except (KeyError, NotImplementedError) as error:
            unsupported(op, f"the CPU math library has no '{name}' for {ty}: {error}")
        ctx.math_functions[key] = fn
    return b.call(fn, list(args))


@lowers(*_ARITH_PATH, *_CAST_PATH)
def math_function_op(b, op, operands, ctx):
    kind = arith_kind(op, op.results[0].type)
    name = _ARITH_PATH.get(op.name) or _CAST_PATH[op.name]
    result = call_math(b, ctx, name, [widen(b, x, kind) for x in operands], op)
    if kind in NATIVE_FLOATS or op.name in _ARITH_PATH:
        return narrow(b, result, kind)
    return convert_float(b, result, "f32", kind)
