"""Floating-point formats of the IR: the one table of them (`FLOAT_FORMATS`, and
`KERNEL_FORMATS` for what a kernel's bits mean, which the interpreter and the back ends read),
rounding, bit patterns and MLIR's exact decimal spelling.

MLIR prints a float attribute as `%.6e`-like text (`1.000000e+00`) when that text parses back to
the same bits, else in APFloat's round-trip form (`0.699999988`, `-3.40282347E+38`), else (inf,
NaN, integral values too long for that form) as the hex bit pattern (`0x7F800000`). We port
APFloat's `toString` digit by digit, truncations included (f32 1e-5 prints `9.99999974E-6`), so
Naiad prints what `mlir-opt` prints.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True)
class FloatFormat:
    """One binary float format: a sign bit, `exp_bits` of exponent biased by `bias`, and
    `mant_bits` of mantissa; `specials` says which bit patterns are not numbers:

        ieee    all-ones exponent: infinity (mantissa 0) or NaN       f64 f32 f16 bf16 f8E5M2
        fn      S.1111.111 is NaN; no infinity                        f8E4M3FN
        fnuz    0x80 (the would-be -0) is the only NaN; no infinity   f8E4M3FNUZ f8E5M2FNUZ ...
        finite  every pattern is a number                             Triton's fp8e4b15

    The printer and folder read the precision and exponent range; the interpreter and the CPU
    back end, which hold narrow floats as their bits, read the layout and special patterns.
    `numpy_name` is the ml_dtypes / NumPy type of the same format, if there is one.
    """

    kind: str
    exp_bits: int
    mant_bits: int
    bias: int
    specials: str
    numpy_name: str = ""

    @property
    def width(self) -> int:
        return 1 + self.exp_bits + self.mant_bits

    @property
    def precision(self) -> int:
        """Significand bits, the implicit one included."""
        return self.mant_bits + 1

    @property
    def min_exponent(self) -> int:
        """The exponent of the smallest normal number."""
        return 1 - self.bias

    @property
    def sign_bit(self) -> int:
        return 1 << (self.width - 1)

    @property
    def magnitude_mask(self) -> int:
        return self.sign_bit - 1

    @property
    def max_finite(self) -> int:
        """Bits of the largest finite value."""
        if self.specials == "ieee":
            return self.magnitude_mask - (1 << self.mant_bits)
        if self.specials == "fn":
            return self.magnitude_mask - 1
        return self.magnitude_mask

    @property
    def inf(self) -> int | None:
        """Bits of +infinity (None: the format has none)."""
        return self.max_finite + 1 if self.specials == "ieee" else None

    @property
    def nan(self) -> int | None:
        """The NaN conversions produce: positive, every mantissa bit set (fnuz: 0x80); None
        for a format without NaN."""
        return {"ieee": self.magnitude_mask, "fn": self.magnitude_mask, "fnuz": self.sign_bit}.get(
            self.specials
        )


FLOAT_FORMATS: dict[str, FloatFormat] = {
    f.kind: f
    for f in (
        FloatFormat("f16", 5, 10, 15, "ieee", "float16"),
        FloatFormat("bf16", 8, 7, 127, "ieee", "bfloat16"),
        FloatFormat("f32", 8, 23, 127, "ieee", "float32"),
        FloatFormat("f64", 11, 52, 1023, "ieee", "float64"),
        FloatFormat("f8E4M3FN", 4, 3, 7, "fn", "float8_e4m3fn"),
        FloatFormat("f8E5M2", 5, 2, 15, "ieee", "float8_e5m2"),
        FloatFormat("f8E4M3FNUZ", 4, 3, 8, "fnuz", "float8_e4m3fnuz"),
        FloatFormat("f8E5M2FNUZ", 5, 2, 16, "fnuz", "float8_e5m2fnuz"),
        FloatFormat("f8E4M3B11FNUZ", 4, 3, 11, "fnuz", "float8_e4m3b11fnuz"),
    )
}
"""The float types of the IR by MLIR kind, with MLIR's (APFloat's) meaning of their bits."""

FP8E4B15 = FloatFormat("f8E4M3B11FNUZ", 4, 3, 15, "finite")
"""Triton's fp8e4b15, which Triton's IR types f8E4M3B11FNUZ although its bits mean something
else: bias 15, and neither NaN nor infinity. Kernels read those bits so (`KERNEL_FORMATS`);
constants of the type print and fold with MLIR's meaning."""

