"""Assertions, prints, hints and barriers.

    tt.assert %cond, "msg"    cf.assert per element (a loop nest over a block condition), the
                              message and the op's location kept: the CPU back end reports the
                              first failing program at the user's file:line
    tt.print                  a call of a runtime function (below)
    llvm.intr.assume          kept on its scalar condition, for LLVM (`llvm.assume`); on a
                              block condition dropped (LLVM's assume takes one i1)
    ttg.barrier               dropped: a program is one thread on the CPU

`tl.device_print` calls the runtime. Each distinct signature gets a private declaration,
`func.func private @naiad_print_<n>(...)`, and each print becomes

    call @naiad_print_0(%pid_x, %pid_y, %pid_z, %x, %base, %offsets)
        {prefix = " x: ", hex = false, isSigned = array<i32: 1, 0>}
        : (i32, i32, i32, tensor<4xi32>, memref<?xf32>, tensor<4xi64>) -> ()

The operands are the program ids x, y, z (the function's trailing arguments), then each
printed value in order: a scalar or a tensor as it is; a pointer or block of pointers as two
operands, its argument seen as `memref<?xT>` and its offsets in elements (an `i64` or a tensor
of them), whose address is the memref's base plus offset · sizeof(T). The attributes are the
print's own: `prefix` (the text, already holding the separator), `hex` (print the bits), and
`isSigned` (one entry per printed value: whether an integer prints signed). The runtime prints
what the interpreter prints (naiad/runtime/interpreter/printing.py): one line per element,
`pid (x, y, z) idx (i, j){prefix}{value}, {value}...`, or `pid (x, y, z){prefix}` with no value;
i1 values as 0 / 1, floats with six decimals (inf and nan as words), pointers as hex addresses.
"""

from __future__ import annotations

from ...dialects import cf, func, llvm, tt
from ...dialects.ttg import barrier
from ...ir import RankedTensorType
from . import emit
from .conversion import FunctionConversion, converts, is_pointer, pointee
from .emit_memory import flat_view

PRINT_FUNCTION = "naiad_print"


@converts(tt.AssertOp)
def _assert(c: FunctionConversion, op) -> None:
    condition = c.value(op.condition)
    message = op.message.value
    if not isinstance(condition.type, RankedTensorType):
        c.emit(cf.AssertOp(condition, message))
        return

    def body(indices, carried):
        c.emit(cf.AssertOp(emit.extract_element(c, condition, indices), message))
        return []

    emit.loop_nest(c, list(condition.type.shape), [], body)


@converts(tt.PrintOp)
def _print(c: FunctionConversion, op) -> None:
    operands = [c.program[f"pid_{axis}"] for axis in "xyz"]
    for value in op.args:
        if is_pointer(value):
            pointer = c.pointer(value)
            operands += [flat_view(c, pointer.base, pointee(value.type)), pointer.offset]
        else:
            operands.append(c.value(value))
    symbol = c.runtime.declare(PRINT_FUNCTION, [v.type for v in operands])
    attributes = {name: op.attributes[name] for name in ("prefix", "hex", "isSigned")}
    c.emit(func.CallOp(symbol, operands, [], attributes=attributes))


@converts(llvm.AssumeOp)
def _assume(c: FunctionConversion, op) -> None:
    """The hint, for LLVM to fold with (a condition the kernel promises)."""
    if not isinstance(op.cond.type, RankedTensorType):
        c.emit(llvm.AssumeOp(c.value(op.cond)))


@converts(barrier.BarrierOp)
def _drop(c: FunctionConversion, op) -> None:
    """Nothing to do on the CPU (see the module docstring)."""
