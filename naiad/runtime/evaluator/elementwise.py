"""Elementwise ops (arith, math, tt): the interpreter's meanings, with the op's signedness.

Every meaning comes from the interpreter: its builder's `elementwise` (the table of
`interpreter/elementwise.py`: GPU answers for division by zero, shifts, min/max, fma, clamp,
pointer arithmetic), `floats.convert` for every conversion, and libdevice's `call` for
`tt.extern_elementwise`. This module only picks, per op, how to see the signless operands
(values.py) and which language dtype to hand over. The few ops the language never emits (math
functions it reaches through libdevice, `ceildivsi`, `ctpop`, ...) are defined here on top of the
same pieces and say so.
"""

from __future__ import annotations

import numpy as np

from ...dialects.arith.attributes import RoundingMode
from ...dialects.math import LIBDEVICE_LIBM_STEMS
from ...dialects.tt.attributes import PropagateNan
from ...dialects.tt.attributes import RoundingMode as TTRoundingMode
from ...ir import IntegerType, element_type
from ...language import dtypes as t
from ...language.extra.libdevice_signatures import FUNCTIONS
from ..interpreter import floats
from ..interpreter.libdevice import call as libdevice_call
from .errors import UnsupportedOpError, handles
from .values import (
    canonical,
    float_name,
    host_dtype,
    int_width,
    lang_type,
    signed,
    unsigned,
    view_dtype,
)

# -- integer and float arithmetic ------------------------------------------------------------------
_NEUTRAL = ("arith.addi", "arith.subi", "arith.muli", "arith.andi", "arith.ori", "arith.xori")
_FLOAT = (
    "arith.addf",
    "arith.subf",
    "arith.mulf",
    "arith.divf",
    "arith.remf",
    "arith.negf",
    "arith.maximumf",
    "arith.minimumf",
    "arith.maxnumf",
    "arith.minnumf",
    "tt.precise_divf",
    "tt.precise_sqrt",
    "math.fma",
    "math.exp",
    "math.exp2",
    "math.log",
    "math.log2",
    "math.sin",
    "math.cos",
    "math.sqrt",
    "math.rsqrt",
    "math.erf",
    "math.floor",
    "math.ceil",
    "math.absf",
    "math.absi",
    "tt.mulhiui",  # the interpreter reads the operands' bits as unsigned itself
)


@handles(*_NEUTRAL, *_FLOAT, "arith.select", "tt.addptr", "tt.int_to_ptr", "tt.ptr_to_int")
def as_interpreter(ev, op, operands):
    """Ops whose meaning does not depend on signedness: the interpreter's, on canonical values."""
    return ev.builder.elementwise(op.name, operands, lang_type(op.result.type))


@handles("arith.shli", "arith.shrsi", "arith.shrui")
def shift(ev, op, operands):
    a, b = operands
    if int_width(op.result.type) == 1:  # shifting an i1 by 1 (its width) or more
        return a if op.name == "arith.shrsi" else np.where(b, False, a)
    # The interpreter's _shift reads the shift amount unsigned and the kind from the op name.
    return ev.builder.elementwise(op.name, operands, lang_type(op.result.type))


_SIGNED = ("arith.divsi", "arith.remsi", "arith.maxsi", "arith.minsi")
_UNSIGNED = ("arith.divui", "arith.remui", "arith.maxui", "arith.minui")


@handles(*_SIGNED, *_UNSIGNED)
def signed_binary(ev, op, operands):
    """The interpreter's op on the operands seen with the op's signedness."""
    return _with_sign(ev, op.name, operands, op.result.type, op.name.endswith("ui"))


def _with_sign(ev, name, operands, ir_type, is_unsigned: bool):
    width = int_width(ir_type)
    view = unsigned if is_unsigned else signed
    ty = view_dtype(ir_type, is_unsigned)
    result = ev.builder.elementwise(name, [view(x, width) for x in operands], ty)
    return canonical(result, width)


@handles("arith.ceildivsi", "arith.ceildivui", "arith.floordivsi")
def rounded_division(ev, op, operands):
    """MLIR's rounded divisions (the language never emits them): the truncating quotient and
    remainder of the interpreter, moved by one where the remainder is not zero."""
    is_unsigned = op.name == "arith.ceildivui"
    suffix = "ui" if is_unsigned else "si"
    q = _with_sign(ev, f"arith.div{suffix}", operands, op.result.type, is_unsigned)
    r = _with_sign(ev, f"arith.rem{suffix}", operands, op.result.type, is_unsigned)
    width = int_width(op.result.type)
    a, b = (signed(x, width) for x in operands)
    inexact = r != 0
    if op.name == "arith.floordivsi":
        step = np.where(inexact & ((a < 0) != (b < 0)), -1, 0)
    elif is_unsigned:
        step = np.where(inexact, 1, 0)
    else:
        step = np.where(inexact & ((a < 0) == (b < 0)), 1, 0)
    quotient = (unsigned if is_unsigned else signed)(q, width)
    return canonical(quotient + step.astype(quotient.dtype), width)


