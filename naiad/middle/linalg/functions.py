"""Functions: `tt.func` → `func.func`, `tt.return` → `return`, program ids as trailing
arguments, and the branches between a function's blocks (an early return's).

A kernel's pointer arguments become `memref<*xT>`; a tensor descriptor argument becomes the
`memref<*xT>` of its base, described by the shape and stride arguments that follow it
(convert_descriptors.py). Every call has been inlined before the conversion (the CPU back end
inlines `noinline` functions too: there is no call overhead worth keeping on a CPU, and one
function per kernel keeps scratch planning simple).
"""

from __future__ import annotations

from ...dialects import arith, cf, func, tt
from ...dialects.tt.types import TensorDescType
from ...ir import (
    Block,
    FunctionType,
    IntegerAttr,
    UnrankedMemRefType,
    Value,
    i32,
    i64,
    is_pointer_like,
)
from .bounds_checks import bind_extents, extent_types
from .control_flow import bind_carried, carried_type, carried_value
from .conversion import (
    PROGRAM_ARGUMENTS,
    FunctionConversion,
    Pointer,
    RuntimeFunctions,
    converts,
    fail,
    is_pointer,
    pointee,
)
from .convert_descriptors import bind_descriptor_argument
from .pointer_analysis import PointerAnalysis


def argument_type(t):
    """The type a kernel argument of TTIR type `t` takes: pointers and descriptors become
    unranked memrefs."""
    if isinstance(t, TensorDescType):
        return UnrankedMemRefType(t.element_type)
    return UnrankedMemRefType(pointee(t)) if is_pointer_like(t) else t


def convert_function(old: tt.FuncOp, runtime: RuntimeFunctions, bounds: bool = False):
    """The `func.func` of one TTIR function (with `bounds`, taking the extents of its pointer
    arguments after its own arguments, and checking every access: bounds_checks.py)."""
    inputs = [argument_type(t) for t in old.signature.inputs]
    hidden = extent_types(old) if bounds else []
    if old.signature.results:
        fail(
            old,
            f"function '{old.sym_name.value}' returns values: only kernels (no results) lower "
            "to Linalg; calls are inlined first",
        )
    signature = FunctionType([*inputs, *hidden, *([i32] * len(PROGRAM_ARGUMENTS))], [])
    arg_attrs = None
    if old.arg_attrs is not None:
        arg_attrs = [*old.arg_attrs, *([{}] * (len(hidden) + len(PROGRAM_ARGUMENTS)))]
    new = func.FuncOp(
        old.sym_name.value,
        signature,
        visibility=None if old.sym_visibility is None else old.sym_visibility.value,
        arg_attrs=arg_attrs,
    )
    new.location = old.location
    conversion = FunctionConversion(PointerAnalysis(), runtime)
    block = new.entry_block
    conversion.entry_block = block
    count = len(old.arguments)
    with conversion.builder.at_end(block):
        _bind_arguments(conversion, old, block.arguments[:count])
    bind_extents(conversion, old, block.arguments, block.arguments[count : count + len(hidden)])
    for name, arg in zip(PROGRAM_ARGUMENTS, block.arguments[count + len(hidden) :]):
        conversion.program[name] = arg
    # Blocks after the entry (an early return's branches) take their arguments converted.
    blocks = {old.entry_block: block}
    for old_block in old.body.blocks[1:]:
        new_block = new.body.add_block(Block([carried_type(a) for a in old_block.arguments]))
        blocks[old_block] = new_block
        for old_arg, new_arg in zip(old_block.arguments, new_block.arguments):
            bind_carried(conversion, old_arg, new_arg)
    conversion.blocks = blocks
    for old_block, new_block in blocks.items():
        conversion.convert_block(old_block, new_block)
    return new


def _bind_arguments(c: FunctionConversion, old: tt.FuncOp, arguments) -> None:
    descriptors = []
    for i, (old_arg, new_arg) in enumerate(zip(old.arguments, arguments)):
        if isinstance(old_arg.type, TensorDescType):
            descriptors.append((i, new_arg))  # described by the arguments after it
        elif is_pointer(old_arg):
            c.bind(old_arg, Pointer(new_arg, _zero_offset(c)))
        else:
            c.bind(old_arg, new_arg)
    for i, new_arg in descriptors:
        bind_descriptor_argument(c, old, i, new_arg)


def _zero_offset(c: FunctionConversion) -> Value:
    """One `0 : i64` at the top of the function, the offset of every argument pointer."""
    if c.zero_offset is None:
        c.zero_offset = c.emit(arith.ConstantOp(IntegerAttr(0, i64))).result
    return c.zero_offset


@converts(tt.ReturnOp)
def _return(c: FunctionConversion, op) -> None:
    c.emit(func.ReturnOp([]))


@converts(tt.GetProgramIdOp, tt.GetNumProgramsOp)
def _program(c: FunctionConversion, op) -> None:
    axis = "xyz"[op.axis.value if hasattr(op.axis, "value") else int(op.axis)]
    prefix = "pid" if isinstance(op, tt.GetProgramIdOp) else "num_programs"
    c.bind(op.result, c.program[f"{prefix}_{axis}"])


@converts(cf.BranchOp)
def _branch(c: FunctionConversion, op) -> None:
    operands = [carried_value(c, v) for v in op.destOperands]
    c.emit(cf.BranchOp(c.blocks[op.dest], operands))


@converts(cf.CondBranchOp)
def _cond_branch(c: FunctionConversion, op) -> None:
    c.emit(
        cf.CondBranchOp(
            c.value(op.condition),
            c.blocks[op.trueDest],
            c.blocks[op.falseDest],
            [carried_value(c, v) for v in op.trueDestOperands],
            [carried_value(c, v) for v in op.falseDestOperands],
        )
    )
