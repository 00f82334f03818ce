"""Values made from positions and shapes: constants, program ids, `tt.make_range`, and the ops
that only rearrange which register holds what (`splat`, `broadcast`, `expand_dims`,
`reshape`).

A shape op moves no data between threads when the thread bases of its operand and result
layouts agree (indexing.register_map): each result register is a copy of an operand register.
That is the case Triton's layouts produce for these ops (the result layout of `expand_dims` is
the parent of the operand's slice layout; `broadcast` keeps the encoding); any other pair needs
a `ttg.convert_layout` first and is refused.
"""

from __future__ import annotations

from ....errors import InternalError
from ....ir import DenseElementsAttr, RankedTensorType
from .context import Context, lowers, register_count
from .emitter import literal
from .exchanges import constant_table, relayout
from .indexing import emit_thread_coords, layout_of, register_coords, register_map


@lowers("arith.constant")
def _constant(ctx: Context, op) -> None:
    value = op.value
    t = op.result.type
    if isinstance(value, DenseElementsAttr):
        if not value.is_splat:
            constant_table(ctx, op)
            return
        ctx[op.result] = [literal(value.values[0], t)] * register_count(t)
        return
    ctx[op.result] = [literal(value.value, t)]


@lowers("ub.poison")
def _poison(ctx: Context, op) -> None:
    """An undefined value (a path that returns none of a function's values): LLVM's own."""
    ctx[op.result] = ["poison"] * register_count(op.result.type)


def _sreg(ctx: Context, name: str, axis: int) -> str:
    return ctx.em.call("i32", f"llvm.nvvm.read.ptx.sreg.{name}.{'xyz'[axis]}", [], "pid")


@lowers("tt.get_program_id")
def _program_id(ctx: Context, op) -> None:
    ctx[op.result] = [_sreg(ctx, "ctaid", int(op.axis.value))]


@lowers("tt.get_num_programs")
def _num_programs(ctx: Context, op) -> None:
    ctx[op.result] = [_sreg(ctx, "nctaid", int(op.axis.value))]


@lowers("tt.make_range")
def _make_range(ctx: Context, op) -> None:
    """Register r of a thread holds `start + (thread_part ^ register_part(r))`."""
    layout = layout_of(op.result.type)
    (thread,) = emit_thread_coords(ctx.em, layout)
    start = int(op.start.value)
    registers = []
    for (c,) in register_coords(layout):
        value = thread if c == 0 else ctx.em.op(f"xor i32 {thread}, {c}")
        if start:
            value = ctx.em.op(f"add i32 {value}, {start}")
        registers.append(value)
    ctx[op.result] = registers


@lowers("tt.splat")
def _splat(ctx: Context, op) -> None:
    (value,) = ctx[op.src]
    ctx[op.result] = [value] * register_count(op.result.type)


def _moved(ctx: Context, op, transform) -> None:
    """Result registers copied from operand registers through `register_map`."""
    src = layout_of(op.src.type)
    dst = layout_of(op.result.type)
    mapping = register_map(src, dst, transform)
    if mapping is None:  # elements move between threads: through shared memory
        ctx[op.result] = relayout(ctx, op)
        return
    registers = ctx[op.src]
    ctx[op.result] = [registers[r] for r in mapping]


@lowers("tt.broadcast")
def _broadcast(ctx: Context, op) -> None:
    kept = [s != 1 for s in op.src.type.shape]
    _moved(ctx, op, lambda c: tuple(x if k else 0 for x, k in zip(c, kept)))


@lowers("tt.expand_dims")
def _expand_dims(ctx: Context, op) -> None:
    if not isinstance(op.src.type, RankedTensorType):
        raise InternalError("expand_dims of a scalar")
    axis = int(op.axis.value)
    _moved(ctx, op, lambda c: c[:axis] + c[axis + 1 :])


@lowers("tt.reshape")
def _reshape(ctx: Context, op) -> None:
    """A reshape is row-major: coordinates flatten and split again; with power-of-two
    sizes that is a regrouping of bits, hence XOR-linear."""
    src_shape = op.src.type.shape

    def transform(coords):
        flat = 0
        for c, size in zip(coords, op.result.type.shape):
            flat = flat * size + c
        out = []
        for size in reversed(src_shape):
            out.append(flat % size)
            flat //= size
        return tuple(reversed(out))

    _moved(ctx, op, transform)
