"""Source lines in the kernel's LLVM IR text (backends/debug_info.py says what and why).

    lines = KernelLines(ctx.em, func, variables)   # the kernel's subprogram, `!dbg` of `def`
    lines.enter(op)          # the lines of `op`'s instructions end with its `!dbg`
    lines.describe(ctx, op)  # with `variables`: the value `op` gives a Python local

Without local variables the compile unit is `DebugDirectivesOnly`: PTX gets its `.file` and
`.loc` lines, which the linker's `-lineinfo` keeps in the cubin for profilers, and nothing
else (no DWARF sections, no `.target ..., debug`). A tensor's value is what each thread holds
of it: its registers, described as pieces (`DW_OP_LLVM_fragment`) of an array per thread.
"""

from __future__ import annotations

from ....ir import RankedTensorType
from ...debug_info import DebugInfo, Nodes, Token, last_named_ops, name_of
from .emitter import llvm_type


class TextNodes(Nodes):
    """Metadata written as LLVM text into the emitter's declarations."""

    def __init__(self, em):
        self.em = em
        self._flags: list[str] = []

    def node(self, kind: str, fields: dict, distinct: bool = False) -> str:
        text = ", ".join(f"{key}: {_value(value)}" for key, value in fields.items())
        return _Ref(self.em.metadata_text(f"!{kind}({text})", distinct))

    def tuple(self, items: list) -> str:
        return _Ref(self.em.metadata_text(_tuple(items)))

    def named(self, name: str, items: list) -> None:
        self.em.declarations[f"llvm.named.{name}"] = f"!{name} = {_tuple(items)}"

    def flag(self, behaviour: int, key: str, value: int) -> None:
        self._flags.append(self.tuple([_Raw(f'i32 {behaviour}, !"{key}", i32 {value}')]))
        self.named("llvm.module.flags", self._flags)

    def late_tuple(self) -> str:
        return self.tuple([])

    def fill(self, node, items: list) -> None:
        self.em.set_metadata(node, _tuple(items))


class _Ref(str):
    """The name of a metadata node (`!12`)."""


class _Raw(str):
    """Text written as it is."""


def _value(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, _Ref | _Raw | Token | int):
        return str(value)
    escaped = str(value).replace("\\", "\\5C").replace('"', "\\22")
    return f'"{escaped}"'


def _tuple(items: list) -> str:
    inner = ", ".join(item if isinstance(item, _Raw) else _value(item) for item in items)
    return "!{" + inner + "}"


def final_types(func) -> dict:
    """The type of each Python local's last value in `func` (types are interned: compared by
    identity)."""
    return {name: op.results[0].type for name, op in last_named_ops(func).items()}


class KernelLines:
    """The debug metadata of one kernel's LLVM function."""

    def __init__(self, em, func, variables: bool = False, functions=()):
        self.em = em
        self.info = DebugInfo(TextNodes(em), variables, True, functions)
        name = func.sym_name.value
        self.subprogram = self.info.subprogram(name, name, func.location)
        self.variables = variables
        self._final = final_types(func) if variables else {}
        where = self.info.location(func.location, self.subprogram)
        em.dbg = em.entry_dbg = "" if where is None else f", !dbg {where}"
        self._kernel_dbg = em.dbg

    def attachment(self) -> str:
        """What the function's header ends with: its subprogram."""
        return f" !dbg {self.subprogram}"

    def enter(self, op) -> str:
        """Make `op`'s location the one of the lines emitted next; return the one before."""
        before = self.em.dbg
        where = self.info.location(op.location, self.subprogram)
        self.em.dbg = self._kernel_dbg if where is None else f", !dbg {where}"
        return before

    def describe(self, ctx, op) -> None:
        """Records of the value `op`'s first result gives the Python local its location
        names (its registers), where it has the type of the local's last value: the ops a
        statement makes on the way (a load's addresses) are not the local."""
        name = name_of(op.location)
        if name is None or not op.results or op.results[0] not in ctx.values:
            return
        result = op.results[0]
        if self._final.get(name) is not result.type:
            return
        element = result.type.element_type if isinstance(result.type, RankedTensorType) else None
        kind = self.info.scalar_type(element or result.type)
        where = self.info.location(op.location, self.subprogram)
        if kind is None or where is None:
            return
        basic, bits = kind
        registers = ctx[result]
        if element is not None and len(registers) > 1:
            basic = self.info.array_type(basic, bits, len(registers))
        variable = self.info.variable(name, op.location, self.subprogram, basic)
        value_type = llvm_type(result.type)
        for index, register in enumerate(registers):
            expression = "!DIExpression()"
            if len(registers) > 1:
                expression = f"!DIExpression(DW_OP_LLVM_fragment, {index * bits}, {bits})"
            self.em.record(
                f"#dbg_value({value_type} {register}, {variable}, {expression}, {where})"
            )

    def finish(self) -> None:
        self.info.finish()
