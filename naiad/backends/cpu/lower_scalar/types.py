"""How each IR element type is held in LLVM IR.

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

from llvmlite import ir

from ....ir import FloatType, IndexType, IntegerType, element_type
from ....ir.float_format import KERNEL_FORMATS

F32 = ir.FloatType()
F64 = ir.DoubleType()
I1 = ir.IntType(1)
I8 = ir.IntType(8)
I16 = ir.IntType(16)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
PTR = ir.PointerType()


# The kinds LLVM computes in natively; the others are held as their bits and decoded to f32.
NATIVE_FLOATS = {"f32": F32, "f64": F64}
NATIVE_FORMATS = {kind: KERNEL_FORMATS[kind] for kind in NATIVE_FLOATS}
FORMATS = {kind: f for kind, f in KERNEL_FORMATS.items() if kind not in NATIVE_FLOATS}
"""The formats held as their bits, by MLIR kind (the IR's table: naiad/ir/float_format.py)."""


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
