"""The compiler-rt helpers LLVM may call from host code, written here in LLVM IR.

LLVM lowers some operations to calls into compiler-rt (or libgcc) when the target CPU has no
instruction for them, and which ones depends on the CPU, not only on the architecture:

    fptrunc float  -> bfloat   __truncsfbf2   x86-64 without AVX512-BF16 / AVX-NE-CONVERT
    fptrunc double -> bfloat   __truncdfbf2   every x86-64
    fptrunc float  -> half     __truncsfhf2   x86-64 without F16C
    fptrunc double -> half     __truncdfhf2   x86-64 without AVX512-FP16
    fpext   half   -> float    __extendhfsf2  x86-64 without F16C (half arithmetic goes through it)
    sdiv / udiv / srem / urem on i128
                               __divti3, __udivti3, __modti3, __umodti3   x86-64 and AArch64

A Python process has no compiler-rt, and whether libgcc happens to export a helper depends on the
GCC the system was built with; a call that resolves nowhere jumps to address 0. So Naiad brings
its own: this module, compiled for the host CPU once per process and linked before anything else,
and its addresses join the symbols every loaded object resolves against (loader.py).

The CPU back end's own code generators never emit these operations (f16 and bf16 are held as
integers, lower_scalar/types.py); the library serves LLVM IR written elsewhere — the NVIDIA back
end's element conversions run on the host in tests, IR a user hands to `naiad-opt` — and keeps
any future code generator from crashing the process on some CPU. Conversions round to nearest
even with the GPU's overflow and NaN rules (float_bits.py), which is what LLVM's `fptrunc`
asks for; the division helpers are restoring shift-and-subtract loops on i128, whose shifts,
compares and subtractions LLVM lowers inline on every 64-bit target.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from llvmlite import ir

# (helper, its LLVM signature, the internal converter it wraps, source and destination kinds)
_CONVERSIONS = (
    ("__extendhfsf2", "float", "half", "f16", "f32"),
    ("__truncsfhf2", "half", "float", "f32", "f16"),
    ("__truncdfhf2", "half", "double", "f64", "f16"),
    ("__truncsfbf2", "bfloat", "float", "f32", "bf16"),
    ("__truncdfbf2", "bfloat", "double", "f64", "bf16"),
)

# __udivti3 and friends: quotient or remainder, signed or not.
_DIVISIONS = (
    ("__udivti3", "udiv"),
    ("__umodti3", "urem"),
    ("__divti3", "sdiv"),
    ("__modti3", "srem"),
)

EXPORTS = tuple(name for name, *_ in _CONVERSIONS) + tuple(name for name, _ in _DIVISIONS)

# Restoring division of two unsigned i128: one quotient bit per trip, most significant first.
# `carry` is the bit shifted out of the partial remainder: with it set, the remainder exceeds
# any divisor, and the wrapped subtraction is still the right one modulo 2**128.
_UDIVMOD = """
define internal { i128, i128 } @naiad.udivmod128(i128 %n, i128 %d) {
entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i.next, %loop ]
  %q = phi i128 [ 0, %entry ], [ %q.next, %loop ]
  %r = phi i128 [ 0, %entry ], [ %r.next, %loop ]
  %at = sub i32 127, %i
  %at.wide = zext i32 %at to i128
  %n.shifted = lshr i128 %n, %at.wide
  %n.bit = and i128 %n.shifted, 1
  %carry = icmp slt i128 %r, 0
  %r.doubled = shl i128 %r, 1
  %r.in = or i128 %r.doubled, %n.bit
  %fits = icmp uge i128 %r.in, %d
  %take = or i1 %carry, %fits
  %r.less = sub i128 %r.in, %d
  %r.next = select i1 %take, i128 %r.less, i128 %r.in
  %q.bit = zext i1 %take to i128
  %q.doubled = shl i128 %q, 1
  %q.next = or i128 %q.doubled, %q.bit
  %i.next = add i32 %i, 1
  %done = icmp eq i32 %i.next, 128
  br i1 %done, label %exit, label %loop
