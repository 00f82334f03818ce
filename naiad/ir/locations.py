"""Location attributes: where an op came from, printed `loc(...)` as MLIR and Triton print them."""

from __future__ import annotations

from collections.abc import Iterable

from .attributes import Attribute
from .syntax import quote_string


class Location(Attribute):
    """Base of locations. `_body()` is the text inside `loc(...)`, used when nested."""

    __slots__ = ()

    def _spelling(self) -> str:
        return f"loc({self._body()})"

    def _body(self) -> str:
        raise NotImplementedError


class UnknownLoc(Location):
    """`loc(unknown)`."""

    __slots__ = ()

    def __new__(cls):
        return cls._intern()

    def _body(self) -> str:
        return "unknown"


class FileLineColLoc(Location):
    """`loc("kernel.py":12:8)`: a file, a 1-based line and a column."""

    __slots__ = ("filename", "line", "col")  # noqa: RUF023 (order = parameters)
    filename: str
    line: int
    col: int

    def __new__(cls, filename: str, line: int, col: int):
        return cls._intern(str(filename), int(line), int(col))

    def _body(self) -> str:
        return f"{quote_string(self.filename)}:{self.line}:{self.col}"


class NameLoc(Location):
    """`loc("x"(child))`: a name (a variable, a callee) on top of another location."""

    __slots__ = ("name", "child")  # noqa: RUF023 (order = parameters)
    name: str
    child: Location

    def __new__(cls, name: str, child: Location | None = None):
        return cls._intern(str(name), UnknownLoc() if child is None else child)

    def _body(self) -> str:
        if isinstance(self.child, UnknownLoc):
            return quote_string(self.name)
        return f"{quote_string(self.name)}({self.child._body()})"


class CallSiteLoc(Location):
    """`loc(callsite(callee at caller))`: code inlined from `callee`, called at `caller`."""

    __slots__ = ("callee", "caller")
    callee: Location
    caller: Location

    def __new__(cls, callee: Location, caller: Location):
        return cls._intern(callee, caller)

    def _body(self) -> str:
        return f"callsite({self.callee._body()} at {self.caller._body()})"


class FusedLoc(Location):
    """`loc(fused<metadata>[a, b])`: several locations merged (by CSE, by fusion).

    Construction normalizes as MLIR's FusedLoc::get does: nested fused locations with the same
    metadata are flattened, unknowns and duplicates dropped, and a single location without
    metadata is returned as itself, so the parser builds what the printer printed.
    """

    __slots__ = ("locations", "metadata")
    locations: tuple[Location, ...]
    metadata: Attribute | None

    def __new__(cls, locations: Iterable[Location], metadata: Attribute | None = None):
        flat: dict[Location, None] = {}
        for loc in locations:
            if isinstance(loc, FusedLoc) and loc.metadata is metadata:
                flat.update(dict.fromkeys(loc.locations))
            elif not isinstance(loc, UnknownLoc):
                flat[loc] = None
        if not flat:
            return UnknownLoc() if metadata is None else cls._intern((UnknownLoc(),), metadata)
        if len(flat) == 1 and metadata is None:
            return next(iter(flat))
        return cls._intern(tuple(flat), metadata)

    def _body(self) -> str:
        metadata = "" if self.metadata is None else f"<{self.metadata}>"
        return f"fused{metadata}[{', '.join(loc._body() for loc in self.locations)}]"


def file_line_col(loc: Location, call_sites: bool = True) -> FileLineColLoc | None:
    """The source position a diagnostic should show: through names, to the callee of a call
    site (the innermost code; None there without `call_sites`, for a caller that resolves call
    sites apart: backends/debug_info.py), to the first position of a fused location."""
    if isinstance(loc, FileLineColLoc):
        return loc
    if isinstance(loc, NameLoc):
        return file_line_col(loc.child, call_sites)
    if isinstance(loc, CallSiteLoc):
        return file_line_col(loc.callee, call_sites) if call_sites else None
    if isinstance(loc, FusedLoc):
        for inner in loc.locations:
            found = file_line_col(inner, call_sites)
            if found is not None:
                return found
    return None


def argument_names(func) -> list[str]:
    """The names of a function's arguments: their name locations (the frontend gives each
    kernel argument its parameter's name), else `arg<i>`."""
    names = []
    for i, arg in enumerate(func.arguments):
        loc = arg.location
        names.append(loc.name if isinstance(loc, NameLoc) else f"arg{i}")
    return names
