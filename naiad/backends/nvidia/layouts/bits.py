"""Bit-level helpers of linear layouts: packed coordinate vectors and Gaussian elimination
over GF(2).

A vector of coordinates (one per dimension, each dimension a power-of-two size) is packed into
one int, dimension k in the bit field at `shifts[k]` (the first dimension lowest); XOR of packed
ints is then XOR of the vectors, which is all a linear layout computes with.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def log2_exact(size: int, what: str) -> int:
    """log2 of `size`, which must be a power of two (`what` names it in the error)."""
    if size < 1 or size & (size - 1):
        raise ValueError(f"{what} must be a power of two, got {size}")
    return size.bit_length() - 1


def xor_bits(bases: Sequence[int], value: int) -> int:
    """The XOR of `bases[i]` over the set bits `i` of `value`."""
    result = 0
    i = 0
    while value:
        if value & 1:
            result ^= bases[i]
        value >>= 1
        i += 1
    return result


def field_shifts(bits: Sequence[int]) -> tuple[int, ...]:
    """Where each field starts when fields of `bits` bits are packed, the first lowest."""
    shifts = []
    total = 0
    for b in bits:
        shifts.append(total)
        total += b
    return tuple(shifts)


def pack(vector, bits, shifts, names) -> int:
    """`vector` packed into fields (`names` label the range error)."""
    packed = 0
    for value, b, s, name in zip(vector, bits, shifts, names):
        if value < 0 or value >> b:
            raise ValueError(f"coordinate {value} of {name} is out of range ({1 << b})")
        packed |= value << s
    return packed


def repack(packed: int, shifts: Sequence[int], mapping) -> int:
    """Move each output field (at `shifts[k]`) to `mapping[k]` = (new shift, bits); None drops
    the field."""
    result = 0
    for shift, target in zip(shifts, mapping):
        if target is not None:
            new_shift, bits = target
            result |= ((packed >> shift) & ((1 << bits) - 1)) << new_shift
    return result


class GF2Solver:
    """Gaussian elimination over GF(2) on packed columns, kept incrementally: `add` a column,
    `solve` y = M x for x (packed input bits, earliest columns preferred)."""

    __slots__ = ("_pivots", "count", "rank")

    def __init__(self, columns: Iterable[int]):
        self._pivots: dict[int, tuple[int, int]] = {}  # leading bit -> (vector, combination)
        self.count = 0
        self.rank = 0
        for c in columns:
            self.add(c)

    def _reduce(self, vector: int) -> tuple[int, int]:
        combination = 0
        pivots = self._pivots
        while vector:
            top = vector.bit_length() - 1
            pivot = pivots.get(top)
            if pivot is None:
                return vector, combination
            vector ^= pivot[0]
            combination ^= pivot[1]
        return 0, combination

    def add(self, column: int) -> bool:
        """Add the next column; True if it is independent of the earlier ones."""
        vector, combination = self._reduce(column)
        index = self.count
        self.count += 1
        if not vector:
            return False
        self._pivots[vector.bit_length() - 1] = (vector, combination ^ (1 << index))
        self.rank += 1
        return True

    def solve(self, target: int) -> int | None:
        rest, combination = self._reduce(target)
        return None if rest else combination