@handles("arith.cmpi")
def cmpi(ev, op, operands):
    predicate = op.predicate_name
    width = int_width(op.lhs.type)
    view = {"u": unsigned, "s": signed}.get(predicate[0], lambda x, w: np.asarray(x))
    a, b = (view(x, width) for x in operands)
    return ev.builder.elementwise(
        "arith.cmpi", [a, b], lang_type(op.result.type), predicate=predicate
    )


# The unordered comparisons the interpreter's table lacks: each is the negated ordered opposite.
_UNORDERED = {"ueq": "one", "ugt": "ole", "uge": "olt", "ult": "oge", "ule": "ogt"}


@handles("arith.cmpf")
def cmpf(ev, op, operands):
    predicate = op.predicate_name
    ty = lang_type(op.result.type)
    if predicate in ("false", "true"):
        return np.full(np.shape(operands[0]), predicate == "true")
    if predicate in _UNORDERED:
        ordered = ev.builder.elementwise(
            "arith.cmpf", operands, ty, predicate=_UNORDERED[predicate]
        )
        return ~ordered
    return ev.builder.elementwise("arith.cmpf", operands, ty, predicate=predicate)


@handles("tt.clampf")
def clampf(ev, op, operands):
    propagate = PropagateNan.keyword(op.propagateNan) == "all"
    return ev.builder.elementwise(
        "tt.clampf", operands, lang_type(op.result.type), propagate_nan=propagate
    )


# -- conversions -----------------------------------------------------------------------------------
def _name(ir_type, is_unsigned: bool = False) -> str:
    return view_dtype(ir_type, is_unsigned).name if int_width(ir_type) > 1 else "int1"


@handles("arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast", "arith.index_castui")
def int_to_int(ev, op, operands):
    (x,) = operands
    src, dst = op.in_.type, op.out.type
    src_width, dst_width = int_width(src), int_width(dst)
    if dst_width == 1:  # truncation keeps the low bit
        return canonical(np.asarray(x) & 1, 1)
    zero_extend = op.name in ("arith.extui", "arith.index_castui")
    if src_width == 1:
        x = unsigned(x, 1) if zero_extend else signed(x, 1)
    elif zero_extend:
        x = unsigned(x, src_width)
    return canonical(np.asarray(x).astype(f"int{dst_width}"), dst_width)


@handles("arith.sitofp", "arith.uitofp")
def int_to_float(ev, op, operands):
    src = op.in_.type
    is_unsigned = op.name == "arith.uitofp"
    width = int_width(src)
    x = (unsigned if is_unsigned else signed)(operands[0], width)
    return floats.convert(x, view_dtype(src, is_unsigned).name, float_name(op.out.type))


@handles("arith.fptosi", "arith.fptoui")
def float_to_int(ev, op, operands):
    dst = op.out.type
    is_unsigned = op.name == "arith.fptoui"
    name = _name(dst, is_unsigned)
    return canonical(floats.convert(operands[0], float_name(op.in_.type), name), int_width(dst))


_ARITH_ROUNDING = {"to_nearest_even": "rtne", "toward_zero": "rtz"}


@handles("arith.extf", "arith.truncf", "tt.fp_to_fp")
def float_to_float(ev, op, operands):
    if op.name == "tt.fp_to_fp":
        src, dst = op.src.type, op.result.type
        rounding = "rtne" if op.rounding is None else TTRoundingMode.keyword(op.rounding)
    else:
        src, dst = op.in_.type, op.out.type
        mode = getattr(op, "roundingmode", None)
        keyword = "to_nearest_even" if mode is None else RoundingMode.keyword(mode)
        if keyword not in _ARITH_ROUNDING:
            raise UnsupportedOpError(
                f"the reference evaluator cannot run '{op.name}' rounding {keyword}: the "
                "interpreter's conversions round to nearest even or toward zero"
            )
        rounding = _ARITH_ROUNDING[keyword]
    return floats.convert(operands[0], float_name(src), float_name(dst), rounding)


@handles("arith.bitcast", "tt.bitcast")
def bitcast(ev, op, operands):
    (x,) = operands
    out = op.results[0].type
    if lang_type(out).scalar.is_ptr():
        return ev.builder.elementwise("tt.bitcast", operands, lang_type(out))
    return np.asarray(x).view(host_dtype(out))


