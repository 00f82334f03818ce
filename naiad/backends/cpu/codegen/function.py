"""Lowering one `func.func` of the Linalg form to LLVM IR: the state every op lowering shares.

The kernel becomes two LLVM functions:

    internal void @<name>.program(<arguments>, i32 × 6 program ids, ptr scratch, ptr status,
                                  i64 pid, i1 stream, i64 stream_threshold)
    void @<name>(ptr params, i64 pid_begin, i64 pid_end, ptr scratch, ptr status)   (abi.py)

`program` is the body of one program, op by op; the entry point unpacks the parameter block and
calls it for each program id in its range (LLVM inlines it). Values map to llvmlite values
(scalars) or `View`s (memrefs, and tensors once bufferized): bufferization happens by
construction here — each op that makes a new tensor writes a fresh buffer carved from the
per-worker scratch arena at an offset fixed at compile time (`Arena`), so a program allocates
nothing at run time and `scratch_bytes` is known when the kernel is compiled.
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from ....ir import Block, Operation, Value, element_type
from ....ir.float_format import float_to_bits
from ....ir.op_table import OpTable
from ..abi import SCRATCH_ALIGN
from ..lower_scalar.registry import ScalarContext, lower_scalar_op, unsupported
from ..lower_scalar.types import llvm_type
from .snapshots import lower_snapshot
from .store_plan import StorePlan
from .views import View

I8 = ir.IntType(8)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
PTR = ir.PointerType()

OpLowering = Callable[["FunctionLowering", Operation], None]
# The ops on memory, tensors and regions (the scalar ops of arith, math and tt are lowered by
# `lower_scalar`, whose table is its own).
OP_LOWERINGS = OpTable("CPU code generation")
lowers = OP_LOWERINGS.rule  # the decorator: the lowering of the ops it names


# One-element buffers (a scan's running value, a reduction's one-element tensors) live on the
# stack, not in the arena: the arena's buffers are offsets of one pointer, which LLVM cannot
# tell apart from a tile's element at a variable index, so a value stored in one was loaded
# back after every store to the tile (a cumsum's running sum went through memory each
# element: 4 rows of 1M took 15 ms, 1.3 on the stack; torch 1.6); a stack slot is its own
# object, promoted to a register. Larger ones stay in the arena: with 16-lane (64-byte)
# buffers on the stack too, tutorial 05's layer norm ran 10-15 % slower.
STACK_BUFFER_ELEMENTS = 1


class Arena:
    """Compile-time bump allocation of the per-program scratch buffers."""

    def __init__(self):
        self.size = 0

    def allocate(self, nbytes: int) -> int:
        offset = -(-self.size // SCRATCH_ALIGN) * SCRATCH_ALIGN
        self.size = offset + max(int(nbytes), 1)
        return offset


class FunctionLowering:
    """The builder, the value map and the arena of one kernel's `program` function."""

    def __init__(self, module: ir.Module, context: ScalarContext):
        self.module = module
        self.context = context
        self.values: dict[Value, object] = {}
        self.arena = Arena()
        self.builder: ir.IRBuilder | None = None
        self.stack: ir.Block | None = None  # the first block: one-element buffers' slots
        self.scratch: ir.Value | None = None
        self.status: ir.Value | None = None
        self.loop_indices: list[ir.Value] = []  # of the innermost linalg op being lowered
        self.sites: list[tuple] = []  # failure sites (abi.Site) by id
        self.kernel = ""  # the kernel's name, which failure sites carry
        self.fault_info: int | None = None  # scratch offset of a bounds report's values
        self.linear_pid: ir.Value | None = None  # the running program's linear id (i64)
        self.plan = StorePlan()
        self.into: dict[Operation, View] = {}  # generics writing a loop's carried buffer
        self.stream: ir.Value | None = None  # i1: this launch streams its stores (streaming.py)
        self.stream_bytes = 0  # bytes per program of the stores the launch may stream
        self.streamed = False  # a store may stream: publish.py fences the kernel's stores
        self.stream_threshold: ir.Value | None = None  # i64: the bytes a program streams from
        self.loops: list = []  # loops.ForLoop of each enclosing scf.for, innermost last
        self.carried_tiles: dict = {}  # a K loop's dot → its AMX accumulator (amx_carried.py)
        self.lines = None  # the source lines of the instructions (lines.py), with line info

    # -- values

    def value(self, v: Value):
        try:
            return self.values[v]
        except KeyError:
            raise AssertionError(f"internal: {v!r} has no lowered value") from None

    def bind(self, v: Value, lowered) -> None:
        self.values[v] = lowered

    # -- buffers

    def buffer(self, shape, t, element: ir.Type | None = None) -> View:
        """A fresh contiguous scratch buffer for `shape` elements of IR element type `t` (or
        of LLVM type `element`): in the arena, or for STACK_BUFFER_ELEMENTS at most a stack
        slot of the function's entry (see STACK_BUFFER_ELEMENTS)."""
        element = llvm_type(t) if element is None else element
        count = 1
        for n in shape:
            count *= n
        if count <= STACK_BUFFER_ELEMENTS:
            return View.contiguous(self._stack_slot(element, count), element, list(shape))
        offset = self.arena.allocate(count * _bytes(element))
        b = self.builder
        pointer = b.gep(self.scratch, [ir.Constant(I64, offset)], inbounds=True, source_etype=I8)
        return View.contiguous(pointer, element, list(shape))

    def _stack_slot(self, element: ir.Type, count: int) -> ir.Value:
        """`count` elements on the stack, allocated in the function's first block, `stack`
        (where LLVM promotes a slot to registers, and a loop does not grow the stack)."""
        at_entry = ir.IRBuilder(self.stack)
        at_entry.position_before(self.stack.terminator)
        slot = at_entry.alloca(element, size=ir.Constant(I64, count))
        slot.align = SCRATCH_ALIGN  # as an arena buffer's: accesses may rely on it
        slot.type = PTR  # untyped, as the arena's pointers (LLVM's alloca gives a `ptr`)
        return slot

    # -- walking

    def lower_block(self, block: Block) -> None:
        for op in block:
            self.lower_op(op)

    def lower_op(self, op: Operation) -> None:
        if self.lines is None:
            self._lower_op(op)
            return
        builder = self.builder
        before = self.lines.enter(builder, op)
        self._lower_op(op)
        builder.debug_metadata = before

    def _lower_op(self, op: Operation) -> None:
        if op in self.plan.deferred or op in self.plan.skipped:
            return  # lowered at its store, or not needed (store_plan.py)
        snapshot = self.plan.snapshots.get(op)
        if snapshot is not None:  # a load's copy, made only when its mask is partial
            lower_snapshot(self, op, snapshot)
            return
        lowering = OP_LOWERINGS.get(op.name)
        if lowering is not None:
            lowering(self, op)
            return
        if any(hasattr(r.type, "shape") for r in op.results):
            unsupported(op, f"the CPU back end cannot lower '{op.name}' on tensors")
        self.lower_scalar(op)

    def lower_scalar(self, op: Operation) -> None:
        """Lower an op on scalars through `lower_scalar` (its registry)."""
        operands = [self.value(v) for v in op.operands]
        results = lower_scalar_op(self.builder, op, operands, self.context)
        for result, value in zip(op.results, results):
            self.bind(result, value)

    def constant(self, value, t) -> ir.Constant:
        """A scalar constant of IR type `t` in its storage representation."""
        element = llvm_type(t)
        e = element_type(t)
        kind = getattr(e, "kind", None)
        if kind is not None and isinstance(element, ir.IntType):  # f16, bf16, fp8: bits
            return ir.Constant(element, float_to_bits(kind, float(value)))
        if isinstance(element, ir.IntType):
            width = element.width
            return ir.Constant(element, int(value) & ((1 << width) - 1))
        return ir.Constant(element, float(value))


def _bytes(t: ir.Type) -> int:
    if isinstance(t, ir.IntType):
        return max(t.width // 8, 1)
    if isinstance(t, ir.FloatType):
        return 4
    if isinstance(t, ir.DoubleType):
        return 8
    return 8  # pointers