exit:
  %pair.q = insertvalue { i128, i128 } poison, i128 %q.next, 0
  %pair = insertvalue { i128, i128 } %pair.q, i128 %r.next, 1
  ret { i128, i128 } %pair
}
"""


def _unsigned_division(name: str, op: str) -> str:
    index = 0 if op == "udiv" else 1
    return f"""
define i128 @{name}(i128 %a, i128 %b) {{
  %pair = call {{ i128, i128 }} @naiad.udivmod128(i128 %a, i128 %b)
  %out = extractvalue {{ i128, i128 }} %pair, {index}
  ret i128 %out
}}
"""


def _signed_division(name: str, op: str) -> str:
    """C's truncating division: the quotient is negative when the signs differ, the remainder
    takes the dividend's sign. |INT128_MIN| is 2**127, right as an unsigned magnitude."""
    index = 0 if op == "sdiv" else 1
    sign = "%signs.differ" if op == "sdiv" else "%a.neg"
    return f"""
define i128 @{name}(i128 %a, i128 %b) {{
  %a.neg = icmp slt i128 %a, 0
  %b.neg = icmp slt i128 %b, 0
  %a.minus = sub i128 0, %a
  %b.minus = sub i128 0, %b
  %a.mag = select i1 %a.neg, i128 %a.minus, i128 %a
  %b.mag = select i1 %b.neg, i128 %b.minus, i128 %b
  %pair = call {{ i128, i128 }} @naiad.udivmod128(i128 %a.mag, i128 %b.mag)
  %mag = extractvalue {{ i128, i128 }} %pair, {index}
  %signs.differ = xor i1 %a.neg, %b.neg
  %minus = sub i128 0, %mag
  %out = select i1 {sign}, i128 %minus, i128 %mag
  ret i128 %out
}}
"""


def _converter(module: ir.Module, src: str, dst: str) -> ir.Function:
    """`naiad.<src>_to_<dst>`: the conversion on storage values (f16/bf16 as i16 bits)."""
    # Imported here: a process whose disk cache holds the library's object code (the first
    # launch of a cached kernel) never builds it, and the scalar lowering takes 7 ms to import.
    from llvmlite import ir

    from .lower_scalar.conversions import convert_float
    from .lower_scalar.types import F32, F64, I16

    storage = {"f16": I16, "bf16": I16, "f32": F32, "f64": F64}
    function = ir.Function(
        module, ir.FunctionType(storage[dst], [storage[src]]), f"naiad.{src}_to_{dst}"
    )
    function.linkage = "internal"
    builder = ir.IRBuilder(function.append_basic_block("entry"))
    (x,) = function.args
    builder.ret(convert_float(builder, x, src, dst))
    return function


def _conversion(name: str, ret: str, param: str, src: str, dst: str) -> str:
    """The helper's own signature (`half`/`bfloat` travel in the registers the target's ABI
    gives them, which LLVM chooses alike for the call and for this definition) around the
    converter on bits."""
    storage = {"float": "float", "double": "double", "half": "i16", "bfloat": "i16"}
    lines = [f"define {ret} @{name}({param} %x) {{"]
    arg = "%x"
    if storage[param] != param:
        lines.append(f"  %bits = bitcast {param} %x to {storage[param]}")
        arg = "%bits"
    lines.append(f"  %out = call {storage[ret]} @naiad.{src}_to_{dst}({storage[param]} {arg})")
    result = "%out"
    if storage[ret] != ret:
        lines.append(f"  %value = bitcast {storage[ret]} %out to {ret}")
        result = "%value"
    lines += [f"  ret {ret} {result}", "}"]
    return "\n".join(lines) + "\n"


def library_ir() -> str:
    """The whole library as LLVM IR text (target-neutral: no triple or data layout yet)."""
    from llvmlite import ir

    module = ir.Module(name="naiad_runtime")
    for _, _, _, src, dst in _CONVERSIONS:
        _converter(module, src, dst)
    parts = [str(module), _UDIVMOD]
    parts += [_conversion(*row) for row in _CONVERSIONS]
    for name, op in _DIVISIONS:
        build = _unsigned_division if op in ("udiv", "urem") else _signed_division
        parts.append(build(name, op))
    return "\n".join(parts)
