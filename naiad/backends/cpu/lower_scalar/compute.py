"""Where float arithmetic happens: f32 and f64 natively, every narrower format in f32.

The reference computes an fp16 / bf16 / fp8 operation in fp32 and rounds the result back to
nearest even (NumPy's half loops, ml_dtypes' bfloat16 and float8 operators). For + - * / and
sqrt that is the correctly rounded result, f32 having more than twice the bits plus two. How a
result out of range comes back depends on the path, so each is named here:

- ARITH, the reference's array arithmetic: IEEE overflow to inf, and NaN for fp8 formats that
  have no inf (ml_dtypes does not saturate);
- CONVERT, a cast (`floats.convert`): the GPU's conversion, `.satfinite` into fp8 (conversions.py
  knows the rule per format and rounding).

fp8e4b15 has no arithmetic: the reference holds it as its raw bits, so its `+` would add bit
patterns. Only conversions, bitcasts, selects and `negf` (a sign flip) accept it.
"""

from __future__ import annotations

from .float_bits import IEEE, NAN, decode_to_f32, encode
from .registry import unsupported
from .types import FORMATS, NATIVE_FLOATS, float_kind

_ARITH_OVERFLOW = {
    "f16": IEEE,
    "bf16": IEEE,
    "f8E5M2": IEEE,
    "f8E4M3FN": NAN,
    "f8E4M3FNUZ": NAN,
    "f8E5M2FNUZ": NAN,
}


def arith_kind(op, t) -> str:
    """The float kind of `t`, refusing (at `op`) a format without arithmetic."""
    kind = float_kind(t)
    if kind not in NATIVE_FLOATS and kind not in _ARITH_OVERFLOW:
        unsupported(op, f"'{op.name}' has no meaning on {kind}: only casts accept fp8e4b15")
    return kind


def widen(b, value, kind: str):
    """`value` (storage of `kind`) as the f32 / f64 value it computes in, exactly."""
    if kind in NATIVE_FLOATS:
        return value
    return decode_to_f32(b, value, FORMATS[kind])


def narrow(b, value, kind: str):
    """An f32 / f64 arithmetic result rounded back to `kind` as the reference's arithmetic
    does (to nearest even, ARITH overflow)."""
    if kind in NATIVE_FLOATS:
        return value
    return encode(b, value, FORMATS[kind], "rtne", _ARITH_OVERFLOW[kind])


def in_compute_type(b, kind: str, operands, fn):
    """`fn(*widened operands)` rounded back to `kind`: an op of a narrow format done in f32."""
    return narrow(b, fn(*(widen(b, x, kind) for x in operands)), kind)
