"""Parsing of locations: `loc(...)` of every kind, and `#loc` aliases used before they are
defined (as Triton's dumps define most of them after the module)."""

from __future__ import annotations

import re

from . import lexer as lx
from .locations import CallSiteLoc, FileLineColLoc, FusedLoc, Location, NameLoc, UnknownLoc

_T = lx._TAIL
_LOC_REF = re.compile(r"loc\(#([A-Za-z0-9_$.\-]+)\)" + _T)
_FILE_POS = re.compile(r":([0-9]+):([0-9]+)" + _T)


class DeferredLoc(Location):
    """A reference to a location alias not defined yet (`loc(#loc12)` before `#loc12 = ...`);
    the parser replaces it once the whole file is read."""

    __slots__ = ("alias",)
    alias: str

    def __new__(cls, alias: str):
        return cls._intern(alias)

    def _body(self) -> str:
        return f"#{self.alias}"


class LocationParser:
    """Locations, for a parser that also has `lex`, `attr_aliases`, `parse_string`,
    `parse_keyword` and `parse_attribute` (AttrParser)."""

    def _init_locations(self) -> None:
        self.deferred_uses: dict[str, int] = {}  # alias -> position of its first use
        self.deferred_count = 0  # DeferredLocs made so far
        self._deferred_aliases = False  # whether an alias definition holds a DeferredLoc

    def parse_trailing_location(self) -> Location | None:
        """An optional `loc(...)` after an op or argument."""
        lex = self.lex
        if not lex.text.startswith("loc(", lex.pos):
            return None
        m = lex.take(_LOC_REF)
        if m is not None:
            return self._location_alias(m.group(1), m.start() + 4)
        lex.pos += 3
        return self.parse_location_body()

    def parse_location_body(self) -> Location:
        """`(inner)`, after the keyword `loc`."""
        self.lex.expect("(", "after 'loc'")
        loc = self._parse_location_inner()
        self.lex.expect(")", "to close the location")
        return loc

    def _location_alias(self, name: str, pos: int) -> Location:
        loc = self.attr_aliases.get(name)
        if loc is None:
            self.deferred_uses.setdefault(name, pos)
            self.deferred_count += 1
            return DeferredLoc(name)
        if not isinstance(loc, Location):
            raise self.error(f"expected location, but '#{name}' is {loc}", pos)
        return loc

    def _parse_location_inner(self) -> Location:
        lex = self.lex
        start = lex.pos
        char = lex.next_char()
        if char == "#":
            m = lex.take(lx.HASH_ID)
            if m is None:
                raise self.error("expected location alias after '#'")
            return self._location_alias(m.group(1), start)
        if char == '"':
            name = self.parse_string()
            m = lex.take(_FILE_POS)
            if m is not None:
                return FileLineColLoc(name, int(m.group(1)), int(m.group(2)))
            if lex.accept("("):
                child = self._parse_location_inner()
                lex.expect(")", "to close the name location")
                return NameLoc(name, child)
            return NameLoc(name)
        word = self.parse_keyword("location")
        if word == "unknown":
            return UnknownLoc()
        if word == "callsite":
            lex.expect("(")
            callee = self._parse_location_inner()
            lex.expect("at", "in callsite location")
            caller = self._parse_location_inner()
            lex.expect(")")
            return CallSiteLoc(callee, caller)
        if word == "fused":
            metadata = None
            if lex.accept("<"):
                metadata = self.parse_attribute()
                lex.expect(">")
            lex.expect("[")
            locations = [self._parse_location_inner()]
            while lex.accept(","):
                locations.append(self._parse_location_inner())
            lex.expect("]")
            return FusedLoc(locations, metadata)
        raise self.error(f"expected location instance, found '{word}'", start)

    def resolve_location(self, loc: Location) -> Location:
        """`loc` with every DeferredLoc replaced by its alias's definition."""
        if isinstance(loc, DeferredLoc):
            target = self.attr_aliases.get(loc.alias)
            if target is None:
                raise self.error(
                    f"undefined location alias '#{loc.alias}'", self.deferred_uses[loc.alias]
                )
            if not isinstance(target, Location):
                raise self.error(
                    f"expected location, but '#{loc.alias}' is {target}",
                    self.deferred_uses[loc.alias],
                )
            return self.resolve_location(target) if self._deferred_aliases else target
        if isinstance(loc, NameLoc):
            return NameLoc(loc.name, self.resolve_location(loc.child))
        if isinstance(loc, CallSiteLoc):
            return CallSiteLoc(self.resolve_location(loc.callee), self.resolve_location(loc.caller))
        if isinstance(loc, FusedLoc):
            return FusedLoc([self.resolve_location(x) for x in loc.locations], loc.metadata)
        return loc
