"""f32 <-> f16 by the CPU's own conversion instructions, on targets that have them.

float_bits.py converts with integer operations only, which every target runs; a loop of them
vectorizes but takes some forty instructions per vector. x86-64 with F16C (`vcvtps2ph`,
`vcvtph2ps`) and every AArch64 core (`fcvtn`, `fcvtl`) convert a whole vector in one, so an f32
-> f16 store or an f16 operand's decoding costs little more than its memory traffic there. Both
instructions give what Naiad's conversions give (float_bits.py's rounding to nearest even with
IEEE overflow, and the exact widening) for every number: subnormal results are kept, not
flushed (x86's FTZ does not apply to `vcvtps2ph`; an f32 subnormal, which DAZ would read as
zero, rounds to an f16 zero of its sign anyway). Only NaNs differ: the instructions keep a NaN's
sign and payload, Naiad's conversions give the canonical NaN, so a select puts it back.

LLVM's `fptrunc` / `fpext` between `float` and `half` say this, and LLVM selects the instructions
where the target has them; on x86-64 without F16C they would become a library call per element,
so the target's features are checked first (the host's, as LLVM detects them or NAIAD_HOST_CPU
names them: x86-64 code is only generated for the host, target.py). Like every float operation
LLVM emits, `vcvtps2ph` rounds as the thread's rounding mode says, which Naiad never changes
from round to nearest even.
"""

from __future__ import annotations

from llvmlite import ir

from ..target import host_target
from .types import F32

HALF = ir.HalfType()
I16 = ir.IntType(16)
I32 = ir.IntType(32)

_CANONICAL_F16_NAN = 0x7FFF
_CANONICAL_F32_NAN = 0x7FFFFFFF


def converts_halves(triple: str) -> bool:
    """Whether the target of `triple` converts between f32 and f16 in one instruction per
    vector: always on AArch64; on x86-64 where the host (the only x86-64 target) has F16C."""
    if triple.split("-", 1)[0] in ("aarch64", "arm64"):
        return True
    host = host_target()
    return host.triple == triple and "+f16c" in host.features.split(",")


def f32_to_f16(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """The f16 bits (i16) of f32 `x` rounded to nearest even, overflow to inf, NaN canonical."""
    bits = b.bitcast(b.fptrunc(x, HALF), I16)
    is_nan = b.fcmp_unordered("uno", x, x)
    return b.select(is_nan, ir.Constant(I16, _CANONICAL_F16_NAN), bits)


def f16_to_f32(b: ir.IRBuilder, bits: ir.Value) -> ir.Value:
    """The f32 holding the exact value of f16 bits `bits` (i16), NaN canonical."""
    wide = b.fpext(b.bitcast(bits, HALF), F32)
    is_nan = b.fcmp_unordered("uno", wide, wide)
    return b.select(is_nan, b.bitcast(ir.Constant(I32, _CANONICAL_F32_NAN), F32), wide)