KERNEL_FORMATS: dict[str, FloatFormat] = {**FLOAT_FORMATS, "f8E4M3B11FNUZ": FP8E4B15}
"""What a kernel's float values mean, by MLIR kind: the interpreter and the back ends."""


_STRUCT_CODES = {"f16": "e", "f32": "f", "f64": "d"}
_UINT_CODES = {8: "B", 16: "H", 32: "I", 64: "Q"}


def round_float(kind: str, value: float) -> float:
    """`value` rounded to the nearest number of format `kind` (ties to even), as a Python float."""
    code = _STRUCT_CODES.get(kind)
    if code == "d":
        return float(value)
    if code is not None:
        try:
            return struct.unpack(code, struct.pack(code, value))[0]
        except OverflowError:  # struct refuses to round a finite value to infinity
            return math.copysign(math.inf, value)
    return float(_ml_dtype(kind)(value))


def float_to_bits(kind: str, value: float) -> int:
    """The bit pattern of `value` (already representable) in format `kind`."""
    code = _STRUCT_CODES.get(kind)
    width = FLOAT_FORMATS[kind].width
    if code is not None:
        return struct.unpack(_UINT_CODES[width], struct.pack(code, value))[0]
    import numpy as np

    return int(np.array(value, dtype=_ml_dtype(kind)).view(f"uint{width}"))


def float_from_bits(kind: str, bits: int) -> float:
    """The value whose bit pattern in format `kind` is `bits` (for hex literals)."""
    code = _STRUCT_CODES.get(kind)
    width = FLOAT_FORMATS[kind].width
    if code is not None:
        return struct.unpack(code, struct.pack(_UINT_CODES[width], bits))[0]
    import numpy as np

    return float(np.array(bits, dtype=f"uint{width}").view(_ml_dtype(kind)))


def _ml_dtype(kind: str):
    # Imported on first use: only the narrow formats need it, and it costs import time.
    import ml_dtypes

    return getattr(ml_dtypes, FLOAT_FORMATS[kind].numpy_name)


def format_float(kind: str, value: float) -> str:
    """MLIR's printFloatValue for `value` of format `kind`."""
    if math.isfinite(value):
        semantics = FLOAT_FORMATS[kind]
        text = _to_string(value, semantics.precision, 6, 0, False)
        if value == 0 or _parses_back_exactly(text, value, semantics):
            return text
        text = _to_string(value, semantics.precision, 0, 3, True)
        if "." in text:
            return text
    return f"0x{float_to_bits(kind, value):X}"


def _parses_back_exactly(text: str, value: float, semantics: FloatFormat) -> bool:
    """Whether APFloat would parse `text` to `value` (round to nearest even, exactly)."""
    decimal = Fraction(text)
    if (decimal < 0) != (value < 0):
        return False
    return _round_exact(abs(decimal), semantics) == abs(Fraction(value))


def _round_exact(x: Fraction, semantics: FloatFormat) -> Fraction:
    """`x` > 0 rounded to `semantics.precision` significant bits, subnormals included."""
    if x == 0:
        return x
    exponent = x.numerator.bit_length() - x.denominator.bit_length()
    if x < Fraction(2) ** exponent:
        exponent -= 1
    ulp_exponent = max(exponent, semantics.min_exponent) - (semantics.precision - 1)
    scaled = x / Fraction(2) ** ulp_exponent
    whole, rest = divmod(scaled.numerator, scaled.denominator)
    twice = 2 * rest
    if twice > scaled.denominator or (twice == scaled.denominator and whole & 1):
        whole += 1
    return whole * Fraction(2) ** ulp_exponent


def _to_string(
    value: float, precision_bits: int, format_precision: int, max_padding: int, truncate_zero: bool
) -> str:
    """A port of APFloat::toString for a finite value (APFloat.cpp, `toStringImpl`)."""
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        if max_padding:
            return sign + "0"
        if truncate_zero:
            return sign + "0.0E+0"
        return sign + "0.0" + "0" * max(format_precision - 1, 0) + "e+00"
    if not format_precision:
        format_precision = 2 + precision_bits * 59 // 196
    digits, exp = _decimal_digits(abs(value), format_precision)
    return sign + _layout(digits, exp, format_precision, max_padding, truncate_zero)


