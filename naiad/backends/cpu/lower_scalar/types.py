"""How each IR element type is held in LLVM IR, and the float formats narrower than f32.

Every value is held as its storage bits, so a load or store is a plain one of `llvm_type(t)`:

    i1 ... i64, index   iN (index is i64 on every CPU target)
    f32, f64            float, double
    f16, bf16           i16: the IEEE half / bfloat16 bits
    f8E*                i8: the fp8 bits (f8E4M3B11FNUZ is Triton's fp8e4b15, bias 15)
    !tt.ptr<...>        ptr (opaque; the CPU has one address space)

f16 and bf16 are integers, not LLVM's `half` / `bfloat`, because Naiad's conversions are
bit-exact with the GPU's (round toward zero, `.satfinite`, NaN encodings), which LLVM's
`fptrunc` cannot say, and because x86 without F16C / AVX512-BF16 lowers those types' conversions
to library calls that a loaded object cannot count on. Arithmetic on them decodes to f32, computes
there and rounds back (float_bits.py), which is what the reference does.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from ....ir import FloatType, IndexType, IntegerType, element_type

F32 = ir.FloatType()
F64 = ir.DoubleType()
I1 = ir.IntType(1)
I8 = ir.IntType(8)
I16 = ir.IntType(16)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
PTR = ir.PointerType()


@dataclass(frozen=True)
class FloatFormat:
    """Field widths, bias and special patterns of one float format.

    `specials`: "ieee" (all-ones exponent is inf or NaN), "fn" (S.1111.111 is NaN, no inf),
    "fnuz" (0x80 is the only NaN, no inf, no -0), "finite" (every pattern is a number)."""

    kind: str
    exp_bits: int
    mant_bits: int
    bias: int
    specials: str

    @property
    def width(self) -> int:
        return 1 + self.exp_bits + self.mant_bits

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
    def inf(self) -> int:
        """Bits of +inf (IEEE formats only)."""
        return self.max_finite + 1

    @property
    def nan(self) -> int:
        """The NaN conversions produce: positive with every mantissa bit set (fnuz: 0x80)."""
        return self.sign_bit if self.specials == "fnuz" else self.magnitude_mask


# The formats held as their bits (every float but f32 and f64), by MLIR kind.
FORMATS = {
    f.kind: f
    for f in (
        FloatFormat("f16", 5, 10, 15, "ieee"),
        FloatFormat("bf16", 8, 7, 127, "ieee"),
        FloatFormat("f8E5M2", 5, 2, 15, "ieee"),
        FloatFormat("f8E4M3FN", 4, 3, 7, "fn"),
        FloatFormat("f8E4M3FNUZ", 4, 3, 8, "fnuz"),
        FloatFormat("f8E5M2FNUZ", 5, 2, 16, "fnuz"),
        FloatFormat("f8E4M3B11FNUZ", 4, 3, 15, "finite"),
    )
}

# The kinds LLVM computes in natively; the others are decoded to f32 first.
NATIVE_FLOATS = {"f32": F32, "f64": F64}
NATIVE_FORMATS = {
    "f32": FloatFormat("f32", 8, 23, 127, "ieee"),
    "f64": FloatFormat("f64", 11, 52, 1023, "ieee"),
}


def llvm_type(t) -> ir.Type:
    """The LLVM type holding one element of IR type `t` (a scalar, or a tensor's element)."""
    t = element_type(t)
    if isinstance(t, IntegerType):
        return ir.IntType(t.width)
    if isinstance(t, IndexType):
        return I64
    if isinstance(t, FloatType):
        native = NATIVE_FLOATS.get(t.kind)
        return native if native is not None else ir.IntType(FORMATS[t.kind].width)
    if getattr(t, "is_pointer", False):
        return PTR
    raise TypeError(f"the CPU back end has no scalar representation of {t}")


def float_kind(t) -> str | None:
    """The MLIR kind (`f32`, `f8E4M3FN`) of a float element type, else None."""
    t = element_type(t)
    return t.kind if isinstance(t, FloatType) else None


def int_width(t) -> int:
    """Bits of an integer or index element type."""
    t = element_type(t)
    return 64 if isinstance(t, IndexType) else t.width


def is_pointer(t) -> bool:
    return getattr(element_type(t), "is_pointer", False)
