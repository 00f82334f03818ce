"""Regions and blocks while parsing: `{ ops, ^blocks }`, block labels defined before or after
their use as successors, and the entry block's arguments.

Block labels are scoped per region, as MLIR scopes them; a label used as a successor and never
defined is an error when its region ends.
"""

from __future__ import annotations

from .block import Block, Region
from .lexer import BLOCK_ID
from .locations import FileLineColLoc, Location
from .parse_values import Argument


class RegionParser:
    """Regions and blocks for Parser, which mixes this in: each op is its parse_operation, each
    SSA name ValueScopes' (the scopes a region opens)."""

    def _init_regions(self) -> None:
        self._blocks: list[dict[str, list]] = []  # per region: label -> [block, defined, pos]

    def parse_region(self, arguments: list[Argument] | None = None, isolated=False) -> Region:
        """`{ ops, ^blocks }`; `arguments` (read by a custom parser) become the entry block's.

        `{}` without arguments is a region without blocks. The entry block has no label when
        it has named arguments; otherwise it may be labeled (`^bb0(%a: i32):`)."""
        lex = self.lex
        lex.expect("{", "to begin a region")
        region = Region()
        self._push_scope(isolated)
        self._blocks.append({})
        if arguments:
            if lex.peek("^"):
                raise self.error("invalid block name in region with named arguments")
            entry = region.add_block()
            for arg in arguments:
                self._add_argument(entry, arg)
            self._parse_block_body(entry)
        elif not lex.peek("}") and not lex.peek("^"):
            self._parse_block_body(region.add_block())
        while lex.peek("^"):
            self._parse_labeled_block(region)
        lex.expect("}", "to end the region")
        self._check_blocks(region)
        self._blocks.pop()
        self._pop_scope(isolated)
        return region

    def _add_argument(self, block: Block, arg: Argument):
        location = arg.location or self._source_location(arg.pos)
        value = block.add_argument(arg.type, location)
        if arg.deferred:
            self._deferred_owners.append(value)
        self.define_value(arg.name, value, arg.pos)
        return value

    def _parse_block_body(self, block: Block) -> None:
        lex = self.lex
        while not lex.peek("}") and not lex.peek("^"):
            if lex.at_end():
                raise self.error("expected '}' to end the region")
            self.parse_operation(block)

    def _parse_labeled_block(self, region: Region) -> None:
        lex = self.lex
        pos = lex.pos
        m = lex.take(BLOCK_ID)
        if m is None:
            raise self.error("expected block name after '^'")
        entry = self._blocks[-1].get(m.group(1))
        if entry is not None and entry[1]:
            raise self.error(f"redefinition of block '^{m.group(1)}'", pos)
        if entry is None:
            entry = self._blocks[-1][m.group(1)] = [Block(), True, pos]
        entry[1] = True
        block = entry[0]
        region.add_block(block)
        if lex.accept("(") and not lex.accept(")"):
            while True:
                self._add_argument(block, self._parse_argument(allow_attributes=False))
                if not lex.accept(","):
                    break
            lex.expect(")", "to end the block arguments")
        lex.expect(":", "after the block name")
        self._parse_block_body(block)

    def _check_blocks(self, region: Region) -> None:
        for name, (_, defined, pos) in self._blocks[-1].items():
            if not defined:
                raise self.error(f"reference to an undefined block '^{name}'", pos)

    def parse_successor(self) -> Block:
        """`^name`: a block of the current region, defined before or after."""
        pos = self.lex.pos
        m = self.lex.take(BLOCK_ID)
        if m is None:
            raise self.error(f"expected block name, found {self.lex.describe_next()}")
        blocks = self._blocks[-1]
        entry = blocks.get(m.group(1))
        if entry is None:
            entry = blocks[m.group(1)] = [Block(), False, pos]
        return entry[0]

    def _source_location(self, pos: int) -> Location:
        line, col = self.lex.line_col(pos)
        return FileLineColLoc(self.lex.filename, line, col)
