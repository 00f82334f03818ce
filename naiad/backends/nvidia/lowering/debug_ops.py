"""`tt.print` (vprintf), `tt.assert` (`__assertfail`), `llvm.intr.assume` (`tl.assume`: LLVM's
`llvm.assume` of the condition, every register of a block's) and `ttg.barrier`
(`tl.debug_barrier`).

**Print.** The lines are the interpreter's (naiad/runtime/interpreter/printing.py), one per
element: `pid (0, 0, 0) idx (3, 1) x: 1.500000`. Each element is printed once, by the thread
that holds it first (registers repeating an element and threads holding copies stay silent), so
the GPU prints the interpreter's lines, in some order. Without tensor operands every thread
prints the line, as Triton's GPU does (128 lines for 4 warps; Triton's tests count them), where
the interpreter and the CPU print it once a program, as Triton's interpreter does. Several
operands print operand by operand (backends/print_format.py). Formats: integers `%d` / `%u`
(`%lld` / `%llu` at 64 bits), floats `%f` (vprintf promotes them to double, as C's varargs
do), `hex` prints the bits zero-padded (`0x%08x`), pointers `0x%llx`. vprintf takes the format
and a buffer holding the arguments at their natural alignment.

**Assert.** A thread some of whose elements fail calls CUDA's `__assertfail(message, file,
line, function, 1)` with the op's location (the user's `file:line`) and the kernel's name: the
device prints `file:line: function: ... Assertion `message` failed.` and the launch fails with
an illegal-instruction error (the context is unusable after it, as after any device assert).
"""

from __future__ import annotations

from ....dialects.tt.types import PointerType
from ....ir import FloatType, RankedTensorType
from ....ir.locations import file_line_col
from ...print_format import index_widths, operand_labels
from .context import Context, lowers
from .convert import row_major
from .emitter import element_of, llvm_type
from .exchanges import exchange
from .guards import predicated
from .indexing import emit_thread_coords, layout_of, register_coords, unique_registers
from .memory import store_predicate

_I8_PTR = "ptr"


def string_constant(ctx: Context, text: str, hint: str) -> str:
    """A generic pointer to a NUL-terminated copy of `text` in global memory (one global per
    distinct text)."""
    key = ("string", text)
    if key in ctx.em.cache:
        return ctx.em.cache[key]
    data = text.encode() + b"\0"
    name = f"@{hint}{len(ctx.em.declarations)}"
    body = "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\{b:02X}" for b in data)
    ctx.em.declare(
        name, f'{name} = internal addrspace(1) constant [{len(data)} x i8] c"{body}", align 1'
    )
    pointer = ctx.em.entry_op(f"addrspacecast ptr addrspace(1) {name} to ptr", "str")
    ctx.em.cache[key] = pointer
    return pointer


def _spec(t, hex: bool, signed: bool) -> tuple[str, str]:
    """(printf conversion, LLVM type vprintf reads) of one value of scalar type `t`."""
    scalar = element_of(t)
    if isinstance(scalar, PointerType):
        return "0x%llx", "i64"
    width = scalar.width
    if hex:
        return (
            (f"0x%0{max(width // 4, 2)}llx", "i64")
            if width == 64
            else (
                f"0x%0{max(width // 4, 2)}x",
                "i32",
            )
        )
    if isinstance(scalar, FloatType):
        return "%f", "double"
    letter = "d" if signed and width > 1 else "u"
    return ("%ll" + letter, "i64") if width == 64 else ("%" + letter, "i32")


def _argument(ctx: Context, value: str, t, hex: bool, signed: bool) -> tuple[str, str]:
    """`value` as vprintf reads it: (LLVM type, value)."""
    em = ctx.em
    _, kind = _spec(t, hex, signed)
    source = llvm_type(t)
    scalar = element_of(t)
    if isinstance(scalar, PointerType):
        return kind, em.op(f"ptrtoint {source} {value} to i64")
    if hex and isinstance(scalar, FloatType):
        value = em.op(f"bitcast {source} {value} to i{scalar.width}")
        source = f"i{scalar.width}"
    if kind == "double":
        return kind, value if source == "double" else em.op(f"fpext {source} {value} to double")
    width = int(source[1:])
    target = int(kind[1:])
    if width == target:
        return kind, value
    extend = "sext" if signed and not hex and width > 1 else "zext"
    return kind, em.op(f"{extend} {source} {value} to {kind}")


def _vprintf(ctx: Context, fmt: str, args: list[tuple[str, str]]) -> None:
    """`vprintf(fmt, &args)`, the arguments packed at their natural alignment."""
    em = ctx.em
    offsets, size = [], 0
    for kind, _ in args:
        width = 8 if kind in ("i64", "double") else 4
        size = (size + width - 1) // width * width
        offsets.append(size)
        size += width
    buffer = "null"
    if args:
        buffer = em.entry_op(f"alloca [{size} x i8], align 8", "printf.args")
        for (kind, value), offset in zip(args, offsets):
            slot = em.op(f"getelementptr inbounds i8, ptr {buffer}, i32 {offset}")
            em.emit(f"store {kind} {value}, ptr {slot}, align {8 if kind != 'i32' else 4}")
    pointer = string_constant(ctx, fmt, "printf.fmt")
    em.call("i32", "vprintf", [(_I8_PTR, pointer), (_I8_PTR, buffer)])


