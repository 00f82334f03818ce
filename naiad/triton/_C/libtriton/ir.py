"""`triton._C.libtriton.ir`: a read-only view of a Naiad TTIR module in the terms of Triton's
MLIR bindings, for the libraries that walk a kernel's IR to learn what it does.

torch's wrap_triton is the one that matters: to know which tensors a user kernel writes (so
that torch.compile copies only those), it asks `ASTSource.make_ir(...)` for the kernel's TTIR
and walks it, reading each op's name, operands, results, regions and blocks by identity, and a
few attributes (`sym_name`, `callee`). Naiad's TTIR has Triton's op names, so the walk reads
Naiad's module as it would read Triton's. Nothing here builds or changes IR: Triton's builder
is its C++ compiler's, and Naiad's is Python (`naiad.ir`). The classes keep the bindings'
lowercase names.

    module = ASTSource(kernel, signature, constexprs).make_ir(target, options, {}, {}, context())
    module.walk(lambda op: print(op.get_name(), op.get_num_operands()))
"""

from __future__ import annotations

from ....ir import verify
from ....ir.attributes import BoolAttr, FloatAttr, IntegerAttr, StringAttr, SymbolRefAttr
from ....ir.printer import print_module
from ....ir.types import RankedTensorType


class context:
    """Triton's MLIR context: Naiad's IR needs none, so it holds nothing."""


def load_dialects(context) -> None:
    """Naiad's dialects are loaded when Naiad is imported."""


class value:
    """An SSA value (an op's result or a block's argument)."""

    def __init__(self, wrapped):
        self._value = wrapped

    def id(self) -> int:
        """The value's identity, the same from every op that uses it."""
        return id(self._value)

    def get_shape(self) -> list[int]:
        """A tensor value's shape ([] for a scalar)."""
        ty = self._value.type
        return list(ty.shape) if isinstance(ty, RankedTensorType) else []


class region:
    def __init__(self, wrapped):
        self._region = wrapped

    def id(self) -> int:
        return id(self._region)


class block:
    def __init__(self, wrapped):
        self._block = wrapped

    def id(self) -> int:
        return id(self._block)

    def get_num_arguments(self) -> int:
        return len(self._block.arguments)

    def get_argument(self, index: int) -> value:
        return value(self._block.arguments[index])

    def get_parent(self) -> region | None:
        parent = self._block.parent
        return None if parent is None else region(parent)


class operation:
    """One op: its name, operands, results, regions, the block it is in and its attributes."""

    def __init__(self, wrapped):
        self._op = wrapped

    def get_name(self) -> str:
        return self._op.name

    def get_num_operands(self) -> int:
        return len(self._op.operands)

    def get_operand(self, index: int) -> value:
        return value(self._op.operands[index])

    def get_num_results(self) -> int:
        return len(self._op.results)

    def get_result(self, index: int) -> value:
        return value(self._op.results[index])

    def get_num_regions(self) -> int:
        return len(self._op.regions)

    def get_region(self, index: int) -> region:
        return region(self._op.regions[index])

    def get_block(self) -> block | None:
        parent = self._op.parent
        return None if parent is None else block(parent)

    def get_str_attr(self, name: str) -> str:
        return self._attribute(name, StringAttr).value

    def get_flat_symbol_ref_attr(self, name: str) -> str:
        return self._attribute(name, SymbolRefAttr).root

    def get_bool_attr(self, name: str) -> bool:
        return bool(self._attribute(name, BoolAttr).value)

    def get_int_attr(self, name: str) -> int:
        return int(self._attribute(name, IntegerAttr).value)

    def get_constant_value(self):
        """An `arith.constant`'s scalar value: a bool, int or float."""
        found = self._op.attributes.get("value")
        if self._op.name != "arith.constant" or not isinstance(found, IntegerAttr | FloatAttr):
            raise ValueError(f"{self._op.name} is not a scalar constant")
        return found.value

    def _attribute(self, name: str, kind: type):
        found = self._op.attributes.get(name)
        if not isinstance(found, kind):
            raise KeyError(f"{self._op.name} has no {kind.__name__} attribute `{name}`")
        return found


class module(operation):
    """A TTIR module (`builtin.module`)."""

    def walk(self, fn) -> None:
        """Call `fn` on every op, each after the ops nested in it (MLIR's post-order walk),
        the module itself last."""
        for op in self._op.walk(post_order=True):
            fn(operation(op))

    def verify(self) -> bool:
        """Whether the module is well formed (Naiad's verifier raises on the first error)."""
        verify(self._op)
        return True

    def __str__(self) -> str:
        return print_module(self._op)

    def str(self) -> str:
        """The module's text with its locations, values named after them (`%offsets`)."""
        return print_module(self._op)

    def str_nodebug(self) -> str:
        """The module's text without locations, values with MLIR's default names (`%c11_i32`,
        `%0`, `%arg0`): what FileCheck tests of the frontend match (triton._filecheck)."""
        return print_module(self._op, locations=False, name_locations=False)
