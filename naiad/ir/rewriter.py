"""Pattern rewriting: the PatternRewriter (every change notifies a listener) and the greedy
driver, which folds, erases dead ops and applies patterns until nothing changes.

A pattern must change the IR only through the rewriter it is given, so that the driver sees
each change and revisits the ops it touched. The driver processes ops in program order
(producers before users), so a chain of constants folds in one sweep; the ops a rewrite
creates, changes or frees up go back on the worklist, and sweeps repeat until one changes
nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import ClassVar

from .attributes import Attribute
from .builder import Builder
from .errors import IRError
from .opdef import constant_materializer
from .operation import Operation
from .traits import (
    ConstantLike,
    MemoryRead,
    MemoryWrite,
    Pure,
    RecursiveMemoryEffects,
    Terminator,
)
from .values import Value


class RewritePattern:
    """One rewrite. `root` (an op class) restricts the pattern to ops of that class, so the
    driver dispatches by class instead of trying every pattern on every op; `benefit` orders
    the patterns that apply to one op (higher first)."""

    root: ClassVar[type[Operation] | None] = None
    benefit: ClassVar[int] = 1

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        """Rewrite `op` through `rewriter` and return True, or return False untouched."""
        raise NotImplementedError


class RewriteListener:
    """What a driver hears from a PatternRewriter. The default hears nothing."""

    def notify_inserted(self, op: Operation) -> None:
        pass

    def notify_modified(self, op: Operation) -> None:
        pass

    def notify_erased(self, op: Operation) -> None:
        pass


class PatternRewriter(Builder):
    """A Builder whose every change is reported to `listener`."""

    __slots__ = ("listener",)

    def __init__(self, listener: RewriteListener | None = None, location=None):
        super().__init__(location)
        self.listener = listener or RewriteListener()

    def insert(self, op: Operation) -> Operation:
        super().insert(op)
        self.listener.notify_inserted(op)
        return op

    def replace_all_uses(self, old: Value, new: Value) -> None:
        users = old.users
        old.replace_all_uses_with(new)
        for user in users:
            self.listener.notify_modified(user)

    def replace_op(self, op: Operation, new: Operation | Sequence[Value]) -> None:
        """Replace each result of `op` by the matching value (or result of op `new`), then
        erase `op`."""
        values = new.results if isinstance(new, Operation) else tuple(new)
        if len(values) != len(op.results):
            raise ValueError(
                f"replacing '{op.name}' ({len(op.results)} results) with {len(values)} values"
            )
        for old, value in zip(op.results, values):
            self.replace_all_uses(old, value)
        self.erase_op(op)

    def erase_op(self, op: Operation) -> None:
        """Erase `op` (its results must be unused), telling the listener of every op that goes."""
        for gone in op.walk(post_order=True):
            self.listener.notify_erased(gone)
        op.erase()

    def notify_modified(self, op: Operation) -> None:
        """Report a change made to `op` directly (an attribute, an operand, a type)."""
        self.listener.notify_modified(op)

    @contextmanager
    def modify_op_in_place(self, op: Operation) -> Iterator[Operation]:
        """`with rewriter.modify_op_in_place(op): op.attributes[...] = ...` reports the change."""
        yield op
        self.listener.notify_modified(op)


def constant_value(value: Value) -> Attribute | None:
    """The attribute a value is known to equal: that of a ConstantLike defining op, else None."""
    op = value.defining_op
    if op is None or ConstantLike not in op.traits:
        return None
    folded = op.fold()
    return folded[0] if folded else None


def is_trivially_dead(op: Operation) -> bool:
    """Unused, not a terminator, and erasing it loses no effect (as MLIR: an op that only
    reads memory is dead when unused)."""
    for result in op.results:
        if result._uses:
            return False
    return Terminator not in op.traits and _effect_free(op)


def _effect_free(op: Operation) -> bool:
    traits = op.traits
    if Pure in traits:
        return True
    if MemoryWrite in traits:
        return False
    if RecursiveMemoryEffects in traits:  # as effect-free as the ops of its body
        return all(
            _effect_free(inner) for body in op.regions for block in body.blocks for inner in block
        )
    return MemoryRead in traits


def apply_patterns_greedily(
    root: Operation,
    patterns: Iterable[RewritePattern],
    fold: bool = True,
    max_iterations: int = 10,
    max_rewrites: int = 1_000_000,
) -> bool:
    """Rewrite the ops nested in `root` to a fixed point. Returns whether it was reached within
    `max_iterations` sweeps and `max_rewrites` rewrites per sweep (patterns that undo each other
    stop there instead of looping forever)."""
    driver = _GreedyDriver(patterns, fold, max_rewrites)
    for _ in range(max_iterations):
        changed = driver.sweep(root)
        if changed is None:
            return False
        if not changed:
            return True
    return False


class _Worklist:
    """A stack of ops without duplicates; removal is O(1) (the slot is blanked)."""

    __slots__ = ("index", "items")

    def __init__(self):
        self.items: list[Operation | None] = []
        self.index: dict[Operation, int] = {}

    def push(self, op: Operation) -> None:
        if op not in self.index:
            self.index[op] = len(self.items)
            self.items.append(op)

    def pop(self) -> Operation | None:
        items = self.items
        while items:
            op = items.pop()
            if op is not None:
                del self.index[op]
                return op
        return None

    def remove(self, op: Operation) -> None:
        i = self.index.pop(op, None)
        if i is not None:
            self.items[i] = None


class _GreedyDriver(RewriteListener):
    def __init__(self, patterns: Iterable[RewritePattern], fold: bool, max_rewrites: int):
        # sorted() is stable: equal benefits keep the order they were given in.
        self.patterns = sorted(patterns, key=lambda p: -p.benefit)
        self.by_class: dict[type, list[RewritePattern]] = {}
        self.fold = fold
        self.max_rewrites = max_rewrites
        self.worklist = _Worklist()
        self.rewriter = PatternRewriter(self)
        self.root: Operation | None = None

    def sweep(self, root: Operation) -> bool | None:
        """One pass over every op under `root`: True if anything changed, None if the
        rewrite budget ran out."""
        self.root = root
        ops = [op for op in root.walk() if op is not root]
        for op in reversed(ops):
            self.worklist.push(op)
        changed = False
        rewrites = 0
        while (op := self.worklist.pop()) is not None:
            if self._inside_root(op) and self._process(op):
                changed = True
                rewrites += 1
                if rewrites > self.max_rewrites:
                    return None
        return changed

    def _inside_root(self, op: Operation) -> bool:
        """False for ops erased (or detached) since they were queued, nested ones included."""
        while True:
            parent = op.parent_op()
            if parent is None:
                return False
            if parent is self.root:
                return True
            op = parent

    def _process(self, op: Operation) -> bool:
        if is_trivially_dead(op):
            self.rewriter.erase_op(op)
            return True
        if self.fold and ConstantLike not in op.traits and self._fold(op):
            return True
        for pattern in self._patterns_for(type(op)):
            self.rewriter.set_insertion_point(op.parent, op)
            self.rewriter.location = op.location
            if pattern.match_and_rewrite(op, self.rewriter):
                return True
        return False

    def _patterns_for(self, cls: type) -> list[RewritePattern]:
        found = self.by_class.get(cls)
        if found is None:
            found = [p for p in self.patterns if p.root is None or issubclass(cls, p.root)]
            self.by_class[cls] = found
        return found

    def _fold(self, op: Operation) -> bool:
        folded = op.fold()
        if not folded:
            return False
        if len(folded) != len(op.results):
            raise IRError(f"'{op.name}'.fold() gave {len(folded)} values for {len(op.results)}")
        if all(new is old for new, old in zip(folded, op.results)):
            self.notify_modified(op)  # folded in place
            return True
        values = self._materialize(op, folded)
        if values is None:
            return False
        self.rewriter.replace_op(op, values)
        return True

    def _materialize(self, op: Operation, folded) -> list[Value] | None:
        """Values for the fold results, constants built by the dialect's materializer and
        inserted before `op`; None (nothing inserted) if a constant cannot be built."""
        materialize = constant_materializer(op.dialect)
        constants: list[Operation | None] = []
        for value, result in zip(folded, op.results):
            if isinstance(value, Value):
                constants.append(None)
                continue
            constant = materialize(value, result.type, op.location) if materialize else None
            if constant is None:
                return None
            constants.append(constant)
        self.rewriter.set_insertion_point(op.parent, op)
        values = []
        for value, constant in zip(folded, constants):
            if constant is None:
                values.append(value)
            else:
                values.append(self.rewriter.insert(constant).results[0])
        return values

    # -- what the rewriter reports

    def notify_inserted(self, op: Operation) -> None:
        self.worklist.push(op)

    def notify_modified(self, op: Operation) -> None:
        self.worklist.push(op)

    def notify_erased(self, op: Operation) -> None:
        self.worklist.remove(op)
        for value in op.operands:  # a producer may have lost its last user
            producer = value.defining_op
            if producer is not None:
                self.worklist.push(producer)
