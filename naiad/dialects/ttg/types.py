"""The types of the `ttg` dialect.

`!ttg.memdesc<2x128x64xf16, #shared, #smem, mutable>` describes a buffer in shared memory: its
shape and element type, its shared encoding, its memory space, whether it may be written, and,
for a view into a larger allocation (`ttg.memdesc_subslice`), the allocation's shape as a
trailing `128x64`. `!ttg.async.token` orders asynchronous copies (`ttg.async_commit_group`,
`ttg.async_wait`) and the loads that read their data.
"""

from __future__ import annotations

import re

from ...ir import Attribute, DialectType, Type
from ..base import TypeClass

_DIMS = re.compile(r"([0-9]+(?:x[0-9]+)*)(?![0-9A-Za-z_])\s*")


class MemDescType(DialectType):
    """A descriptor of a tensor in shared memory (see the module doc). `alloc_shape` is the
    shape of the allocation this is a view of; equal to `shape` it is not printed."""

    __slots__ = ("shape", "element_type", "encoding", "memory_space", "mutable", "alloc_shape")  # noqa: RUF023
    dialect = "ttg"
    mnemonic = "memdesc"

    def __new__(
        cls,
        shape,
        element_type: Type,
        encoding: Attribute,
        memory_space: Attribute,
        mutable: bool = False,
        alloc_shape=None,
    ):
        shape = tuple(int(d) for d in shape)
        alloc = shape if alloc_shape is None else tuple(int(d) for d in alloc_shape)
        return cls._intern(shape, element_type, encoding, memory_space, bool(mutable), alloc)

    @property
    def rank(self) -> int:
        return len(self.shape)

    def clone(self, **changes) -> MemDescType:
        """This type with some parameters replaced (by their names)."""
        fields = {name: getattr(self, name) for name in self._params}
        if "shape" in changes and "alloc_shape" not in changes:
            fields["alloc_shape"] = None
        fields.update(changes)
        return MemDescType(**fields)

    def print_body(self) -> str:
        dims = "".join(f"{d}x" for d in self.shape)
        text = f"<{dims}{self.element_type}, {self.encoding}, {self.memory_space}"
        if self.mutable:
            text += ", mutable"
        if self.alloc_shape != self.shape:
            text += ", " + "x".join(map(str, self.alloc_shape))
        return text + ">"

    @classmethod
    def parse_body(cls, parser):
        parser.expect("<")
        shape = parser.parse_dimension_list()
        element = parser.parse_type()
        parser.expect(",")
        encoding = parser.parse_attribute()
        parser.expect(",")
        space = parser.parse_attribute()
        mutable = False
        alloc = None
        while parser.accept(","):
            if parser.parse_optional_keyword("mutable"):
                mutable = True
            else:
                alloc = _alloc_shape(parser)
        parser.expect(">")
        return cls(shape, element, encoding, space, mutable, alloc)


def _alloc_shape(parser) -> tuple[int, ...]:
    """`128x64`: the allocation shape after a memdesc's fields (no element type follows)."""
    m = parser.lex.take(_DIMS)
    if m is None:
        raise parser.error(f"expected 'mutable' or a shape, found {parser.lex.describe_next()}")
    return tuple(int(d) for d in m.group(1).split("x"))


class AsyncTokenType(DialectType):
    """`!ttg.async.token`: the completion of a group of asynchronous copies."""

    __slots__ = ()
    dialect = "ttg"
    mnemonic = "async.token"

    def __new__(cls):
        return cls._intern()


ASYNC_TOKEN = AsyncTokenType()
TTG_MemDesc = TypeClass(MemDescType, "shared memory descriptor")
TTG_AsyncToken = TypeClass(AsyncTokenType, "async token")
