"""The TTIR → Linalg conversion driver: one `tt.func` at a time into a `func.func`, op by op in
program order, through a table of converters (one module per family of ops).

    converted = convert_module(ttir_module)   # a new module; the TTIR is left as it was

Values map one to one, with three exceptions:
- a pointer (or block of pointers) has no type in the upstream dialects: it becomes a `Pointer`,
  the kernel argument it points into (a `memref<*xT>`) and its offset from that argument in
  elements (an `i64`, or a `tensor<...xi64>` for a block). The offsets are computed eagerly for
  every pointer; loads and stores the pointer analysis proves structured read strided views
  instead, and the offsets they do not need are removed as dead code afterwards. A pointer
  block an `scf.for` carries by its start (pointer_analysis.py) has that start, an `index`, in
  `starts`; its offsets are rebuilt from the loop-invariant strides where they are read.
- a tensor descriptor becomes a `Descriptor`: its base, shape and strides (convert_descriptors.py).
- `tt.get_program_id` / `tt.get_num_programs` read six trailing `i32` arguments of the
  function (num_programs x, y, z, then program_id x, y, z), as in triton-shared; with bounds
  checks the extents of the pointer arguments come before them (bounds_checks.py).

Functions of the runtime the converted code calls (`tl.device_print`'s, a failing bounds
check's report) are declared once per
signature in the converted module (`RuntimeFunctions`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn

from ...dialects import func, tt
from ...errors import KernelNotImplementedError
from ...ir import (
    Block,
    Builder,
    Elementwise,
    FunctionType,
    IntegerType,
    Operation,
    RankedTensorType,
    UnknownLoc,
    Value,
    is_pointer_like,
)
from ...ir.builtin import ModuleOp
from ...ir.op_table import OpTable
from ...passes.diagnostics import unsupported
from .mask_analysis import MaskAnalysis
from .pointer_analysis import PointerAnalysis

PROGRAM_ARGUMENTS = (
    "num_programs_x",
    "num_programs_y",
    "num_programs_z",
    "pid_x",
    "pid_y",
    "pid_z",
)

Converter = Callable[["FunctionConversion", Operation], None]
CONVERTERS = OpTable("Linalg conversion")
# The converter of every elementwise op without one of its own (by the `Elementwise` trait).
ELEMENTWISE = "<elementwise>"


def converts(*op_classes: type) -> Callable[[Converter], Converter]:
    """Register a converter for ops of `op_classes` (by their names, as every op table is
    keyed), or, given the `Elementwise` trait, for every elementwise op without a converter of
    its own."""
    return CONVERTERS.rule(*(ELEMENTWISE if c is Elementwise else c.name for c in op_classes))


class ConversionError(KernelNotImplementedError):
    """A construct of the kernel the middle layer has no lowering for: the user's error, at
    the op's source location (raise it with `fail`)."""


def fail(op: Operation | None, message: str) -> NoReturn:
    """Raise a ConversionError saying `message` at `op`'s source location."""
    unsupported(op, message, ConversionError)


@dataclass(frozen=True)
class Pointer:
    """A pointer after conversion: `base` (the kernel argument, `memref<*xT>`) and `offset`
    (elements of T, an i64 or a tensor of them)."""

    base: Value
    offset: Value


def pointee(t) -> object:
    """The element type a pointer (or block of pointers) type points to."""
    pointer = t.element_type if isinstance(t, RankedTensorType) else t
    return pointer.pointee_type


@dataclass(frozen=True)
class Descriptor:
    """A tensor descriptor after conversion: `base` (`memref<*xT>`), the element `start` of
    the described tensor in it, and the tensor's `shape` and `strides` (index values, or ints
    where static); `padding` is "zero" or "nan", what a load reads outside the tensor."""

    base: Value
    start: int | Value
    shape: tuple[int | Value, ...]
    strides: tuple[int | Value, ...]
    padding: str


class RuntimeFunctions:
    """The private `func.func` declarations of runtime functions a module's code calls, one per
    (name, signature): `declare(name, types)` gives the symbol to call."""

    def __init__(self):
        self.declarations: dict[tuple, func.FuncOp] = {}

    def declare(self, name: str, inputs, results=()) -> str:
        key = (name, tuple(inputs), tuple(results))
        declaration = self.declarations.get(key)
        if declaration is None:
            symbol = f"{name}_{len([k for k in self.declarations if k[0] == name])}"
            declaration = func.FuncOp(
                symbol,
                FunctionType(list(inputs), list(results)),
                visibility="private",
                declaration=True,
            )
            self.declarations[key] = declaration
        return declaration.sym_name.value


