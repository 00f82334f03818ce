"""Location aliases, as MLIR prints them: `loc(#loc3)` on each op and `#loc3 = loc(...)` lines.

Every location gets an alias. They are collected in the order the printer meets them (an op's
location before its contents), each with a depth (1 for a leaf, else one more than its deepest
child), then numbered `#loc, #loc1, ...` after a stable sort by depth, so that a definition only
refers to aliases defined before it. Locations of block and function arguments are printed
inline and must be parsed before the module's ops: they and everything they refer to are
"non-deferrable" and their definitions go above the module; the rest go after it.
"""

from __future__ import annotations

from .locations import CallSiteLoc, FileLineColLoc, FusedLoc, NameLoc, UnknownLoc
from .syntax import quote_string


class _Alias:
    __slots__ = ("children", "deferrable", "depth", "name")

    def __init__(self, deferrable: bool):
        self.deferrable = deferrable
        self.depth = 1
        self.children: list[_Alias] = []
        self.name = ""


class LocationAliases:
    """Collects locations while printing, then names them and renders their text."""

    def __init__(self):
        self._aliases: dict = {}

    def visit(self, loc, deferrable: bool = True) -> _Alias:
        alias = self._aliases.get(loc)
        if alias is not None:
            if not deferrable and alias.deferrable:
                _mark_non_deferrable(alias)
            return alias
        alias = self._aliases[loc] = _Alias(deferrable)
        depth = 0
        for child in _children(loc):
            child_alias = self.visit(child, deferrable)
            alias.children.append(child_alias)
            depth = max(depth, child_alias.depth)
        alias.depth = depth + 1
        return alias

    def assign_names(self) -> list:
        """Name every alias; return the locations in definition order."""
        ordered = sorted(self._aliases, key=lambda loc: self._aliases[loc].depth)
        for index, loc in enumerate(ordered):
            self._aliases[loc].name = f"#loc{index}" if index else "#loc"
        return ordered

    def reference(self, loc) -> str:
        """`loc(#locN)`: an op's trailing location."""
        return f"loc({self._aliases[loc].name})"

    def inline(self, loc) -> str:
        """`loc(...)` spelled out, children by alias: an argument's location."""
        return f"loc({self.body(loc, top=True)})"

    def body(self, loc, top: bool = False) -> str:
        if not top:
            alias = self._aliases.get(loc)
            if alias is not None:
                return alias.name
        kind = type(loc)
        if kind is FileLineColLoc:
            return f"{quote_string(loc.filename)}:{loc.line}:{loc.col}"
        if kind is NameLoc:
            name = quote_string(loc.name)
            if type(loc.child) is UnknownLoc:
                return name
            return f"{name}({self.body(loc.child)})"
        if kind is CallSiteLoc:
            return f"callsite({self.body(loc.callee)} at {self.body(loc.caller)})"
        if kind is FusedLoc:
            metadata = "" if loc.metadata is None else f"<{loc.metadata}>"
            inner = ", ".join(self.body(x) for x in loc.locations)
            return f"fused{metadata}[{inner}]"
        if kind is UnknownLoc:
            return "unknown"
        return loc._body()

    def definitions(self, ordered: list, deferred: bool) -> list[tuple[int, str]]:
        """The `#locN = loc(...)` lines of the aliases that go before (or after) the module,
        each with its depth (1 for a leaf), in order."""
        lines = []
        for loc in ordered:
            alias = self._aliases[loc]
            if alias.deferrable == deferred:
                lines.append((alias.depth, f"{alias.name} = loc({self.body(loc, top=True)})\n"))
        return lines


def _children(loc) -> tuple:
    """The nested locations MLIR's printer visits, in its order."""
    kind = type(loc)
    if kind is NameLoc:
        return () if type(loc.child) is UnknownLoc else (loc.child,)
    if kind is CallSiteLoc:
        return (loc.callee, loc.caller)
    if kind is FusedLoc:
        return loc.locations
    return ()


def _mark_non_deferrable(alias: _Alias) -> None:
    if alias.deferrable:
        alias.deferrable = False
        for child in alias.children:
            _mark_non_deferrable(child)
