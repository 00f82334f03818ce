"""Operations: the nodes of the IR.

An op holds operands (a tuple, kept in step with the operands' use-lists), results, an attribute
dict, regions, successor blocks, a location and its place in a block's linked list. Registered op
classes are declared with `@irdl_op` (opdef.py); this module is the dialect-free core.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, ClassVar

from .block import Block, Region
from .locations import Location, UnknownLoc
from .values import OpResult, Value

if TYPE_CHECKING:
    from .attributes import Attribute
    from .traits import Trait
    from .types import Type

_UNKNOWN = UnknownLoc()


class OpMeta(type):
    """Gives every op class `__slots__ = ()` unless it declares its own: an op instance never
    grows a `__dict__`, which keeps ops small and attribute access fast."""

    def __new__(mcs, name, bases, namespace, **kwargs):
        namespace.setdefault("__slots__", ())
        return super().__new__(mcs, name, bases, namespace, **kwargs)


class Operation(metaclass=OpMeta):
    """An op. Subclasses declared with `@irdl_op` get field accessors and a keyword
    constructor; `create_operation(name, ...)` builds any op from its parts."""

    __slots__ = (
        "_next",
        "_operands",
        "_prev",
        "attributes",
        "location",
        "parent",
        "regions",
        "results",
        "successors",
    )
    name: ClassVar[str]
    traits: ClassVar[frozenset[Trait]] = frozenset()
    assembly_format: ClassVar[str | None] = None
    _op_def: ClassVar = None  # the OpDef of a declared op class

    results: tuple[OpResult, ...]
    attributes: dict[str, Attribute]
    regions: tuple[Region, ...]
    successors: tuple[Block, ...]
    location: Location
    parent: Block | None

    def __init__(self, *operands, location=None, attributes=None, **fields):
        """Build from declared fields: operands positionally or by name, result types,
        attributes, regions and successors by field name (see opdef.py)."""
        if self._op_def is None:
            raise TypeError(f"{type(self).__name__} is not declared with @irdl_op")
        self._op_def.build(self, operands, fields, attributes, location)

    def _init_parts(
        self,
        operands: Iterable[Value],
        result_types: Iterable[Type],
        attributes: dict[str, Attribute],
        regions: Iterable[Region],
        successors: Iterable[Block],
        location: Location | None,
    ) -> None:
        self._operands = operands = tuple(operands)
        for i, value in enumerate(operands):
            value._uses[(self, i)] = None
        self.results = tuple(OpResult(t, self, i) for i, t in enumerate(result_types))
        self.attributes = attributes
        self.regions = tuple(regions)
        for region in self.regions:
            if region.parent is not None:
                raise ValueError("region already belongs to an op")
            region.parent = self
        self.successors = tuple(successors)
        self.location = _UNKNOWN if location is None else location
        self.parent = self._prev = self._next = None

    # -- operands

    @property
    def operands(self) -> tuple[Value, ...]:
        return self._operands

    def set_operand(self, index: int, value: Value) -> None:
        old = self._operands[index]
        if old is value:
            return
        key = (self, index)
        del old._uses[key]
        value._uses[key] = None
        self._replace_operand_raw(index, value)

    def _replace_operand_raw(self, index: int, value: Value) -> None:
        """Swap the operand tuple entry only; the caller moves the use-list key."""
        operands = self._operands
        self._operands = (*operands[:index], value, *operands[index + 1 :])

    def set_operands(self, values: Iterable[Value]) -> None:
        """Replace all operands (their number may change; keep any segment sizes in step)."""
        for i, old in enumerate(self._operands):
            del old._uses[(self, i)]
        self._operands = values = tuple(values)
        for i, value in enumerate(values):
            value._uses[(self, i)] = None

    def set_successor(self, index: int, block: Block) -> None:
        self.successors = (*self.successors[:index], block, *self.successors[index + 1 :])

    # -- questions

    @property
    def dialect(self) -> str:
        return self.name.partition(".")[0]

    def has_trait(self, trait: Trait) -> bool:
        return trait in self.traits

    @property
    def next_op(self) -> Operation | None:
        return self._next

    @property
    def prev_op(self) -> Operation | None:
        return self._prev

    def parent_region(self) -> Region | None:
        return None if self.parent is None else self.parent.parent

    def parent_op(self) -> Operation | None:
        block = self.parent
        if block is None or block.parent is None:
            return None
        return block.parent.parent

    def is_ancestor(self, other: Operation) -> bool:
        """True if `other` is this op or nested (at any depth) in one of its regions."""
        op: Operation | None = other
        while op is not None:
            if op is self:
                return True
            op = op.parent_op()
        return False

    def walk(self, post_order: bool = False) -> Iterator[Operation]:
        """This op and every op nested in it, parents before children (or after, with
        `post_order`). Erasing the op just yielded is safe; in pre-order its body is then
        skipped."""
        if not post_order:
            attached = self.parent is not None
            yield self
            if attached and self.parent is None:
                return
        for region in self.regions:
            yield from region.walk(post_order)
        if post_order:
            yield self

    # -- mutation of the tree

    def detach(self) -> Operation:
        """Take this op out of its block, keeping its operands and uses."""
        if self.parent is not None:
            self.parent._unlink(self)
        return self

    def move_before(self, anchor: Operation) -> None:
        self.detach()
        anchor.parent.insert_before(self, anchor)

    def move_after(self, anchor: Operation) -> None:
        self.detach()
        anchor.parent.insert_after(self, anchor)

    def erase(self, force: bool = False) -> None:
        """Remove this op and everything nested in it. Refuses while a result is still used,
        unless `force` (the caller then erases or rewires those users itself)."""
        if not force:
            for result in self.results:
                if result._uses:
                    raise ValueError(
                        f"cannot erase '{self.name}': result #{result.index} still has "
                        f"{len(result._uses)} use(s)"
                    )
        if self.parent is not None:
            self.parent._unlink(self)
        self._drop_all_references()

    def _drop_all_references(self) -> None:
        """Remove this op's operands (and its nested ops') from their values' use-lists."""
        for i, value in enumerate(self._operands):
            value._uses.pop((self, i), None)
        self._operands = ()
        self.successors = ()
        for region in self.regions:
            for block in region.blocks:
                for op in block:
                    op._drop_all_references()

    def clone(self, mapping: dict | None = None) -> Operation:
        """A detached deep copy. Operands found in `mapping` (values and blocks) are replaced;
        `mapping` learns the copies of results, nested blocks and their arguments."""
        if mapping is None:
            mapping = {}
        get = mapping.get
        copy = self._new_shell()
        copy._init_parts(
            [get(v, v) for v in self._operands],
            [r.type for r in self.results],
            dict(self.attributes),
            [Region() for _ in self.regions],
            [get(b, b) for b in self.successors],
            self.location,
        )
        for old, new in zip(self.results, copy.results):
            mapping[old] = new
        for old_region, new_region in zip(self.regions, copy.regions):
            old_region.clone_into(new_region, mapping)
        return copy

    def clone_as(self, operands: Sequence[Value], result_types: Sequence[Type]) -> Operation:
        """A detached copy of this op (attributes, location, regions) reading `operands` and
        producing `result_types`: the same operation at other types, as when a conversion turns
        an elementwise op on tensors into the body of a loop over their elements."""
        copy = self._new_shell()
        copy._init_parts(
            operands,
            result_types,
            dict(self.attributes),
            [Region() for _ in self.regions],
            self.successors,
            self.location,
        )
        mapping: dict = {}
        for old_region, new_region in zip(self.regions, copy.regions):
            old_region.clone_into(new_region, mapping)
        return copy

    def _new_shell(self) -> Operation:
        """An uninitialized instance of this op's class, for clone() and clone_as()."""
        return object.__new__(type(self))

    # -- hooks a declared op may override

    def verify_(self) -> None:
        """Op-specific checks beyond the declaration; raise VerificationError(message, self)."""

    def fold(self) -> Sequence[Value | Attribute] | None:
        """Fold to one existing value or constant attribute per result, or None. Returning
        this op's own results means it was updated in place."""
        return None

    @classmethod
    def canonicalization_patterns(cls) -> Sequence:
        """The RewritePatterns the canonicalizer should run on this op."""
        return ()

    def successor_operands(self, index: int) -> Sequence[Value] | None:
        """The operands forwarded to successor `index`'s arguments (None: not a branch)."""
        return None

    def __repr__(self) -> str:
        results = ", ".join(str(r.type) for r in self.results)
        operands = ", ".join(str(v.type) for v in self._operands)
        return f"<{self.name}({operands}) -> ({results})>"


class UnregisteredOp(Operation):
    """An op whose name no dialect declares: the parser keeps it, passes leave it alone."""

    __slots__ = ("name",)

    def __init__(
        self,
        name: str,
        operands: Iterable[Value] = (),
        result_types: Iterable[Type] = (),
        attributes: dict | None = None,
        regions: Iterable[Region] = (),
        successors: Iterable[Block] = (),
        location: Location | None = None,
    ):
        self.name = name
        self._init_parts(operands, result_types, attributes or {}, regions, successors, location)

    def _new_shell(self) -> Operation:
        copy = object.__new__(UnregisteredOp)
        copy.name = self.name
        return copy
