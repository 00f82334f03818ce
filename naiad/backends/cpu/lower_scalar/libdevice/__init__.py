"""`tt.extern_elementwise`: libdevice functions (`__nv_*`) as CPU code of the same meaning.

The meaning is the interpreter's libdevice (runtime/interpreter/libdevice/): exact functions
(rounding to integers, rn arithmetic, sqrt, fmod, conversions, bit operations, classification)
are bit-exact here too, through LLVM instructions and intrinsics; transcendental ones call the
CPU math library (math_ops.py) within its ulp bounds. Where the GPU flushes fp32 subnormals
(ftz.py there: the `_rn` arithmetic, fma, floor, ceil, the float -> integer conversions, ...),
arguments and results are flushed here as well. Arithmetic and conversions rounded down, up or
toward zero are exact too (directed.py). A function without a same-meaning implementation is a
compile error that names it, never another function's answer.
"""

from __future__ import annotations

from llvmlite import ir

from ..registry import lowers, unsupported
from ..types import I1, llvm_type
from . import directed, floats, integers, special, specialerf  # noqa: F401 (they fill the table)
from .table import SYMBOLS


@lowers("tt.extern_elementwise")
def extern_elementwise(b, op, operands, ctx):
    symbol = op.symbol.value
    fn = SYMBOLS.get(symbol)
    if fn is None:
        unsupported(op, f"the CPU back end has no implementation of libdevice's '{symbol}'")
    result = fn(b, ctx, op, operands)
    return _fit(b, result, llvm_type(op.result.type))


def _fit(b, value, ty):
    """An integer result at the width the op declares (libdevice counts return int32)."""
    if value.type == ty or not isinstance(ty, ir.IntType):
        return value
    if value.type == I1:
        return b.zext(value, ty)
    return b.trunc(value, ty) if value.type.width > ty.width else b.zext(value, ty)
