"""Element arithmetic the structured ops need beyond single scalar ops: widening an element to
an accumulator type (upstream's matmul casts its inputs to the output type) and the
multiply-add of a dot product."""

from __future__ import annotations

from llvmlite import ir

from ....ir import FloatType, IntegerType, element_type
from ..lower_scalar.float_bits import decode_to_f32
from ..lower_scalar.registry import intrinsic
from ..lower_scalar.types import FORMATS, llvm_type


def widen(b: ir.IRBuilder, value: ir.Value, source, target) -> ir.Value:
    """`value` (an element of IR type `source`) as IR type `target`, exactly: narrow floats
    decode to f32 (then extend to f64 if asked), integers sign-extend."""
    source, target = element_type(source), element_type(target)
    if source is target:
        return value
    wanted = llvm_type(target)
    if isinstance(source, FloatType):
        if source.kind in FORMATS:
            value = decode_to_f32(b, value, FORMATS[source.kind])
        if value.type != wanted:
            value = b.fpext(value, wanted)
        return value
    if isinstance(source, IntegerType) and isinstance(target, IntegerType):
        return b.sext(value, wanted) if source.width < target.width else value
    if isinstance(source, IntegerType):
        return b.sitofp(value, wanted)
    raise TypeError(f"the CPU back end cannot widen {source} to {target}")


def multiply_add(fl, lhs, lhs_type, rhs, rhs_type, acc, out_type) -> ir.Value:
    """`acc + lhs·rhs` in the accumulator's type (a fused multiply-add for floats)."""
    b = fl.builder
    out = element_type(out_type)
    x, y = widen(b, lhs, lhs_type, out), widen(b, rhs, rhs_type, out)
    if isinstance(out, IntegerType):
        return b.add(acc, b.mul(x, y))
    t = llvm_type(out)
    name = f"{multiply_add_intrinsic(fl)}.{'f32' if t == ir.FloatType() else 'f64'}"
    return b.call(intrinsic(fl.module, name, t, [t, t, t]), [x, y, acc])


def multiply_add_intrinsic(fl) -> str:
    """The intrinsic a dot's float multiply-adds are: `llvm.fma` where the target fuses them
    in hardware (AArch64 always, x86 with FMA or FMA4), else `llvm.fmuladd`, which LLVM makes
    a multiply and an add there: `llvm.fma` without the instruction is a call of the C
    library's `fmaf` per element, and the tutorial matmul compiled for x86-64-v2 ran 1.5 s
    against torch's 25 ms. Both dot lowerings ask here, so they agree on every target."""
    arch = (fl.module.triple or "").split("-", 1)[0]
    features = fl.context.features.split(",")
    if arch in ("aarch64", "arm64") or "+fma" in features or "+fma4" in features:
        return "llvm.fma"
    return "llvm.fmuladd"


def narrow_float(t):
    """The bit format of a float type held as integer bits (f16, bf16, fp8), else None."""
    t = element_type(t)
    return FORMATS.get(t.kind) if isinstance(t, FloatType) else None
