"""Affine expressions and maps, MLIR's builtin `affine_map<(d0, d1)[s0] -> (d0, d1 * 2 + s0)>`.

Linalg ops say with an affine map which element of each operand an iteration of their loop nest
touches; the CPU back end evaluates the maps on integer tuples to compute loop indices.

A map's results are affine expressions (affine_expr.py, re-exported here), which simplify as
MLIR's do, so that a map reads back from the text exactly as MLIR would hold it and prints as
MLIR prints it (`d0 - d1` for `d0 + d1 * -1`).

    d0, d1 = dim(0), dim(1)
    AffineMap(2, 1, [d0, d1 * 2 + symbol(0)])     # (d0, d1)[s0] -> (d0, d1 * 2 + s0)
    AffineMap.identity(2).evaluate((3, 4))        # (3, 4)
    AffineMapAttr(AffineMap.broadcast((4, 1), (4, 8)))  # affine_map<(d0, d1) -> (d0, 0)>

As in MLIR, a sum to the right of `+` prints without parentheses (`d0 + (d1 + d2)` prints as
`d0 + d1 + d2`), so such a map reads back associated to the left: equal in value, another tree.
The maps of structured ops are sums of scaled dimensions built left to right, which read back
as themselves.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .affine_expr import (  # noqa: F401  (the expression API, re-exported)
    ADD,
    CEILDIV,
    FLOORDIV,
    MOD,
    MUL,
    AffineBinaryExpr,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineSymbolExpr,
    as_expr,
    constant,
    dim,
    symbol,
)
from .attributes import Attribute
from .interning import Interned


class AffineMap(Interned):
    """`(d0, ..., d<num_dims-1>)[s0, ...] -> (results)`: from loop indices (and symbols) to
    one index per result."""

    __slots__ = ("num_dims", "num_symbols", "results")
    num_dims: int
    num_symbols: int
    results: tuple[AffineExpr, ...]

    def __new__(cls, num_dims: int, num_symbols: int, results: Iterable):
        results = tuple(as_expr(r) for r in results)
        for e in results:
            _check_positions(e, num_dims, num_symbols)
        return cls._intern(int(num_dims), int(num_symbols), results)

    @classmethod
    def identity(cls, rank: int) -> AffineMap:
        """`(d0, d1) -> (d0, d1)`."""
        return cls(rank, 0, [dim(i) for i in range(rank)])

    @classmethod
    def projection(cls, rank: int, dims: Iterable[int]) -> AffineMap:
        """`(d0, d1, d2) -> (d0, d2)` for dims (0, 2): the loop dimensions an operand keeps
        (the input of a reduction keeps all, its result drops the reduced ones)."""
        return cls(rank, 0, [dim(d) for d in dims])

    @classmethod
    def permutation(cls, permutation: Sequence[int]) -> AffineMap:
        """`(d0, d1) -> (d1, d0)` for (1, 0)."""
        if sorted(permutation) != list(range(len(permutation))):
            raise ValueError(f"{tuple(permutation)} is not a permutation")
        return cls(len(permutation), 0, [dim(d) for d in permutation])

    @classmethod
    def broadcast(cls, source_shape: Sequence[int], result_shape: Sequence[int]) -> AffineMap:
        """The map reading a `source_shape` operand in a loop nest over `result_shape`, as
        NumPy broadcasts: missing leading dimensions are dropped and a size-1 dimension that
        is broadcast reads index 0. (4, 1) in (4, 8): `(d0, d1) -> (d0, 0)`."""
        rank = len(result_shape)
        skip = rank - len(source_shape)
        if skip < 0:
            raise ValueError(f"cannot broadcast {tuple(source_shape)} to {tuple(result_shape)}")
        results = []
        for i, size in enumerate(source_shape):
            target = result_shape[skip + i]
            if size == target:
                results.append(dim(skip + i))
            elif size == 1:
                results.append(constant(0))
            else:
                raise ValueError(f"cannot broadcast {tuple(source_shape)} to {tuple(result_shape)}")
        return cls(rank, 0, results)

    @property
    def num_results(self) -> int:
        return len(self.results)

    @property
    def num_inputs(self) -> int:
        return self.num_dims + self.num_symbols

    def is_identity(self) -> bool:
        return self.num_symbols == 0 and self.results == tuple(dim(i) for i in range(self.num_dims))

    def is_projected_permutation(self) -> bool:
        """Results are distinct dimensions (no symbols, constants or arithmetic)."""
        seen = set()
        for e in self.results:
            if not isinstance(e, AffineDimExpr) or e.position in seen:
                return False
            seen.add(e.position)
        return self.num_symbols == 0

    def drop_results(self, positions: Iterable[int]) -> AffineMap:
        """This map without the results at `positions`."""
        dropped = set(positions)
        kept = [e for i, e in enumerate(self.results) if i not in dropped]
        return AffineMap(self.num_dims, self.num_symbols, kept)

    def compose(self, inner: AffineMap) -> AffineMap:
        """`self ∘ inner`: this map applied to `inner`'s results (as MLIR's compose), over
        `inner`'s dimensions. Neither map may have symbols."""
        if self.num_symbols or inner.num_symbols or self.num_dims != inner.num_results:
            raise ValueError(f"cannot compose {self} with {inner}")
        return AffineMap(inner.num_dims, 0, [_substitute(e, inner.results) for e in self.results])

    def evaluate(self, dims: Sequence[int], symbols: Sequence[int] = ()) -> tuple[int, ...]:
        """The results for the given dimension (and symbol) values."""
        if len(dims) != self.num_dims or len(symbols) != self.num_symbols:
            raise ValueError(
                f"{self} takes {self.num_dims} dims and {self.num_symbols} symbols, got "
                f"{len(dims)} and {len(symbols)}"
            )
        return tuple(e.evaluate(dims, symbols) for e in self.results)

    def _spelling(self) -> str:
        dims = ", ".join(f"d{i}" for i in range(self.num_dims))
        symbols = ", ".join(f"s{i}" for i in range(self.num_symbols))
        symbols = f"[{symbols}]" if self.num_symbols else ""
        return f"({dims}){symbols} -> ({', '.join(str(e) for e in self.results)})"