def _decimal_digits(magnitude: float, format_precision: int) -> tuple[str, int]:
    """Significant digits (most significant first) and decimal exponent of the last one,
    rounded as APFloat rounds: truncate to about `format_precision` digits, then half-up."""
    numerator, denominator = magnitude.as_integer_ratio()
    exp = 1 - denominator.bit_length()  # denominator is a power of two
    trailing = (numerator & -numerator).bit_length() - 1
    numerator >>= trailing
    exp += trailing
    if exp > 0:
        numerator <<= exp
        exp = 0
    elif exp < 0:
        numerator *= 5 ** (-exp)
    bits_required = (format_precision * 196 + 58) // 59
    bits = numerator.bit_length()
    if bits > bits_required:
        removable = (bits - bits_required) * 59 // 196
        if removable:
            exp += removable
            numerator //= 10**removable
    text = str(numerator)
    digits = text.rstrip("0")
    exp += len(text) - len(digits)
    if len(digits) <= format_precision:
        return digits, exp
    if digits[format_precision] < "5":
        kept = digits[:format_precision].rstrip("0")
    else:
        kept = digits[:format_precision].rstrip("9")
        if not kept:  # the carry ran through every digit: 999.. became 1000..
            return "1", exp + len(digits)
        kept = kept[:-1] + chr(ord(kept[-1]) + 1)
    return kept, exp + len(digits) - len(kept)


def _layout(digits: str, exp: int, precision: int, max_padding: int, truncate_zero: bool) -> str:
    """Place the point: scientific or plain, as APFloat decides (the `FormatScientific` rule)."""
    count = len(digits)
    if not max_padding:
        scientific = True
    elif exp >= 0:
        scientific = exp > max_padding or count + exp > precision
    else:
        most_significant = exp + count - 1
        scientific = most_significant < 0 and -most_significant > max_padding
    if scientific:
        exp += count - 1
        mantissa = digits[0] + "." + (digits[1:] if count > 1 or not truncate_zero else "0")
        if not truncate_zero and precision > count - 1:
            mantissa += "0" * (precision - count + 1)
        exponent = str(abs(exp)).rjust(1 if truncate_zero else 2, "0")
        return f"{mantissa}{'E' if truncate_zero else 'e'}{'+' if exp >= 0 else '-'}{exponent}"
    if exp >= 0:
        return digits + "0" * exp
    whole = exp + count
    if whole > 0:
        return digits[:whole] + "." + digits[whole:]
    return "0." + "0" * -whole + digits


def float_key(kind: str, values: tuple[float, ...]) -> bytes | tuple[int, ...]:
    """A hashable key telling floats apart by their bits (0.0 from -0.0; NaN equal to itself)."""
    code = _STRUCT_CODES.get(kind)
    if code is not None:
        return struct.pack(f"{len(values)}{code}", *values)
    return tuple(float_to_bits(kind, v) for v in values)


def round_floats(kind: str, values) -> tuple[float, ...]:
    """Each of `values` rounded to format `kind`; one struct call for the common formats."""
    code = _STRUCT_CODES.get(kind)
    if code is not None and code != "d":
        try:
            return struct.unpack(
                f"{len(values)}{code}", struct.pack(f"{len(values)}{code}", *values)
            )
        except OverflowError:
            pass  # some value rounds to infinity: take them one by one
    return tuple(round_float(kind, float(v)) for v in values)


# The IR kind of each of the language's float types, by Triton's name for it: what the frontend
# emits and the interpreter computes in (both read it here, below them).
FLOAT_KINDS = {
    "fp16": "f16",
    "bf16": "bf16",
    "fp32": "f32",
    "fp64": "f64",
    "fp8e4nv": "f8E4M3FN",
    "fp8e5": "f8E5M2",
    "fp8e4b8": "f8E4M3FNUZ",
    "fp8e5b16": "f8E5M2FNUZ",
    "fp8e4b15": "f8E4M3B11FNUZ",
}
