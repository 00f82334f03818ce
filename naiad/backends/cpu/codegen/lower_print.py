"""`device_print`: the middle layer's `call @naiad_print_<n>(pid x, y, z, values...)` (see
naiad/middle/linalg/convert_debug.py) as a gather of the printed elements into scratch slots and
one call of the runtime's print callback (naiad/backends/cpu/printing.py says the format)."""

from __future__ import annotations

import json

from llvmlite import ir

from ....ir import MemRefType, RankedTensorType, element_type
from ....middle.linalg.bounds_checks import INFO_FUNCTION, VIEW_FUNCTION
from ....middle.linalg.convert_polling import CLOCK_FUNCTION
from ..lower_scalar.float_bits import decode_to_f32
from ..lower_scalar.types import FORMATS, llvm_type
from ..printing import SYMBOL
from .failures import fault_info, view_info
from .function import I32, I64, PTR, FunctionLowering, lowers
from .loops import loop_nest
from .lower_clock import clock_ns
from .views import View

_PREFIX = "naiad_print"
_PRINT_TYPE = ir.FunctionType(ir.VoidType(), [PTR, I32, I32, I32, PTR])


def _printed(op) -> list:
    """(value, kind, offsets) per printed value: a pointer is a memref and its offsets."""
    operands = list(op.operands[3:])
    printed = []
    i = 0
    while i < len(operands):
        value = operands[i]
        if isinstance(value.type, MemRefType):
            printed.append((value, "ptr", operands[i + 1]))
            i += 2
        else:
            printed.append((value, str(element_type(value.type)), None))
            i += 1
    return printed


def _slot(fl: FunctionLowering, element: ir.Value, kind: str, signed: bool, hex_bits: bool):
    """One printed element as an i64 slot (printing.py)."""
    b = fl.builder
    t = element.type
    if isinstance(t, ir.IntType):
        if kind in FORMATS and not hex_bits:  # a 16/8-bit float held as its bits
            element = b.fpext(decode_to_f32(b, element, FORMATS[kind]), ir.DoubleType())
            return b.bitcast(element, I64)
        if t.width == 64:
            return element
        return b.sext(element, I64) if signed and not hex_bits else b.zext(element, I64)
    if hex_bits:
        bits = b.bitcast(element, ir.IntType(32 if t == ir.FloatType() else 64))
        return bits if bits.type.width == 64 else b.zext(bits, I64)
    wide = element if t == ir.DoubleType() else b.fpext(element, ir.DoubleType())
    return b.bitcast(wide, I64)


@lowers("func.call")
def _call(fl: FunctionLowering, op) -> None:
    callee = op.callee.root if hasattr(op.callee, "root") else str(op.callee)
    if callee.startswith(INFO_FUNCTION):  # a failing bounds check's report (failures.py)
        fault_info(fl, op)
        return
    if callee.startswith(VIEW_FUNCTION):
        view_info(fl, op)
        return
    if callee.startswith(CLOCK_FUNCTION):
        clock_ns(fl, op)
        return
    if not callee.startswith(_PREFIX):
        from ..lower_scalar.registry import unsupported

        unsupported(op, f"the CPU back end cannot call '{callee}'")
    printed = _printed(op)
    hex_bits = bool(op.attributes["hex"].value)
    signed = list(op.attributes["isSigned"].values) if "isSigned" in op.attributes else []
    signed += [1] * (len(printed) - len(signed))
    shapes = {tuple(v.type.shape) for v, _, off in printed if isinstance(v.type, RankedTensorType)}
    shapes |= {
        tuple(off.type.shape)
        for _, _, off in printed
        if off is not None and isinstance(off.type, RankedTensorType)
    }
    shape = list(max(shapes, key=len)) if shapes else []
    site = {
        "prefix": op.attributes["prefix"].value,
        "hex": hex_bits,
        "kinds": [kind for _, kind, _ in printed],
        "signed": [bool(s) for s in signed],
        "shape": shape,
    }
    count = 1
    for n in shape:
        count *= n
    slots = fl.buffer([max(count * len(printed), 1)], None, element=I64)
    b = fl.builder
    with loop_nest(b, shape) as indices:
        for k, (value, kind, offsets) in enumerate(printed):
            element = _element(fl, value, offsets, kind, indices)
            position = _linear(b, shape, indices, len(printed), k)
            View(slots.pointer, I64, 0, [count * len(printed)], [1]).store(
                b, _slot(fl, element, kind, bool(signed[k]), hex_bits), [position]
            )
    text = json.dumps(site, sort_keys=True).encode() + b"\0"
    constant = ir.Constant(ir.ArrayType(ir.IntType(8), len(text)), bytearray(text))
    storage = ir.GlobalVariable(fl.module, constant.type, fl.module.get_unique_name("print_site"))
    storage.global_constant = True
    storage.linkage = "internal"
    storage.initializer = constant
    function = fl.module.globals.get(SYMBOL) or ir.Function(fl.module, _PRINT_TYPE, SYMBOL)
    pids = [fl.value(v) for v in op.operands[:3]]
    b.call(function, [storage, *pids, slots.pointer])


def _element(fl, value, offsets, kind, indices):
    b = fl.builder
    if kind == "ptr":
        base = fl.value(value).pointer
        offset = fl.value(offsets)
        offset = offset.load(b, indices) if isinstance(offset, View) else offset
        size = ir.Constant(I64, _bytes(value.type.element_type))
        return b.add(b.ptrtoint(base, I64), b.mul(offset, size))
    lowered = fl.value(value)
    return lowered.load(b, indices) if isinstance(lowered, View) else lowered


def _bytes(t) -> int:
    lt = llvm_type(t)
    if isinstance(lt, ir.IntType):
        return max(lt.width // 8, 1)
    return 4 if lt == ir.FloatType() else 8


def _linear(b, shape, indices, width: int, k: int):
    position = ir.Constant(I64, 0)
    for size, index in zip(shape, indices):
        position = b.add(b.mul(position, ir.Constant(I64, size)), index)
    return b.add(b.mul(position, ir.Constant(I64, width)), ir.Constant(I64, k))
