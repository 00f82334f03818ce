"""A converted kernel (`func.func` in the Linalg form) as an LLVM module with the ABI's entry
point (abi.py): the parameter block unpacked once, then `program` called for each program id
of the range, or, for a grid-stride loop, once per iteration of each in turn (interleave.py),
stopping early when a program has failed."""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from ....ir import FloatType, IndexType, IntegerType, UnrankedMemRefType
from ....llvm_util import ident_strings
from ..abi import GRID_SLOTS, STATUS_CODE_OFFSET, entry_function_type
from ..lower_scalar.registry import ScalarContext
from ..lower_scalar.types import llvm_type
from . import (  # noqa: F401 (register the lowerings)
    lower_atomics,
    lower_control,
    lower_linalg,
    lower_memref,
    lower_print,
    lower_reduce,
    lower_tensor,
)
from .function import I8, I32, I64, PTR, FunctionLowering
from .interleave import grid_stride_loop, lower_iteration
from .lines import KernelLines
from .loops import counted_loop
from .publish import fence, finish
from .store_plan import plan_stores

I1 = ir.IntType(1)

PROGRAM_ARGUMENTS = 6  # num_programs x, y, z and program id x, y, z, trailing (middle layer)
# What the entry point passes a program after those: its scratch arena, the status record, its
# linear id, whether its streamable stores stream, the bytes from which a store in a loop does.
PROGRAM_TAIL = (PTR, PTR, I64, I1, I64)
# And where programs take turns (interleave.py): the iteration to run, where to say if it ran.
TURN_ARGUMENTS = (I64, PTR)


@dataclass
class LoweredKernel:
    """The LLVM module of one kernel and the facts its launcher needs."""

    module: ir.Module
    entry: str
    scratch_bytes: int
    sites: list
    stream_bytes: int  # per program, of the stores the launch's flag streams (streaming.py)


def _argument_type(t) -> ir.Type:
    if isinstance(t, UnrankedMemRefType):
        return PTR
    return llvm_type(t)


def lower_kernel(
    func_op,
    triple: str = "",
    data_layout: str = "",
    features: str = "",
    line_info: bool = False,
    described=None,
    functions=(),
) -> LoweredKernel:
    """The module of `func_op`: `<name>.program` and the entry point `<name>`; `features` (the
    target's) steer the math library's choice of instructions. `line_info` locates the
    instructions at the kernel's lines (lines.py); `described`, (the arguments' names, the
    TTIR's locals: lines.locals_of), describes the kernel's variables too; `functions` are
    the `noinline` functions inlined into it (debug_info.function_ranges)."""
    name = func_op.sym_name.value
    module = ir.Module(name=name)
    if triple:
        module.triple = triple
    if data_layout:
        module.data_layout = data_layout
    inputs = list(func_op.signature.inputs)
    user_inputs = inputs[: len(inputs) - PROGRAM_ARGUMENTS]
    loop = grid_stride_loop(func_op)
    turns = list(TURN_ARGUMENTS) if loop is not None else []
    program_type = ir.FunctionType(
        ir.VoidType(), [_argument_type(t) for t in inputs] + list(PROGRAM_TAIL) + turns
    )
    program = ir.Function(module, program_type, f"{name}.program")
    program.linkage = "internal"
    program.attributes.add("alwaysinline")
    # The scratch arena is the worker's own: nothing else in the program reaches it, so LLVM
    # may keep an argument's memory (a load read in place) apart from the scratch buffers a
    # loop writes, and vectorize the loop without run-time alias checks and a scalar copy.
    program.args[len(inputs)].add_attribute("noalias")
    fl = FunctionLowering(module, ScalarContext(module, features=features))
    fl.plan = plan_stores(func_op)
    fl.kernel = name
    fl.stack, fl.builder = _blocks(program)
    arguments = list(program.args)
    if line_info:
        fl.lines = _start_lines(module, func_op, fl.builder, arguments, described, functions)
    tail = arguments[len(inputs) : len(inputs) + len(PROGRAM_TAIL)]
    fl.scratch, fl.status, fl.linear_pid, fl.stream, fl.stream_threshold = tail
    for value, argument in zip(func_op.entry_block.arguments, arguments):
        fl.bind(value, argument)
    for op in func_op.entry_block:
        if op is loop:  # one iteration a call (interleave.py)
            lower_iteration(fl, loop, *arguments[len(inputs) + len(PROGRAM_TAIL) :])
        else:
            fl.lower_op(op)
    if not fl.builder.block.is_terminated:
        fl.builder.ret_void()
    _entry_point(module, name, program, user_inputs, fl, loop is not None)
    if fl.lines is not None:
        fl.lines.attach(program, module.get_global(name))
        fl.lines.finish()
    finish(module, fl.streamed)
    for text in ident_strings():
        module.add_named_metadata("llvm.ident", [text])
    return LoweredKernel(module, name, fl.arena.size, fl.sites, fl.stream_bytes)


def _start_lines(module, func_op, builder, arguments, described, functions) -> KernelLines:
    """The kernel's lines, the program's first instructions located at its `def`; with
    `described`, its variables and the values of its arguments and program ids there."""
    lines = KernelLines(module, func_op, described is not None, functions)
    builder.debug_metadata = lines.program_start
    if described is not None:
        names, found = described
        lines.describe_arguments(builder, names, arguments[: len(names)])
        inputs = len(func_op.signature.inputs)  # the program ids x, y, z last (abi.py)
        lines.declare_locals(builder, found, arguments[inputs - 3 : inputs])
    return lines