def _program_ids(ctx: Context) -> list[tuple[str, str]]:
    return [
        ("i32", ctx.em.call("i32", f"llvm.nvvm.read.ptx.sreg.ctaid.{axis}", [], "pid"))
        for axis in "xyz"
    ]


def _in_layout(ctx: Context, value, t) -> list[str]:
    """The registers of `value` in the layout of tensor type `t` (the first tensor printed):
    through the scratch when its own layout differs."""
    if not isinstance(value.type, RankedTensorType) or value.type.encoding == t.encoding:
        return ctx[value]
    target = value.type.clone(encoding=t.encoding)
    return exchange(
        ctx, [(ctx[value], value.type)], target, lambda coords, _: row_major(ctx, coords, t.shape)
    )


@lowers("tt.print")
def _print(ctx: Context, op) -> None:
    prefix = op.prefix.value.replace("%", "%%")
    hex = bool(op.hex.value)
    signed = [bool(s) for s in op.isSigned.values] if op.args else []
    tensors = [v for v in op.args if isinstance(v.type, RankedTensorType)]
    # One format per operand, each operand on lines of its own (backends/print_format.py).
    specs = [
        f"{label}{_spec(v.type, hex, s)[0]}"
        for label, v, s in zip(operand_labels(len(op.args)), op.args, signed)
    ]
    if not tensors:
        index = " idx ()" if op.args else ""

        def emit():
            pids = _program_ids(ctx)
            if not op.args:
                _vprintf(ctx, f"pid (%u, %u, %u){prefix}\n", pids)
            for v, s, spec in zip(op.args, signed, specs):
                value = _argument(ctx, ctx[v][0], v.type, hex, s)
                _vprintf(ctx, f"pid (%u, %u, %u){index}{prefix}{spec}\n", [*pids, value])

        emit()  # by every thread, as Triton's GPU prints a scalar (module doc)
        return
    t = tensors[0].type
    held = {v: _in_layout(ctx, v, t) for v in op.args}
    layout = layout_of(t)
    rank = len(t.shape)
    index = ", ".join(f"%{width}u" for width in index_widths(t.shape))
    thread = emit_thread_coords(ctx.em, layout)
    coords = register_coords(layout)

    def emit():
        pids = _program_ids(ctx)
        for v, s, spec in zip(op.args, signed, specs):
            fmt = f"pid (%u, %u, %u) idx ({index}){prefix}{spec}\n"
            for r in unique_registers(layout):
                element = [
                    (
                        "i32",
                        ctx.em.op(f"xor i32 {thread[d]}, {coords[r][d]}")
                        if coords[r][d]
                        else thread[d],
                    )
                    for d in range(rank)
                ]
                held_r = held[v][r] if len(held[v]) > 1 else held[v][0]
                _vprintf(ctx, fmt, [*pids, *element, _argument(ctx, held_r, v.type, hex, s)])

    predicated(ctx, store_predicate(ctx, t, "true"), emit, "print")


def _function_name(op) -> str:
    """The name of the kernel `op` is in."""
    while op is not None and op.name != "tt.func":
        op = op.parent_op()
    return op.sym_name.value if op is not None else "<kernel>"


@lowers("tt.assert")
def _assert(ctx: Context, op) -> None:
    em = ctx.em
    held = ctx[op.condition]
    t = op.condition.type
    registers = unique_registers(layout_of(t)) if isinstance(t, RankedTensorType) else [0]
    ok = held[registers[0]]
    for r in registers[1:]:
        ok = em.op(f"and i1 {ok}, {held[r]}")
    failed = em.op(f"xor i1 {ok}, true")
    where = file_line_col(op.location)
    filename, line = (where.filename, where.line) if where is not None else ("<unknown>", 0)
    message = string_constant(ctx, op.message.value, "assert.msg")
    file = string_constant(ctx, filename, "assert.file")
    function = string_constant(ctx, _function_name(op), "assert.func")
    args = [(_I8_PTR, message), (_I8_PTR, file), ("i32", str(line)), (_I8_PTR, function)]
    predicated(
        ctx,
        failed,
        lambda: em.call("void", "__assertfail", [*args, ("i64", "1")]),
        "assert",
    )


@lowers("llvm.intr.assume")
def _assume(ctx: Context, op) -> None:
    held = ctx[op.cond]
    t = op.cond.type
    registers = unique_registers(layout_of(t)) if isinstance(t, RankedTensorType) else [0]
    for r in registers:
        ctx.em.call("void", "llvm.assume", [("i1", held[r])])


@lowers("ttg.barrier", "gpu.barrier")
def _barrier(ctx: Context, op) -> None:
    ctx.em.barrier()
