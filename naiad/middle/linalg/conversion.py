"""The TTIR → Linalg conversion driver: one `tt.func` at a time into a `func.func`, op by op in
program order, through a table of converters (one module per family of ops).

    converted = convert_module(ttir_module)   # a new module; the TTIR is left as it was

Values map one to one, with two exceptions:
- a pointer (or block of pointers) has no type in the upstream dialects: it becomes a `Pointer`,
  the kernel argument it points into (a `memref<*xT>`) and its offset from that argument in
  elements (an `i64`, or a `tensor<...xi64>` for a block). The offsets are computed eagerly for
  every pointer; loads and stores the pointer analysis proves structured read strided views
  instead, and the offsets they do not need are removed as dead code afterwards.
- `tt.get_program_id` / `tt.get_num_programs` read six trailing `i32` arguments of the
  function (num_programs x, y, z, then program_id x, y, z), as in triton-shared.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ...dialects import func, tt
from ...ir import (
    Block,
    Builder,
    Elementwise,
    IntegerType,
    Operation,
    RankedTensorType,
    Value,
    is_pointer_like,
)
from ...ir.builtin import ModuleOp
from ...ir.errors import IRError
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
CONVERTERS: dict[type, Converter] = {}


def converts(*op_classes: type) -> Callable[[Converter], Converter]:
    """Register a converter for ops of `op_classes` (or, under the `Elementwise` trait, for
    every elementwise op without a converter of its own)."""

    def register(function: Converter) -> Converter:
        for cls in op_classes:
            CONVERTERS[cls] = function
        return function

    return register


class ConversionError(IRError):
    """An op the middle layer cannot convert (names the op and the kernel's location)."""


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


class FunctionConversion:
    """The state of converting one function: the builder, the value maps and the analyses."""

    def __init__(self, analysis: PointerAnalysis):
        self.builder = Builder()
        self.values: dict[Value, Value] = {}
        self.pointers: dict[Value, Pointer] = {}
        self.analysis = analysis
        self.masks = MaskAnalysis(analysis)
        self.program: dict[str, Value] = {}
        self.entry_block: Block | None = None  # of the new function: where shared views go
        self.flat_views: dict = {}  # (argument, element type) -> its `memref<?xT>` view
        self.blocks: dict[Block, Block] = {}  # old block -> new block, for branches

    # -- the maps

    def value(self, old: Value) -> Value:
        """The converted counterpart of a non-pointer value."""
        try:
            return self.values[old]
        except KeyError:
            raise ConversionError(f"internal: no converted value for {old!r}") from None

    def pointer(self, old: Value) -> Pointer:
        try:
            return self.pointers[old]
        except KeyError:
            raise ConversionError(f"internal: no converted pointer for {old!r}") from None

    def bind(self, old: Value, new) -> None:
        """Record what `old` became: a Value, or a Pointer for a pointer value."""
        if isinstance(new, Pointer):
            self.pointers[old] = new
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
        converter = CONVERTERS.get(type(op))
        if converter is None and op.has_trait(Elementwise):
            converter = CONVERTERS[Elementwise]
        if converter is None:
            raise ConversionError(f"'{op.name}' has no lowering to Linalg (at {op.location})")
        with self.builder.at_location(op.location):
            converter(self, op)

    def emit(self, op: Operation) -> Operation:
        return self.builder.insert(op)


def is_pointer(value: Value) -> bool:
    return is_pointer_like(value.type)


def offset_type(t):
    """The type of the offsets of a pointer of type `t`: i64, or a tensor of i64."""
    i64 = IntegerType(64)
    return RankedTensorType(t.shape, i64) if isinstance(t, RankedTensorType) else i64


def convert_module(module: Operation) -> Operation:
    """The Linalg form of every function of a TTIR module, as a new module."""
    from . import (  # noqa: F401  (register the converters)
        convert_debug,
        convert_elementwise,
        convert_memory,
        convert_pointers,
        convert_reductions,
        convert_shapes,
    )
    from .functions import convert_function

    functions = []
    for op in module.regions[0].entry_block:
        if not isinstance(op, tt.FuncOp):
            raise ConversionError(f"'{op.name}' at module level has no lowering to Linalg")
        functions.append(convert_function(op))
    return ModuleOp(functions, location=module.location)


__all__ = [
    "CONVERTERS",
    "PROGRAM_ARGUMENTS",
    "ConversionError",
    "FunctionConversion",
    "Pointer",
    "convert_module",
    "converts",
    "func",
    "is_pointer",
    "offset_type",
    "pointee",
]
