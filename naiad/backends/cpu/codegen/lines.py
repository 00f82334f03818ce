"""Source lines in a CPU kernel's LLVM module (backends/debug_info.py says what and why).

    lines = KernelLines(module, func_op, variables, functions)
    lines.attach(program, entry)         # both functions' subprograms
    before = lines.enter(builder, op)    # the instructions built next are `op`'s lines

The program function and the entry point that calls it (and inlines it: it is
`alwaysinline`) each have a subprogram, so that after inlining the program's lines are
inlined at the entry's call, and the object's line table covers the kernel's code.

With `variables`, the kernel's arguments are described where the program starts, and every
Python local of the kernel (`locals_of`, read from its TTIR before the conversion to Linalg,
which keeps few of its values) is a variable of the program's subprogram, a local holding a
program id described by its argument: on the CPU a tensor is a buffer, not a value, and
scalars are folded into the accesses, so most locals show as optimized away.
"""

from __future__ import annotations

from llvmlite import ir

from ....ir import RankedTensorType
from ...debug_info import DebugInfo, Nodes, Token, last_named_ops


class LlvmliteNodes(Nodes):
    """Metadata made with llvmlite's module, which numbers and writes it."""

    def __init__(self, module: ir.Module):
        self.module = module

    def node(self, kind: str, fields: dict, distinct: bool = False):
        operands = {key: _operand(value) for key, value in fields.items()}
        return self.module.add_debug_info(kind, operands, is_distinct=distinct)

    def tuple(self, items: list):
        return self.module.add_metadata(list(items))

    def named(self, name: str, items: list) -> None:
        named = self.module.add_named_metadata(name)
        for item in items:
            named.add(item)

    def flag(self, behaviour: int, key: str, value: int) -> None:
        i32 = ir.IntType(32)
        entry = [ir.Constant(i32, behaviour), key, ir.Constant(i32, value)]
        self.module.add_named_metadata("llvm.module.flags", entry)

    def late_tuple(self):
        # Made apart from `add_metadata`, which shares equal tuples.
        return ir.values.MDValue(self.module, [], name=str(len(self.module.metadata)))

    def fill(self, node, items: list) -> None:
        node.operands = tuple(self.module._fix_metadata_operands(list(items)))


def _operand(value):
    return ir.DIToken(str(value)) if isinstance(value, Token) else value


def locals_of(func) -> list[tuple]:
    """(name, type, location, program axis) of each Python local of a TTIR `func`, its type
    that of its last value (the last op its name locates); the axis where that op is
    `tt.get_program_id` (a program's id is an argument of the CPU's program function), else
    None."""
    found = []
    for name, op in last_named_ops(func).items():
        axis = op.attributes["axis"].value if op.name == "tt.get_program_id" else None
        found.append((name, op.results[0].type, op.location, axis))
    return found


class KernelLines:
    """The debug metadata of one kernel's module."""

    def __init__(self, module: ir.Module, func_op, variables: bool = False, functions=()):
        self.info = DebugInfo(LlvmliteNodes(module), variables, functions=functions)
        name = func_op.sym_name.value
        loc = func_op.location
        self.program = self.info.subprogram(name, f"{name}.program", loc)
        self.entry = self.info.subprogram(name, name, loc)
        self.program_start = self.info.start(loc, self.program)
        self.entry_start = self.info.start(loc, self.entry)
        self.variables = variables
        self._loc = loc

    def attach(self, program: ir.Function, entry: ir.Function) -> None:
        program.set_metadata("dbg", self.program)
        entry.set_metadata("dbg", self.entry)

    def enter(self, builder: ir.IRBuilder, op):
        """Locate what `builder` makes next at `op`; return what it located before."""
        before = builder.debug_metadata
        where = self.info.location(op.location, self.program)
        builder.debug_metadata = self.program_start if where is None else where
        return before

    def describe_arguments(self, builder: ir.IRBuilder, names: list[str], values) -> None:
        """Debug value records of the kernel's arguments, where the program starts."""
        for number, (name, value) in enumerate(zip(names, values), start=1):
            kind = self._llvm_type(value.type)
            if kind is None:
                continue
            variable = self.info.parameter(name, number, self._loc, self.program, kind)
            self._value(builder, value, variable)

    def declare_locals(self, builder: ir.IRBuilder, found: list[tuple], program_ids) -> None:
        """The variables of the kernel's Python locals (`locals_of`); those holding a program
        id get its value (`program_ids`, the program function's x, y, z arguments)."""
        for name, t, loc, axis in found:
            kind = self._ir_type(t)
            if kind is None:
                continue
            variable = self.info.variable(name, loc, self.program, kind)
            if axis is not None:
                self._value(builder, program_ids[axis], variable)

    def finish(self) -> None:
        self.info.finish()

    def _value(self, builder: ir.IRBuilder, value, variable) -> None:
        module = builder.module
        declared = module.globals.get("llvm.dbg.value")
        if declared is None:
            kind = ir.FunctionType(ir.VoidType(), [ir.MetaDataType()] * 3)
            declared = ir.Function(module, kind, "llvm.dbg.value")
        expression = module.add_debug_info("DIExpression", {})
        builder.call(declared, [ir.MetaDataArgument(value), variable, expression])

    def _llvm_type(self, t):
        if isinstance(t, ir.PointerType):
            return self.info.pointer_type(64)
        if isinstance(t, ir.IntType):
            if t.width == 1:
                return self.info.basic_type("i1", 8, "DW_ATE_boolean")
            return self.info.basic_type(f"i{t.width}", t.width, "DW_ATE_signed")
        floats = {
            ir.HalfType: ("fp16", 16),
            ir.FloatType: ("fp32", 32),
            ir.DoubleType: ("fp64", 64),
        }
        for llvm_kind, (name, bits) in floats.items():
            if isinstance(t, llvm_kind):
                return self.info.basic_type(name, bits, "DW_ATE_float")
        return None

    def _ir_type(self, t):
        """The debug type of an IR type: a tensor as an array of its elements."""
        element = t.element_type if isinstance(t, RankedTensorType) else t
        # A descriptor, which has no scalar type of its own, is described as its pointer.
        basic, bits = self.info.scalar_type(element) or (self.info.pointer_type(64), 64)
        if not isinstance(t, RankedTensorType):
            return basic
        count = 1
        for n in t.shape:
            count *= n
        return self.info.array_type(basic, bits, count)
