"""Structural equality of IR: what a round trip through the text must preserve.

Two ops are structurally equal when they have the same name, attributes (interned, so compared
by identity), result types, locations, and operands and successors that correspond — a value of
one is matched with the value at the same place in the other (the same result of the
corresponding op, the same argument of the corresponding block) — recursively through regions
and blocks. Printed names play no part.

    difference(a, b)   # None, or where and how the two first differ
    assert_structurally_equal(a, b, locations=printed.__contains__)

`locations` is True (compare every location), False (none), or a predicate over the ops and
block arguments of `a` saying whose location to compare: the printer's `record` set is what a
round trip through the text preserves (an elided terminator, or an `scf.for` induction
variable, has no location in the text).
"""

from __future__ import annotations

from collections.abc import Callable


class StructuralMismatch(AssertionError):
    """Two IR trees differ; the message says where."""


def assert_structurally_equal(a, b, *, locations: bool | Callable = True) -> None:
    found = difference(a, b, locations=locations)
    if found is not None:
        raise StructuralMismatch(found)


def difference(a, b, *, locations: bool | Callable = True) -> str | None:
    """A description of the first difference between ops `a` and `b`, or None."""
    if locations is True:
        check = _always
    elif locations is False:
        check = _never
    else:
        check = locations
    matcher = _Matcher(check)
    try:
        matcher.ops(a, b, f"'{a.name}'")
        matcher.references()
    except StructuralMismatch as exc:
        return str(exc)
    return None


def _always(_) -> bool:
    return True


def _never(_) -> bool:
    return False


class _Matcher:
    def __init__(self, check_location: Callable):
        self.check_location = check_location
        self.values: dict = {}  # value of a -> value of b
        self.blocks: dict = {}  # block of a -> block of b
        self.pending: list = []  # (op of a, op of b, path): operands compared at the end

    def fail(self, path: str, what: str):
        raise StructuralMismatch(f"{path}: {what}")

    def ops(self, a, b, path: str) -> None:
        if a.name != b.name:
            self.fail(path, f"op '{a.name}' vs '{b.name}'")
        if len(a.results) != len(b.results):
            self.fail(path, f"{len(a.results)} results vs {len(b.results)}")
        for i, (x, y) in enumerate(zip(a.results, b.results)):
            if x.type is not y.type:
                self.fail(path, f"type of result #{i}: {x.type} vs {y.type}")
            self.values[x] = y
        self._attributes(a, b, path)
        if self.check_location(a) and a.location is not b.location:
            self.fail(path, f"location {a.location} vs {b.location}")
        if len(a.regions) != len(b.regions):
            self.fail(path, f"{len(a.regions)} regions vs {len(b.regions)}")
        for i, (ra, rb) in enumerate(zip(a.regions, b.regions)):
            self.region(ra, rb, f"{path}, region #{i}")
        self.pending.append((a, b, path))

    def _attributes(self, a, b, path: str) -> None:
        if a.attributes.keys() != b.attributes.keys():
            only_a = sorted(a.attributes.keys() - b.attributes.keys())
            only_b = sorted(b.attributes.keys() - a.attributes.keys())
            self.fail(path, f"attributes only in the first {only_a}, only in the second {only_b}")
        for name, value in a.attributes.items():
            other = b.attributes[name]
            if value is not other:
                self.fail(path, f"attribute '{name}': {value} vs {other}")

    def region(self, a, b, path: str) -> None:
        if len(a.blocks) != len(b.blocks):
            self.fail(path, f"{len(a.blocks)} blocks vs {len(b.blocks)}")
        for block_a, block_b in zip(a.blocks, b.blocks):
            self.blocks[block_a] = block_b
        for k, (block_a, block_b) in enumerate(zip(a.blocks, b.blocks)):
            self.block(block_a, block_b, f"{path}, block #{k}")

    def block(self, a, b, path: str) -> None:
        if len(a.arguments) != len(b.arguments):
            self.fail(path, f"{len(a.arguments)} arguments vs {len(b.arguments)}")
        for i, (x, y) in enumerate(zip(a.arguments, b.arguments)):
            if x.type is not y.type:
                self.fail(path, f"type of argument #{i}: {x.type} vs {y.type}")
            if self.check_location(x) and x.location is not y.location:
                self.fail(path, f"location of argument #{i}: {x.location} vs {y.location}")
            self.values[x] = y
        if len(a) != len(b):
            self.fail(path, f"{len(a)} ops vs {len(b)}")
        for i, (op_a, op_b) in enumerate(zip(a, b)):
            self.ops(op_a, op_b, f"{path}, op #{i}")

    def references(self) -> None:
        """Operands and successors, once every value and block has its counterpart."""
        for a, b, path in self.pending:
            if len(a.operands) != len(b.operands):
                self.fail(path, f"{len(a.operands)} operands vs {len(b.operands)}")
            for i, (x, y) in enumerate(zip(a.operands, b.operands)):
                if self.values.get(x, x) is not y:
                    self.fail(path, f"operand #{i} refers to a different value")
            if len(a.successors) != len(b.successors):
                self.fail(path, f"{len(a.successors)} successors vs {len(b.successors)}")
            for i, (x, y) in enumerate(zip(a.successors, b.successors)):
                if self.blocks.get(x) is not y:
                    self.fail(path, f"successor #{i} is a different block")
