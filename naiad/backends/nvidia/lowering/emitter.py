"""Writing LLVM IR text: fresh SSA names, blocks, declarations, constants and inline PTX.

The lowering writes LLVM IR as text rather than through `llvmlite.ir`: building the text is a
fraction of the cost, and inline assembly, intrinsics and metadata are spelled exactly as they
appear in LLVM's own dumps. `ptx.py` parses and verifies the result before code generation.

Two streams of instructions: `entry` (values every block may use - the thread index and the
thread part of each layout's coordinates - placed at the top of the entry block so they
dominate the whole function) and `body` (the function in program order).
"""

from __future__ import annotations

import struct

from ....dialects.tt.types import PointerType
from ....errors import InternalError
from ....ir import FloatType, IntegerType, RankedTensorType
from ....ir.float_format import float_to_bits, round_float

_FLOAT_TYPES = {"f16": "half", "bf16": "bfloat", "f32": "float", "f64": "double"}
GLOBAL_PTR = "ptr addrspace(1)"
SHARED_PTR = "ptr addrspace(3)"  # 32 bits wide (target.py's data layout): "r" in inline asm
SHARED_BASE = "@global_smem"


def element_of(t):
    """The scalar type of a tensor type's elements, or `t` itself for a scalar."""
    return t.element_type if isinstance(t, RankedTensorType) else t


def llvm_type(t) -> str:
    """The LLVM type of one element of IR type `t` (a scalar or a tensor's element)."""
    t = element_of(t)
    if isinstance(t, IntegerType):
        return f"i{t.width}"
    if isinstance(t, FloatType):
        if t.kind in _FLOAT_TYPES:
            return _FLOAT_TYPES[t.kind]
        return f"i{t.width}"  # fp8 formats travel as their bits
    if isinstance(t, PointerType):
        return "ptr" if t.address_space == 0 else f"ptr addrspace({t.address_space})"
    raise InternalError(f"no LLVM type for {t}")


def bit_width(t) -> int:
    """Bits of one element in memory (i1 and pointers as stored: a byte, 64 bits)."""
    t = element_of(t)
    if isinstance(t, PointerType):
        return 64
    if isinstance(t, IntegerType) and t.width == 1:
        return 8
    return t.width


def memory_type(t) -> str:
    """How an element sits in memory, global or shared: i1 as a byte, pointers as i64."""
    kind = llvm_type(t)
    if kind == "i1":
        return "i8"
    if kind.startswith("ptr"):
        return "i64"
    return kind


def to_memory(em, value: str, t) -> str:
    """`value` (an element of type `t`) as memory holds it (`memory_type`)."""
    kind = llvm_type(t)
    if kind == "i1":
        return em.op(f"zext i1 {value} to i8")
    if kind.startswith("ptr"):
        return em.op(f"ptrtoint {kind} {value} to i64")
    return value


def from_memory(em, value: str, t) -> str:
    """The element of type `t` that `value`, as memory holds it, stands for."""
    kind = llvm_type(t)
    if kind == "i1":
        return em.op(f"icmp ne i8 {value}, 0")
    if kind.startswith("ptr"):
        return em.op(f"inttoptr i64 {value} to {kind}")
    return value


def float_literal(value: float, kind: str) -> str:
    """An LLVM float constant written by its bits, so that every value round-trips."""
    if kind in ("f32", "f64"):
        # LLVM spells float and double constants as the 64-bit pattern of the double, which
        # for a float must be exactly a float.
        (bits,) = struct.unpack("<Q", struct.pack("<d", round_float(kind, float(value))))
        return f"0x{bits:016X}"
    if kind == "f16":
        return f"0xH{float_to_bits(kind, value):04X}"
    if kind == "bf16":
        return f"0xR{float_to_bits(kind, value):04X}"
    return str(float_to_bits(kind, value))  # fp8: the integer of its bits


def literal(value, t) -> str:
    """An LLVM constant of scalar IR type `t`."""
    t = element_of(t)
    if isinstance(t, FloatType):
        return float_literal(value, t.kind)
    if isinstance(t, IntegerType):
        if t.width == 1:
            return "true" if value else "false"
        value = int(value) & ((1 << t.width) - 1)
        return str(value - (1 << t.width) if value >> (t.width - 1) else value)
    raise InternalError(f"no LLVM literal of type {t}")


def asm_text(text: str) -> str:
    """PTX text as an LLVM string (quotes and line breaks escaped)."""
    return text.replace("\\", "\\5C").replace('"', "\\22").replace("\n", "\\0A")