def _substitute(e: AffineExpr, dims: Sequence[AffineExpr]) -> AffineExpr:
    """`e` with each dimension d<i> replaced by `dims[i]`, simplified as it is rebuilt."""
    if isinstance(e, AffineDimExpr):
        return dims[e.position]
    if isinstance(e, AffineBinaryExpr):
        lhs, rhs = _substitute(e.lhs, dims), _substitute(e.rhs, dims)
        if e.kind == "add":
            return lhs + rhs
        if e.kind == "mul":
            return lhs * rhs
        if e.kind == "mod":
            return lhs % rhs
        if e.kind == "floordiv":
            return lhs // rhs
        return lhs.ceildiv(rhs)
    return e


def _check_positions(e: AffineExpr, num_dims: int, num_symbols: int) -> None:
    if isinstance(e, AffineBinaryExpr):
        _check_positions(e.lhs, num_dims, num_symbols)
        _check_positions(e.rhs, num_dims, num_symbols)
    elif isinstance(e, AffineDimExpr) and e.position >= num_dims:
        raise ValueError(f"d{e.position} in a map of {num_dims} dims")
    elif isinstance(e, AffineSymbolExpr) and e.position >= num_symbols:
        raise ValueError(f"s{e.position} in a map of {num_symbols} symbols")


class AffineMapAttr(Attribute):
    """`affine_map<(d0) -> (d0)>`: an affine map used as an attribute."""

    __slots__ = ("value",)
    value: AffineMap

    def __new__(cls, value: AffineMap):
        if not isinstance(value, AffineMap):
            raise TypeError(f"AffineMapAttr needs an AffineMap, got {value!r}")
        return cls._intern(value)

    def _spelling(self) -> str:
        return f"affine_map<{self.value}>"