# -- math functions the language reaches through libdevice, and integer bit counts -----------------
_LIBDEVICE_STEMS = LIBDEVICE_LIBM_STEMS | {
    "math.trunc": "trunc",
    "math.round": "round",
    "math.roundeven": "rint",
    "math.copysign": "copysign",
}


@handles(*_LIBDEVICE_STEMS)
def libdevice_math(ev, op, operands):
    """libdevice's function of the same name (`__nv_tanhf` on fp32, `__nv_tanh` on fp64);
    narrower floats are computed in fp32 and rounded back, as Triton's libdevice wrappers do."""
    name = float_name(op.result.type)
    stem = _LIBDEVICE_STEMS[op.name]
    if name == "fp64":
        return libdevice_call(f"__nv_{stem}", operands, t.float64)
    wide = [floats.convert(x, name, "fp32") if name != "fp32" else x for x in operands]
    result = libdevice_call(f"__nv_{stem}f", wide, t.float32)
    return result if name == "fp32" else floats.convert(result, "fp32", name)


@handles("math.isnan", "math.isinf")
def float_class(ev, op, operands):
    wide = floats.to_float64(operands[0], float_name(op.operand.type))
    return np.isnan(wide) if op.name == "math.isnan" else np.isinf(wide)


def _bit_length(bits: np.ndarray) -> np.ndarray:
    """Bits needed for each uint64 (0 for 0), by binary search over the shift."""
    length = np.zeros(bits.shape, np.int64)
    for shift in (32, 16, 8, 4, 2, 1):
        big = bits >= np.uint64(1 << shift)
        length += np.where(big, shift, 0)
        bits = np.where(big, bits >> np.uint64(shift), bits)
    return length + (bits > 0)


@handles("math.ctlz", "math.cttz", "math.ctpop")
def bit_count(ev, op, operands):
    width = int_width(op.result.type)
    bits = unsigned(operands[0], width).astype(np.uint64)
    if op.name == "math.ctpop":
        count = np.bitwise_count(bits)
    elif op.name == "math.ctlz":
        count = width - _bit_length(bits)
    else:
        lowest = bits & (~bits + np.uint64(1))
        count = np.where(bits == 0, width, _bit_length(lowest) - 1)
    return canonical(np.asarray(count).astype(np.int64), width)


@handles("math.ipowi")
def ipowi(ev, op, operands):
    """Integer power wrapping around; a negative exponent gives 1 / base**-e truncated (0 unless
    the base is 1 or -1), as MLIR folds it."""
    width = int_width(op.result.type)
    base, exponent = (signed(x, width).astype(np.int64) for x in operands)
    base, exponent = np.broadcast_arrays(base, exponent)
    result = np.ones(base.shape, np.int64)
    power, e = base.copy(), np.abs(exponent)
    with np.errstate(over="ignore"):
        while (e > 0).any():
            result = np.where(e & 1, result * power, result)
            power, e = power * power, e >> 1
    negative = np.where(base == 1, 1, np.where(base == -1, np.where(exponent & 1, -1, 1), 0))
    return canonical(np.where(exponent < 0, negative, result).astype(f"int{max(width, 8)}"), width)


# -- calls out of the IR ---------------------------------------------------------------------------
# symbol -> (argument dtype names, result dtype name), from the language's libdevice table: the
# dtypes say how to see the signless operands (`__nv_umulhi` reads uint32).
_SIGNATURES = {
    symbol: (args, result)
    for function in FUNCTIONS.values()
    for args, symbol, result in function.signatures
}


def _as_declared(x, name: str):
    """An integer operand's bits seen as the dtype libdevice's signature declares."""
    x = np.asarray(x)
    if name in floats.INT_TYPES and name != "int1":
        declared = floats.numpy_dtype(name)
        if declared.itemsize == x.dtype.itemsize and x.dtype.kind in "iu":
            return x.view(declared)
    return x


@handles("tt.extern_elementwise")
def extern_elementwise(ev, op, operands):
    symbol = op.symbol.value
    out = op.result.type
    args, result_name = _SIGNATURES.get(symbol, (None, None))
    if args is not None and len(args) == len(operands):
        operands = [_as_declared(x, name) for x, name in zip(operands, args)]
        ty = t.dtype(result_name)
    else:
        ty = lang_type(out).scalar
    result = libdevice_call(symbol, operands, ty)
    if isinstance(element_type(out), IntegerType):
        return canonical(result, int_width(out))
    return np.asarray(result).astype(host_dtype(out), copy=False)
