"""The kinds of a kernel's values as ast_shapes.py reads them, and how they combine: a shape
(a tuple of the most elements each dimension may have; a scalar's, SCALAR, is empty), a tuple of
kinds (`("tuple", kinds)`), a block pointer or a tensor descriptor with its block's shape
(`("pointer", shape)`, `("descriptor", shape)`). Where two kinds cannot combine, `join`
raises Incomplete and `broadcast` answers None."""

from __future__ import annotations

SCALAR = ()


class Incomplete(Exception):
    """The reading met what it cannot tell (the caller keeps its coarser bound)."""


def is_kind(kind, tag: str) -> bool:
    """Whether `kind` is the tagged kind `tag` ("tuple", "pointer" or "descriptor")."""
    return tagged(kind) and kind[0] == tag


def tagged(kind) -> bool:
    """Whether `kind` is a tuple, a block pointer or a descriptor (not a shape)."""
    return isinstance(kind, tuple) and len(kind) == 2 and isinstance(kind[0], str)


def plain(kind):
    """`kind` where it is a shape (not a tuple, a block pointer or a descriptor), else None."""
    return kind if isinstance(kind, tuple) and not tagged(kind) else None


def broadcast(kinds: list):
    """The shape of an elementwise result of values of `kinds` (a block pointer passes through
    a call of it alone, as a load's); None where they are not all shapes."""
    pointers = [k for k in kinds if is_kind(k, "pointer")]
    if pointers:
        return pointers[0] if len(kinds) == 1 else None
    shapes = [plain(k) for k in kinds]
    if None in shapes:
        return None
    rank = max((len(s) for s in shapes), default=0)
    padded = [(1,) * (rank - len(s)) + s for s in shapes]
    return tuple(max(d) for d in zip(*padded)) if padded else SCALAR


def join(one, other):
    """The kind of a value that is `one` on a path and `other` on another."""
    if one == other or other == SCALAR:
        return one
    if one == SCALAR:
        return other
    if is_kind(one, "tuple") and is_kind(other, "tuple") and len(one[1]) == len(other[1]):
        return ("tuple", tuple(join(a, b) for a, b in zip(one[1], other[1])))
    if plain(one) is not None and plain(other) is not None and len(one) == len(other):
        return tuple(max(a, b) for a, b in zip(one, other))
    raise Incomplete


def dot(a, b):
    """The shape of `a @ b` (batched where they have three dimensions), or None."""
    a, b = plain(a), plain(b)
    if a is None or b is None or len(a) != len(b) or len(a) < 2:
        return None
    return (*a[:-1], b[-1])