def _entry_point(module: ir.Module, name, program: ir.Function, user_inputs, fl, in_turn: bool):
    """The ABI's entry point. The launch's last slot is the bytes a program's streamable
    stores must write for them to stream (abi.py); `fl.stream_bytes` is what they write with
    each store counted once, the flag every program is passed (streaming.py counts a store in
    a loop by the loop's trips itself). A kernel whose stores may stream publishes them
    before it returns (publish.py). Programs run one after another, or, for a grid-stride
    loop, an iteration of each in turn (`in_turn`, interleave.py)."""
    entry = ir.Function(module, entry_function_type(), name)
    params, begin, end, scratch, status = entry.args
    b = ir.IRBuilder(entry.append_basic_block("entry"))
    if fl.lines is not None:
        b.debug_metadata = fl.lines.entry_start
    slots = [
        b.load(b.gep(params, [ir.Constant(I64, i)], source_etype=I64), typ=I64)
        for i in range(GRID_SLOTS + len(user_inputs) + 1)
    ]
    threshold = slots.pop()  # the last slot (abi.py): 0 never streams
    never = b.icmp_signed("<=", threshold, ir.Constant(I64, 0))
    threshold = b.select(never, ir.Constant(I64, (1 << 63) - 1), threshold)
    stream = b.icmp_signed(">=", ir.Constant(I64, fl.stream_bytes), threshold)
    grid = slots[:GRID_SLOTS]
    arguments = [_unpack(b, slot, t) for slot, t in zip(slots[GRID_SLOTS:], user_inputs)]
    grid32 = [b.trunc(g, I32) for g in grid]
    fixed = (scratch, status)
    code_ptr = b.gep(status, [ir.Constant(I64, STATUS_CODE_OFFSET)], source_etype=I8)

    def run(pid, turn):
        x = b.urem(pid, grid[0])
        rest = b.udiv(pid, grid[0])
        coords = [b.trunc(v, I32) for v in (x, b.urem(rest, grid[1]), b.udiv(rest, grid[1]))]
        b.call(program, [*arguments, *grid32, *coords, *fixed, pid, stream, threshold, *turn])
        failed = b.icmp_signed(
            "!=", b.load_atomic(code_ptr, "monotonic", 4, typ=I32), ir.Constant(I32, 0)
        )
        stop = entry.append_basic_block("stop")
        go_on = entry.append_basic_block("continue")
        b.cbranch(failed, stop, go_on)
        b.position_at_end(stop)
        _return(b, fl.streamed)
        b.position_at_end(go_on)

    if in_turn:
        _in_turn(b, begin, end, run)
    else:
        with counted_loop(b, begin, end, name="pid") as pid:
            run(pid, [])
    _return(b, fl.streamed)


def _blocks(program: ir.Function) -> tuple[ir.Block, ir.IRBuilder]:
    """The program's first block, `stack`, which holds the one-element buffers' stack slots
    (FunctionLowering.buffer) and branches to `entry`, and a builder at `entry`, where the
    lowering starts."""
    stack = program.append_basic_block("stack")
    body = program.append_basic_block("entry")
    ir.IRBuilder(stack).branch(body)
    return stack, ir.IRBuilder(body)


def _in_turn(b: ir.IRBuilder, begin, end, run) -> None:
    """Turn j = 0, 1, ...: iteration j of each program of [begin, end), while any runs one."""
    ran, any_ran = b.alloca(I1), b.alloca(I1)
    before = b.block
    turn = b.function.append_basic_block("turn")
    done = b.function.append_basic_block("turns.done")
    b.branch(turn)
    b.position_at_end(turn)
    j = b.phi(I64, name="j")
    j.add_incoming(ir.Constant(I64, 0), before)
    b.store(ir.Constant(I1, 0), any_ran)
    with counted_loop(b, begin, end, name="pid") as pid:
        run(pid, [j, ran])
        b.store(b.or_(b.load(any_ran, typ=I1), b.load(ran, typ=I1)), any_ran)
    j.add_incoming(b.add(j, ir.Constant(I64, 1)), b.block)
    b.cbranch(b.load(any_ran, typ=I1), turn, done)
    b.position_at_end(done)


def _return(b: ir.IRBuilder, streamed: bool) -> None:
    if streamed:
        fence(b)
    b.ret_void()


def _unpack(b: ir.IRBuilder, slot: ir.Value, t) -> ir.Value:
    """One argument from its 8-byte parameter slot (abi.py says how each kind is stored)."""
    if isinstance(t, UnrankedMemRefType):
        return b.inttoptr(slot, PTR)
    target = llvm_type(t)
    if isinstance(t, IntegerType | IndexType):
        return slot if target.width == 64 else b.trunc(slot, target)
    if isinstance(t, FloatType) and t.kind == "f64":
        return b.bitcast(slot, target)
    if isinstance(t, FloatType):
        bits = b.trunc(slot, ir.IntType(32))
        return b.bitcast(bits, target) if target == ir.FloatType() else b.trunc(bits, target)
    raise TypeError(f"the CPU back end cannot pass an argument of type {t}")
