"""Symbolic integer expressions: the offsets and strides the pointer analysis reasons about.

An `IndexExpr` is a polynomial with integer coefficients over *leaves*, the scalar integer SSA
values of the TTIR being converted (a kernel argument, a program id, a loop variable, a loaded
value ...): `3 + 64·%pid + %row·%stride`. Sums and products of such expressions stay exact, so
the analysis can tell that a stride is the constant 1 (a contiguous view) or that two pointer
blocks advance by the same amount, and the conversion materializes an expression as `index`
arithmetic only where a view needs it.

Offsets are computed exactly, in unbounded integers: an offset computation that overflows its
32-bit type in the kernel is assumed not to happen (on a GPU such an offset addresses memory
outside the argument, which Naiad's debug mode reports). Narrower arithmetic and integer casts
are not assumed exact: casts.py says where the analysis may look through them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import Value

Monomial = tuple[Value, ...]  # leaves, sorted by id(); () is the constant term


def _sorted(leaves) -> Monomial:
    return tuple(sorted(leaves, key=id))


@dataclass(frozen=True)
class IndexExpr:
    """Σ coefficient · Π leaves, kept with no zero coefficient (the zero expression has none)."""

    terms: tuple[tuple[Monomial, int], ...] = ()

    @staticmethod
    def constant(value: int) -> IndexExpr:
        return IndexExpr((((), int(value)),)) if value else ZERO

    @staticmethod
    def leaf(value: Value) -> IndexExpr:
        return IndexExpr((((value,), 1),))

    @property
    def constant_value(self) -> int | None:
        """The integer this expression always equals, or None when it depends on a leaf."""
        if not self.terms:
            return 0
        if len(self.terms) == 1 and self.terms[0][0] == ():
            return self.terms[0][1]
        return None

    @property
    def is_constant(self) -> bool:
        return self.constant_value is not None

    def leaves(self) -> set[Value]:
        return {leaf for monomial, _ in self.terms for leaf in monomial}

    def _combine(self, other: IndexExpr, sign: int) -> IndexExpr:
        result = dict(self.terms)
        for monomial, coefficient in other.terms:
            result[monomial] = result.get(monomial, 0) + sign * coefficient
        return IndexExpr(_canonical(result))

    def __add__(self, other: IndexExpr | int) -> IndexExpr:
        return self._combine(_expr(other), 1)

    def __sub__(self, other: IndexExpr | int) -> IndexExpr:
        return self._combine(_expr(other), -1)

    def __mul__(self, other: IndexExpr | int) -> IndexExpr:
        other = _expr(other)
        result: dict[Monomial, int] = {}
        for m1, c1 in self.terms:
            for m2, c2 in other.terms:
                monomial = _sorted(m1 + m2)
                result[monomial] = result.get(monomial, 0) + c1 * c2
        return IndexExpr(_canonical(result))

    def __neg__(self) -> IndexExpr:
        return ZERO - self

    def __repr__(self) -> str:
        if not self.terms:
            return "0"
        parts = []
        for monomial, coefficient in self.terms:
            names = "·".join(f"%{id(v) % 10007}" for v in monomial)
            parts.append(str(coefficient) if not monomial else f"{coefficient}·{names}")
        return " + ".join(parts)


def _canonical(terms: dict[Monomial, int]) -> tuple[tuple[Monomial, int], ...]:
    kept = [(m, c) for m, c in terms.items() if c]
    # Constant first, then by degree and leaf identity: equal polynomials compare equal.
    return tuple(sorted(kept, key=lambda mc: (len(mc[0]), [id(v) for v in mc[0]])))


def _expr(value: IndexExpr | int) -> IndexExpr:
    return value if isinstance(value, IndexExpr) else IndexExpr.constant(value)


ZERO = IndexExpr()
ONE = IndexExpr.constant(1)