class FunctionConversion:
    """The state of converting one function: the builder, the value maps and the analyses."""

    def __init__(self, analysis: PointerAnalysis, runtime: RuntimeFunctions):
        self.builder = Builder()
        self.values: dict[Value, Value] = {}
        self.pointers: dict[Value, Pointer] = {}
        self.descriptors: dict[Value, Descriptor] = {}
        self.starts: dict[Value, Value] = {}  # carried pointer block -> its start (index)
        self.carried_by_start: dict[Operation, list[bool]] = {}  # per scf.for, per iter arg
        self.analysis = analysis
        self.masks = MaskAnalysis(analysis)
        self.runtime = runtime
        self.program: dict[str, Value] = {}
        self.entry_block: Block | None = None  # of the new function: where shared views go
        self.zero_offset: Value | None = None  # the offset of every argument pointer
        self.flat_views: dict = {}  # (argument, element type) -> its `memref<?xT>` view
        self.retyped: dict = {}  # (argument, element type) -> it as `memref<*xT>`
        self.memories: dict = {}  # element type -> all of memory (convert_addresses.py)
        self.blocks: dict[Block, Block] = {}  # old block -> new block, for branches
        self.extents: dict = {}  # argument -> its Extent (bounds_checks.py)
        self.extent_limits: dict = {}  # (Extent, element bytes) -> its limits, made at entry

    # -- the maps

    def value(self, old: Value) -> Value:
        """The converted counterpart of a non-pointer value."""
        try:
            return self.values[old]
        except KeyError:
            raise LookupError(f"no converted value for {old!r}") from None

    def pointer(self, old: Value) -> Pointer:
        try:
            return self.pointers[old]
        except KeyError:
            raise LookupError(f"no converted pointer for {old!r}") from None

    def descriptor(self, old: Value) -> Descriptor:
        try:
            return self.descriptors[old]
        except KeyError:
            raise LookupError(f"no converted descriptor for {old!r}") from None

    def bind(self, old: Value, new) -> None:
        """Record what `old` became: a Value, a Pointer or a Descriptor."""
        if isinstance(new, Pointer):
            self.pointers[old] = new
        elif isinstance(new, Descriptor):
            self.descriptors[old] = new
        else:
            self.values[old] = new

    def converted(self, old: Value):
        """`old`'s counterpart, a Value or a Pointer."""
        return self.pointer(old) if is_pointer_like(old.type) else self.value(old)

    # -- walking

    def convert_block(self, old: Block, new: Block) -> None:
        with self.builder.at_end(new):
            for op in old:
                self.convert_op(op)

    def convert_op(self, op: Operation) -> None:
        converter = CONVERTERS.get(op.name)
        if converter is None and op.has_trait(Elementwise):
            converter = CONVERTERS[ELEMENTWISE]
        if converter is None:
            fail(op, f"'{op.name}' has no lowering to Linalg")
        with self.builder.at_location(op.location):
            converter(self, op)

    def emit(self, op: Operation) -> Operation:
        """Insert `op`, at the converted op's location unless it has one (asserts report it)."""
        if isinstance(op.location, UnknownLoc):
            op.location = self.builder.location
        return self.builder.insert(op)


def is_pointer(value: Value) -> bool:
    return is_pointer_like(value.type)


def offset_type(t):
    """The type of the offsets of a pointer of type `t`: i64, or a tensor of i64."""
    i64 = IntegerType(64)
    return RankedTensorType(t.shape, i64) if isinstance(t, RankedTensorType) else i64


def load_converters() -> OpTable:
    """`CONVERTERS`, every converter registered: their modules register as they are imported,
    and import this one, so they are imported here, on the first conversion (or by whoever
    reads the table: tools/ops_table.py), not at the top."""
    from . import (  # noqa: F401  (register the converters)
        control_flow,
        convert_addresses,
        convert_debug,
        convert_descriptors,
        convert_elementwise,
        convert_memory,
        convert_pointers,
        convert_polling,
        convert_reductions,
        convert_scalar_maps,
        convert_shapes,
        functions,
    )

    return CONVERTERS


def convert_module(module: Operation, bounds: bool = False) -> Operation:
    """The Linalg form of every function of a TTIR module, as a new module; with `bounds`,
    every access is checked against its argument's extent (bounds_checks.py)."""
    from .functions import convert_function

    load_converters()

    runtime = RuntimeFunctions()
    functions = []
    for op in module.regions[0].entry_block:
        if not isinstance(op, tt.FuncOp):
            fail(op, f"'{op.name}' at module level has no lowering to Linalg")
        functions.append(convert_function(op, runtime, bounds))
    return ModuleOp([*runtime.declarations.values(), *functions], location=module.location)


__all__ = [
    "CONVERTERS",
    "PROGRAM_ARGUMENTS",
    "ConversionError",
    "Descriptor",
    "FunctionConversion",
    "Pointer",
    "RuntimeFunctions",
    "convert_module",
    "converts",
    "fail",
    "func",
    "is_pointer",
    "load_converters",
    "offset_type",
    "pointee",
]
