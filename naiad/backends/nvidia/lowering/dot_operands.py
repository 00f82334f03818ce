"""What both dot lowerings share: finding an operand's register by the element it holds, and
turning operand elements into what the arithmetic consumes (fp8 upcasts, f32 splits into
tf32 or bf16 parts, 32-bit packing for `mma.sync`).

An operand and the accumulator of a dot are laid out so that, in every thread, the rows of A
and the columns of B a thread needs sit at the same thread part of the coordinates as the
accumulator's: the register part alone then says which registers meet in a product
(`register_table`, checked by `check_thread_bases`).
"""

from __future__ import annotations

from ....errors import InternalError
from ....ir import FloatType
from .indexing import register_coords

FP8_KINDS = ("f8E4M3FN", "f8E5M2")
_NAN_F16 = "0xH7E00"
_TWO_POW_8_F16 = "0xH5C00"
PTX_FP8 = {"f8E4M3FN": "e4m3", "f8E5M2": "e5m2"}


def register_table(layout) -> dict[tuple[int, ...], int]:
    """The register part of the coordinates -> the (first) register holding it."""
    table: dict[tuple[int, ...], int] = {}
    for r, coords in enumerate(register_coords(layout)):
        table.setdefault(coords, r)
    return table


def lookup(table: dict, coords: tuple[int, ...], what: str) -> int:
    register = table.get(coords)
    if register is None:
        raise InternalError(f"dot lowering: no register of {what} holds {coords}")
    return register


def check_thread_bases(operand, acc, operand_dims, acc_dims, what: str) -> None:
    """Every lane and warp bit moves the operand's `operand_dims` as the accumulator's
    `acc_dims` (so both hold the same rows / columns in each thread)."""
    for name in ("lane", "warp"):
        mine = [tuple(b[d] for d in operand_dims) for b in operand.bases(name)]
        theirs = [tuple(b[d] for d in acc_dims) for b in acc.bases(name)]
        if mine != theirs:
            raise InternalError(f"dot lowering: {what}'s {name}s do not match the result's")


def fp8_to_f16(em, value: str, kind: str) -> str:
    """An fp8 element (its bits, i8) as an exact f16 value.

    e5m2 is the top byte of an f16. e4m3fn's sign, exponent and mantissa shifted into f16's
    fields read as the value times 2^-8 (the biases differ by 8), denormals included, so one
    multiply by 2^8 restores it; its only NaN pattern (S.1111.111) is made an f16 NaN.
    """
    wide = em.op(f"zext i8 {value} to i16")
    if kind == "f8E5M2":
        return em.op(f"bitcast i16 {em.op(f'shl i16 {wide}, 8')} to half")
    if kind != "f8E4M3FN":
        raise InternalError(f"dot lowering: no upcast of {kind}")
    sign = em.op(f"shl i16 {em.op(f'and i16 {wide}, 128')}, 8")
    magnitude = em.op(f"and i16 {wide}, 127")
    bits = em.op(f"or i16 {sign}, {em.op(f'shl i16 {magnitude}, 7')}")
    scaled = em.op(f"fmul half {em.op(f'bitcast i16 {bits} to half')}, {_TWO_POW_8_F16}")
    is_nan = em.op(f"icmp eq i16 {magnitude}, 127")
    return em.op(f"select i1 {is_nan}, half {_NAN_F16}, half {scaled}")


def fp8_pair_to_f16x2(em, values: list[str], kind: str) -> str:
    """Two fp8 elements (their bits, i8, the first in the low half) as one f16x2 register, by
    one `cvt.rn.f16x2.{e4m3x2,e5m2x2}` (sm_89+, exact): a tenth of the instructions of two
    `fp8_to_f16` and their packing, which an upcast dot pays on every operand word of its loop.
    """
    vector = "poison"
    for i, value in enumerate(values):
        vector = em.op(f"insertelement <2 x i8> {vector}, i8 {value}, i32 {i}")
    pair = em.op(f"bitcast <2 x i8> {vector} to i16")
    text = f"cvt.rn.f16x2.{PTX_FP8[kind]}x2 $0, $1;"
    return em.asm("i32", text, "=r,h", [("i16", pair)], side_effects=False, hint="f16x2")


def to_accumulator(em, value: str, src, acc) -> str:
    """An operand element of IR type `src` in the accumulator's type `acc` (exact: a wider
    float, or an int8 sign-extended), as the FMA dot multiplies it."""
    if isinstance(src, FloatType) and src.kind in FP8_KINDS:
        value = fp8_to_f16(em, value, src.kind)
        src = FloatType("f16")
    if src is acc:
        return value
    if isinstance(src, FloatType):
        return em.op(f"fpext {_float(src)} {value} to {_float(acc)}")
    return em.op(f"sext i{src.width} {value} to i{acc.width}")


def _float(t) -> str:
    return {"f16": "half", "bf16": "bfloat", "f32": "float", "f64": "double"}[t.kind]


def tf32_split(em, value: str) -> tuple[str, str]:
    """(big, small) of an f32: big is the value rounded to tf32 (`cvt.rna.tf32.f32`), small
    what is left, so big + small == value exactly; tensor cores read each as tf32."""
    big = em.asm("i32", "cvt.rna.tf32.f32 $0, $1;", "=r,f", [("float", value)], False)
    big = em.op(f"bitcast i32 {big} to float")
    return big, em.op(f"fsub float {value}, {big}")


def bf16_split(em, value: str, parts: int) -> list[str]:
    """An f32 as `parts` bf16 values, largest first, each the rounding of what the earlier
    ones leave (hi = bf16(x), mid = bf16(x - hi), ...)."""
    pieces = []
    rest = value
    for i in range(parts):
        piece = em.op(f"fptrunc float {rest} to bfloat")
        pieces.append(piece)
        if i + 1 < parts:
            rest = em.op(f"fsub float {rest}, {em.op(f'fpext bfloat {piece} to float')}")
    return pieces


def pack32(em, values: list[str], llvm_elem: str) -> str:
    """Elements (of LLVM type `llvm_elem`, 32 bits together) as one i32 register, the first
    in the low bits, as `mma.sync` reads its operand registers."""
    if len(values) == 1:
        return values[0] if llvm_elem == "i32" else em.op(f"bitcast {llvm_elem} {values[0]} to i32")
    vector_type = f"<{len(values)} x {llvm_elem}>"
    vector = "poison"
    for i, value in enumerate(values):
        vector = em.op(f"insertelement {vector_type} {vector}, {llvm_elem} {value}, i32 {i}")
    return em.op(f"bitcast {vector_type} {vector} to i32")


def unpack32(em, register: str, llvm_elem: str, count: int) -> list[str]:
    """The inverse of `pack32` for `count` elements."""
    vector_type = f"<{count} x {llvm_elem}>"
    vector = em.op(f"bitcast i32 {register} to {vector_type}")
    return [em.op(f"extractelement {vector_type} {vector}, i32 {i}") for i in range(count)]
