"""Op traits: marker objects that rewrites and the verifier ask about, never op names.

A trait that implies a structural rule checks it in `verify(op)`, returning an error message or
None; the verifier calls it for every op declaring the trait.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .attributes import StringAttr
from .types import RankedTensorType, element_type, encoding_of

if TYPE_CHECKING:
    from .operation import Operation


class Trait:
    """A named property of an op class."""

    __slots__ = ("_check", "name")

    def __init__(self, name: str, check: Callable[[Operation], str | None] | None = None):
        self.name = name
        self._check = check

    def verify(self, op: Operation) -> str | None:
        """An error message if `op` breaks the rule this trait implies, else None."""
        return None if self._check is None else self._check(op)

    def __repr__(self) -> str:
        return self.name


class HasParent(Trait):
    """The op may only sit directly inside one of the ops named (`scf.yield` in `scf.for`).
    Two `HasParent` with the same names are equal, so `HasParent("scf.for") in op.traits`."""

    __slots__ = ("parents",)

    def __init__(self, *parents: str):
        super().__init__(f"HasParent({', '.join(parents)})")
        self.parents = frozenset(parents)

    def verify(self, op: Operation) -> str | None:
        parent = op.parent_op()
        if parent is None or parent.name not in self.parents:
            expected = ", ".join(f"'{p}'" for p in sorted(self.parents))
            return f"expects parent op to be one of {expected}"
        return None

    def __eq__(self, other) -> bool:
        return isinstance(other, HasParent) and other.parents == self.parents

    def __hash__(self) -> int:
        return hash(self.parents)


def _types(op: Operation, results: bool) -> list:
    types = [v.type for v in op.operands]
    if results:
        types.extend(r.type for r in op.results)
    return types


def _same_type(results: bool, what: str):
    def check(op: Operation) -> str | None:
        types = _types(op, results)
        return None if all(t is types[0] for t in types) else f"requires the same type for {what}"

    return check


def _same_shape(results: bool, what: str):
    """MLIR's rule: all scalars, or all tensors of one shape (a scalar and a tensor differ)."""

    def check(op: Operation) -> str | None:
        shapes = {t.shape if isinstance(t, RankedTensorType) else None for t in _types(op, results)}
        return None if len(shapes) <= 1 else f"requires the same shape for {what}"

    return check


def _same_element_type(results: bool, what: str):
    def check(op: Operation) -> str | None:
        elements = {element_type(t) for t in _types(op, results)}
        return None if len(elements) <= 1 else f"requires the same element type for {what}"

    return check


def _same_encoding(results: bool, what: str):
    """Triton's rule: only tensors that carry an encoding are compared."""

    def check(op: Operation) -> str | None:
        encodings = {encoding_of(t) for t in _types(op, results)} - {None}
        return None if len(encodings) <= 1 else f"requires the same encoding for {what}"

    return check


def _elementwise(op: Operation) -> str | None:
    """MLIR's Elementwise: tensors in, tensors out, all of one shape; scalars only with scalars."""
    operand_tensors = [v.type for v in op.operands if isinstance(v.type, RankedTensorType)]
    result_tensors = [r.type for r in op.results if isinstance(r.type, RankedTensorType)]
    if not operand_tensors and not result_tensors:
        return None
    if not operand_tensors:
        return "if a result is non-scalar, then at least one operand must be non-scalar"
    if len(result_tensors) != len(op.results):
        return "if an operand is non-scalar, then all results must be non-scalar"
    if len({t.shape for t in operand_tensors + result_tensors}) != 1:
        return "all non-scalar operands/results must have the same shape and base type"
    return None


def _constant_like(op: Operation) -> str | None:
    if op.operands or len(op.results) != 1:
        return "a constant-like op must have no operands and one result"
    return None


def _single_block(op: Operation) -> str | None:
    for i, region in enumerate(op.regions):
        if len(region.blocks) > 1:
            return f"expects region #{i} to have 0 or 1 blocks"
    return None


def _symbol(op: Operation) -> str | None:
    if not isinstance(op.attributes.get("sym_name"), StringAttr):
        return "requires string attribute 'sym_name'"
    return None


def _symbol_table(op: Operation) -> str | None:
    seen: set[str] = set()
    for region in op.regions:
        for block in region.blocks:
            for child in block:
                name = child.attributes.get("sym_name")
                if name is None:
                    continue
                if name.value in seen:
                    return f"redefinition of symbol named '{name.value}'"
                seen.add(name.value)
    return None


Pure = Trait("Pure")
Commutative = Trait("Commutative")
Terminator = Trait("Terminator")
ReturnLike = Trait("ReturnLike")
IsolatedFromAbove = Trait("IsolatedFromAbove")
NoTerminator = Trait("NoTerminator")
RecursiveMemoryEffects = Trait("RecursiveMemoryEffects")
MemoryRead = Trait("MemoryRead")
MemoryWrite = Trait("MemoryWrite")
# A loop whose regions run any number of times (loop-invariant code motion asks for it).
LoopLike = Trait("LoopLike")
Elementwise = Trait("Elementwise", _elementwise)
ConstantLike = Trait("ConstantLike", _constant_like)
SingleBlock = Trait("SingleBlock", _single_block)
Symbol = Trait("Symbol", _symbol)
SymbolTable = Trait("SymbolTable", _symbol_table)
SameOperandsAndResultType = Trait(
    "SameOperandsAndResultType", _same_type(True, "all operands and results")
)
SameOperandsShape = Trait("SameOperandsShape", _same_shape(False, "all operands"))
SameOperandsAndResultShape = Trait(
    "SameOperandsAndResultShape", _same_shape(True, "all operands and results")
)
SameOperandsElementType = Trait(
    "SameOperandsElementType", _same_element_type(False, "all operands")
)
SameOperandsAndResultElementType = Trait(
    "SameOperandsAndResultElementType", _same_element_type(True, "all operands and results")
)
SameOperandsEncoding = Trait("SameOperandsEncoding", _same_encoding(False, "all operands"))
SameOperandsAndResultEncoding = Trait(
    "SameOperandsAndResultEncoding", _same_encoding(True, "all operands and results")
)
