"""Functions and control flow: `tt.func` → `func.func`, `tt.return` → `return`, program ids as
trailing arguments, and `scf.for` / `scf.if` / `scf.while` rebuilt with pointers carried as
their offsets (the base of a carried pointer never changes: the pointer analysis checks it).

A kernel's pointer arguments become `memref<*xT>`; every call has been inlined before the
conversion (the CPU back end inlines `noinline` functions too: there is no call overhead worth
keeping on a CPU, and one function per kernel keeps scratch planning simple).
"""

from __future__ import annotations

from ...dialects import arith, cf, func, scf, tt
from ...ir import Block, FunctionType, IntegerAttr, IntegerType, UnrankedMemRefType, Value, is_pointer_like
from .conversion import (
    PROGRAM_ARGUMENTS,
    ConversionError,
    FunctionConversion,
    Pointer,
    converts,
    is_pointer,
    offset_type,
    pointee,
)
from .pointer_analysis import PointerAnalysis

I32 = IntegerType(32)


def argument_type(t):
    """The type a kernel argument of TTIR type `t` takes: pointers become unranked memrefs."""
    return UnrankedMemRefType(pointee(t)) if is_pointer_like(t) else t


def convert_function(old: tt.FuncOp):
    """The `func.func` of one TTIR function."""
    inputs = [argument_type(t) for t in old.signature.inputs]
    if old.signature.results:
        raise ConversionError(
            f"function '{old.sym_name.value}' returns values: only kernels (no results) lower "
            "to Linalg; calls are inlined first"
        )
    signature = FunctionType([*inputs, *([I32] * len(PROGRAM_ARGUMENTS))], [])
    arg_attrs = None
    if old.arg_attrs is not None:
        arg_attrs = [*old.arg_attrs, *([{}] * len(PROGRAM_ARGUMENTS))]
    new = func.FuncOp(
        old.sym_name.value,
        signature,
        visibility=None if old.sym_visibility is None else old.sym_visibility.value,
        arg_attrs=arg_attrs,
    )
    new.location = old.location
    conversion = FunctionConversion(PointerAnalysis())
    block = new.entry_block
    conversion.entry_block = block
    count = len(old.arguments)
    for old_arg, new_arg in zip(old.arguments, block.arguments[:count]):
        if is_pointer(old_arg):
            conversion.bind(old_arg, Pointer(new_arg, _zero_offset(conversion, block)))
        else:
            conversion.bind(old_arg, new_arg)
    for name, arg in zip(PROGRAM_ARGUMENTS, block.arguments[count:]):
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


def _zero_offset(conversion: FunctionConversion, block) -> Value:
    """One `0 : i64` at the top of the function, the offset of every argument pointer."""
    zero = getattr(conversion, "_zero", None)
    if zero is None:
        with conversion.builder.at_end(block):
            zero = conversion.emit(arith.ConstantOp(_i64_attr(0))).result
        conversion._zero = zero
    return zero


def _i64_attr(value: int):
    return IntegerAttr(value, IntegerType(64))


@converts(tt.ReturnOp)
def _return(c: FunctionConversion, op) -> None:
    c.emit(func.ReturnOp([]))


@converts(tt.GetProgramIdOp, tt.GetNumProgramsOp)
def _program(c: FunctionConversion, op) -> None:
    axis = "xyz"[op.axis.value if hasattr(op.axis, "value") else int(op.axis)]
    prefix = "pid" if isinstance(op, tt.GetProgramIdOp) else "num_programs"
    c.bind(op.result, c.program[f"{prefix}_{axis}"])


# -- carried values ------------------------------------------------------------------------


def carried_type(old: Value):
    """What a value carried by a loop or yielded by a region becomes."""
    return offset_type(old.type) if is_pointer(old) else old.type


def carried_value(c: FunctionConversion, old: Value) -> Value:
    return c.pointer(old).offset if is_pointer(old) else c.value(old)


def bind_carried(c: FunctionConversion, old: Value, new: Value) -> None:
    """Bind a loop argument or region result; a pointer gets its base from the analysis."""
    if not is_pointer(old):
        c.bind(old, new)
        return
    base = c.analysis.base_of(old)
    if base is None:
        raise ConversionError(
            "a pointer carried through a loop or an if does not point into one kernel argument "
            f"on every path ({old!r}); such pointers have no lowering to Linalg"
        )
    c.bind(old, Pointer(c.pointer(base).base, new))


@converts(scf.ForOp)
def _for(c: FunctionConversion, op) -> None:
    inits = [carried_value(c, v) for v in op.initArgs]
    loop = c.emit(
        scf.ForOp(c.value(op.lowerBound), c.value(op.upperBound), c.value(op.step), inits)
    )
    _copy_discardable(op, loop)
    body = loop.body
    c.bind(op.induction_var, body.arguments[0])
    for old, new in zip(op.region_iter_args, body.arguments[1:]):
        bind_carried(c, old, new)
    c.convert_block(op.body, body)
    for old, new in zip(op.results, loop.results):
        bind_carried(c, old, new)


@converts(scf.IfOp)
def _if(c: FunctionConversion, op) -> None:
    types = [carried_type(v) for v in op.results]
    new = c.emit(scf.IfOp(c.value(op.condition), types, with_else=op.else_block is not None))
    c.convert_block(op.then_block, new.then_block)
    if op.else_block is not None:
        c.convert_block(op.else_block, new.else_block)
    for old, value in zip(op.results, new.results):
        bind_carried(c, old, value)


@converts(scf.WhileOp)
def _while(c: FunctionConversion, op) -> None:
    inits = [carried_value(c, v) for v in op.inits]
    types = [carried_type(v) for v in op.results]
    new = c.emit(scf.WhileOp(inits, types))
    _copy_discardable(op, new)
    for old, value in zip(op.before.block.arguments, new.before.block.arguments):
        bind_carried(c, old, value)
    c.convert_block(op.before.block, new.before.block)
    for old, value in zip(op.after.block.arguments, new.after.block.arguments):
        bind_carried(c, old, value)
    c.convert_block(op.after.block, new.after.block)
    for old, value in zip(op.results, new.results):
        bind_carried(c, old, value)


@converts(scf.YieldOp)
def _yield(c: FunctionConversion, op) -> None:
    c.emit(scf.YieldOp([carried_value(c, v) for v in op.operands]))


@converts(scf.ConditionOp)
def _condition(c: FunctionConversion, op) -> None:
    c.emit(scf.ConditionOp(c.value(op.condition), [carried_value(c, v) for v in op.args]))


def _copy_discardable(old, new) -> None:
    """Keep loop hints (`tt.num_stages`, `tt.loop_unroll_factor`, ...) for the back end."""
    for name, value in old.attributes.items():
        if name.startswith("tt."):
            new.attributes[name] = value


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
