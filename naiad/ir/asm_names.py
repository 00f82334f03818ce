"""SSA value and block names for the printer, computed as MLIR's `SSANameState` computes them.

A value is named after the first `NameLoc` in its location (Triton prints with
`printNameLocAsPrefix`: `%pid`, `%offsets_1`), else by the op's syntax (`result_names`:
`%c1024_i32`, `%cst`, `%true`), else `%argN` for an entry-block argument and `%N` for the rest.
A name already in use gets `_K` appended, K from a counter. Regions are numbered depth-first
from a stack, each starting from the counters its parent region ended with, and sees the names
of its ancestors but not of its siblings, so sibling regions reuse names and numbers exactly as
MLIR prints them (the generic form, as MLIR's, keeps counting instead: `unique`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from .locations import CallSiteLoc, FusedLoc, NameLoc

_VALID = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789$._-")


def sanitize(name: str) -> str:
    """MLIR's sanitizeIdentifier for value names: invalid bytes as hex, ' ' as '_', and a
    leading '_' before a digit (numbers are the default names)."""
    if all(c in _VALID for c in name) and not name[0].isdigit():
        return name
    out = ["_"] if name[0].isdigit() else []
    for byte in name.encode("utf-8"):
        char = chr(byte)
        if char in _VALID:
            out.append(char)
        elif char == " ":
            out.append("_")
        else:
            out.append(f"{byte:X}")
    return "".join(out)


def name_from_location(loc) -> str | None:
    """The name of the first NameLoc in `loc`, pre-order (MLIR's findInstanceOf<NameLoc>)."""
    kind = type(loc)
    if kind is NameLoc:
        return loc.name
    if kind is CallSiteLoc:
        return name_from_location(loc.callee) or name_from_location(loc.caller)
    if kind is FusedLoc:
        for inner in loc.locations:
            found = name_from_location(inner)
            if found is not None:
                return found
    return None


class NameState:
    """Printable names of every value and block under `root`.

    `refs[value]` is the text of a use (`%x`, `%3`, `%x#1`), `result_texts[op]` the text
    before ` = ` (`%x`, `%x:2`, `%a, %b`), `block_names[block]` the label (`^bb1`).
    """

    def __init__(
        self,
        root,
        result_names: Callable | None = None,
        name_locations: bool = True,
        unique: bool = False,
        argument_names: Callable | None = None,
    ):
        self.refs: dict = {}
        self.result_texts: dict = {}
        self.block_names: dict = {}
        self.block_order: dict = {}
        self._result_names = result_names  # op -> [(index, name)] or None
        self._argument_names = argument_names  # region -> [(argument, name)] or None
        self._name_locations = name_locations
        self._loc_names: dict = {}
        self._used: set[str] = set()
        self._scopes: list[list[str]] = [[]]
        self.next_value = self.next_arg = self.next_conflict = 0
        stack = [(r, 0, 0, 0, 0) for r in root.regions]
        self._number_op(root)
        while stack:
            region, *counters, parent = stack.pop()
            if not unique:  # the generic form numbers values uniquely across regions
                self.next_value, self.next_arg, self.next_conflict = counters
            scopes = self._scopes
            while len(scopes) - 1 > parent:
                self._used.difference_update(scopes.pop())
            scopes.append([])
            depth = len(scopes) - 1
            self._number_region(region)
            counters = (self.next_value, self.next_arg, self.next_conflict, depth)
            for block in region.blocks:
                for op in block:
                    for nested in op.regions:
                        stack.append((nested, *counters))

    def _location_name(self, loc) -> str | None:
        if not self._name_locations:
            return None
        cache = self._loc_names
        if loc in cache:
            return cache[loc]
        name = cache[loc] = name_from_location(loc)
        return name

    def _unique(self, name: str) -> str:
        name = sanitize(name)
        used = self._used
        if name in used:
            base = name + "_"
            while True:
                candidate = base + str(self.next_conflict)
                self.next_conflict += 1
                if candidate not in used:
                    name = candidate
                    break
        used.add(name)
        self._scopes[-1].append(name)
        return name

    def _set_name(self, value, name: str | None) -> None:
        if name:
            self.refs[value] = "%" + self._unique(name)
        else:
            self.refs[value] = f"%{self.next_value}"
            self.next_value += 1

    def _number_region(self, region) -> None:
        hook = self._argument_names
        given = dict(hook(region) or ()) if hook is not None else {}
        for order, block in enumerate(region.blocks):
            self.block_names[block] = f"^bb{order}"
            self.block_order[block] = order
            entry = order == 0
            for arg in block.arguments:
                special = given.get(arg, "")
                if entry and not special:  # as MLIR: a named argument takes no `argN`
                    special = f"arg{self.next_arg}"
                    self.next_arg += 1
                from_loc = self._location_name(arg.location)
                self._set_name(arg, from_loc or special)
            for op in block:
                self._number_op(op)

    def _number_op(self, op) -> None:
        results = op.results
        refs = self.refs
        groups = [0]
        hook = self._result_names
        named = hook(op) if hook is not None else None
        if named:
            from_loc = self._location_name(op.location)
            for index, name in named:
                self._set_name(results[index], from_loc or name)
                if index:
                    groups.append(index)
        if not results:
            return
        first = results[0]
        if first not in refs:
            self._set_name(first, self._location_name(op.location))
        if len(results) == 1:
            self.result_texts[op] = refs[first]
            return
        groups.sort()
        bounds = [*groups, len(results)]
        texts = []
        for start, end in itertools.pairwise(bounds):
            head = refs[results[start]]
            size = end - start
            texts.append(head if size == 1 else f"{head}:{size}")
            if size > 1:
                for k in range(start, end):
                    refs[results[k]] = f"{head}#{k - start}"
        self.result_texts[op] = ", ".join(texts)