class Emitter:
    """The text of one LLVM function under construction, and the module-level declarations it
    needs."""

    def __init__(self):
        self.entry: list[str] = []
        self.body: list[str] = []
        self.declarations: dict[str, str] = {}
        self.block = "entry"
        self._count = 0
        self.cache: dict = {}  # per-function values keyed by what they compute (entry stream)
        self.partition_barrier = None  # (id, threads) inside a warp-specialized partition
        self.scratch_base = 0  # where the scratch of the op being lowered starts (context.py)
        # `, !dbg !N` that ends every instruction line: the source line of the op being
        # lowered (body), of the kernel's `def` (entry); empty without line info (lines.py).
        self.dbg = ""
        self.entry_dbg = ""

    def fresh(self, hint: str = "v") -> str:
        self._count += 1
        return f"%{hint}{self._count}"

    def label(self, hint: str) -> str:
        self._count += 1
        return f"{hint}{self._count}"

    def emit(self, text: str) -> None:
        self.body.append("  " + text + self.dbg)

    def op(self, text: str, hint: str = "v") -> str:
        """Emit `<name> = text` in the body and return the name."""
        name = self.fresh(hint)
        self.body.append(f"  {name} = {text}{self.dbg}")
        return name

    def entry_op(self, text: str, hint: str = "t") -> str:
        """Emit `<name> = text` at the top of the entry block."""
        name = self.fresh(hint)
        self.entry.append(f"  {name} = {text}{self.entry_dbg}")
        return name

    def record(self, text: str) -> None:
        """A debug record (`#dbg_value(...)`): it annotates the instruction after it."""
        self.body.append("    " + text)

    def start_block(self, name: str) -> None:
        self.body.append(f"{name}:")
        self.block = name

    def placeholder(self) -> int:
        """Reserve a body line (a phi whose incoming values are known later)."""
        self.body.append("")
        return len(self.body) - 1

    def fill(self, index: int, text: str) -> None:
        self.body[index] = "  " + text

    def declare(self, name: str, text: str) -> None:
        self.declarations.setdefault(name, text)

    def metadata(self, fields: str, distinct: bool = False) -> str:
        """A new metadata node `!N = [distinct ]!{fields}` (`$self` in `fields` names the node
        itself, as a loop's identity does); its name `!N`."""
        self._count += 1
        name = f"!{self._count}"
        text = ("distinct " if distinct else "") + "!{" + fields.replace("$self", name) + "}"
        # Under an `llvm.` key: the declarations that are not call targets (function.py).
        self.declarations[f"llvm.metadata{name}"] = f"{name} = {text}"
        return name

    def metadata_text(self, text: str, distinct: bool = False) -> str:
        """A new metadata node `!N = [distinct ]text`, `text` written out (`!DIFile(...)`,
        `!{...}`); its name `!N`. `set_metadata` rewrites it later."""
        self._count += 1
        name = f"!{self._count}"
        self.set_metadata(name, text, distinct)
        return name

    def set_metadata(self, name: str, text: str, distinct: bool = False) -> None:
        self.declarations[f"llvm.metadata{name}"] = f"{name} = " + ("distinct " * distinct) + text

    def call(self, ret: str, name: str, args: list[tuple[str, str]], hint: str = "v") -> str:
        """Call intrinsic or function `name` (declared on first use) with (type, value) args."""
        arg_types = ", ".join(t for t, _ in args)
        self.declare(name, f"declare {ret} @{name}({arg_types})")
        text = f"call {ret} @{name}(" + ", ".join(f"{t} {v}" for t, v in args) + ")"
        if ret == "void":
            self.emit(text)
            return ""
        return self.op(text, hint)

    def asm(
        self,
        ret: str,
        text: str,
        constraints: str,
        args: list[tuple[str, str]],
        side_effects: bool = True,
        hint: str = "asm",
    ) -> str:
        """Inline PTX; `ret` is `void`, one type, or `{ t, t, ... }` for several outputs."""
        inputs = [c for c in constraints.split(",") if c and not c.startswith("=")]
        for (kind, _), constraint in zip(args, inputs):
            if kind == SHARED_PTR and constraint != "r":
                raise InternalError(f"a shared-memory address is 32-bit, not {constraint!r}")
        effects = " sideeffect" if side_effects else ""
        operands = ", ".join(f"{t} {v}" for t, v in args)
        call = f'call {ret} asm{effects} "{asm_text(text)}", "{constraints}"({operands})'
        if ret == "void":
            self.emit(call)
            return ""
        return self.op(call, hint)

    def tid(self) -> str:
        """This thread's index in the CTA (`tid.x`), read once in the entry block."""
        if "tid" not in self.cache:
            name = "llvm.nvvm.read.ptx.sreg.tid.x"
            self.declare(name, f"declare i32 @{name}()")
            self.cache["tid"] = self.entry_op(f"call i32 @{name}()", "tid")
        return self.cache["tid"]

    def barrier(self) -> None:
        """`bar.sync 0`: every thread of the CTA arrives; shared memory written before is
        visible after. Within a warp-specialized partition (partitions.py), the partition's
        named barrier, which its threads alone reach."""
        if self.partition_barrier is None:
            self.call("void", "llvm.nvvm.barrier0", [])
            return
        barrier_id, threads = self.partition_barrier
        self.asm("void", f"bar.sync {barrier_id}, {threads};", "", [])

    def shared_address(self, byte_offset: str) -> str:
        """The shared-memory address `byte_offset` (an i32 value) bytes into the scratch of
        the op being lowered."""
        self.declare(
            SHARED_BASE, f"{SHARED_BASE} = external addrspace(3) global [0 x i8], align 1024"
        )
        if self.scratch_base:
            byte_offset = self.op(f"add i32 {byte_offset}, {self.scratch_base}")
        return self.op(f"getelementptr inbounds i8, {SHARED_PTR} {SHARED_BASE}, i32 {byte_offset}")
