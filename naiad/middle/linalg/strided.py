"""The states the pointer analysis gives a block of offsets or pointers.

`Strided` is the affine form `start + Σ_d i_d · strides[d]` over a block's indices, optionally
plus one `Wrap`: a range folded back by a remainder, `((s + i_w) mod m) · scale` along one
dimension w — the tutorial matmul's `(pid_m * BM + tl.arange(0, BM)) % M`. A wrapped block is
still a strided view between two wrap points, which is how loads and stores read it (runs of
consecutive rows; see emit_memory.py); every other consumer (mask analysis, sums of two wrapped
blocks) treats a wrap as unstructured.

States are immutable; the operations return new ones, or None when the result leaves the form.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...ir import Value
from .index_expr import ZERO, IndexExpr


@dataclass(frozen=True)
class Wrap:
    """`((start + i_dim) mod modulus) · scale`, added to a block's offsets (mod is the kernel's
    `remsi`: C's remainder, and `x % 0 = x`)."""

    dim: int
    start: IndexExpr
    modulus: IndexExpr
    scale: IndexExpr

    def scaled(self, factor: IndexExpr) -> Wrap:
        return replace(self, scale=self.scale * factor)

    def moved(self, dim: int) -> Wrap:
        return replace(self, dim=dim)


@dataclass(frozen=True)
class Strided:
    """`value[i_0, ..., i_{r-1}] = start + Σ_d i_d · strides[d]` (+ the wrap) over `shape`."""

    shape: tuple[int, ...]
    start: IndexExpr
    strides: tuple[IndexExpr, ...]
    wrap: Wrap | None = None

    @property
    def is_uniform(self) -> bool:
        """Every element equal (all strides zero, no wrap)."""
        return self.wrap is None and all(s.constant_value == 0 for s in self.strides)

    @property
    def is_affine(self) -> bool:
        """No wrap: the offsets are a polynomial of the indices."""
        return self.wrap is None

    def normalized(self) -> Strided:
        """Size-1 dimensions get stride 0: their index is always 0, so any stride means the same."""
        strides = tuple(ZERO if n == 1 else s for n, s in zip(self.shape, self.strides))
        return replace(self, strides=strides)

    def with_start(self, start: IndexExpr) -> Strided:
        return replace(self, start=start)

    def same_layout(self, other: Strided) -> bool:
        """Equal shape, strides and wrap: the two differ only by their start."""
        return (self.shape, self.strides, self.wrap) == (other.shape, other.strides, other.wrap)

    def plus(self, other: Strided, sign: int = 1) -> Strided | None:
        """`self + sign · other` (None when both wrap: two wraps have no common run)."""
        if self.wrap is not None and other.wrap is not None:
            return None
        wrap = self.wrap
        if other.wrap is not None:
            wrap = other.wrap.scaled(IndexExpr.constant(sign))
        start = self.start + other.start if sign > 0 else self.start - other.start
        strides = tuple(a + b if sign > 0 else a - b for a, b in zip(self.strides, other.strides))
        return Strided(self.shape, start, strides, wrap).normalized()

    def scaled(self, factor: IndexExpr) -> Strided:
        wrap = None if self.wrap is None else self.wrap.scaled(factor)
        strides = tuple(s * factor for s in self.strides)
        return Strided(self.shape, self.start * factor, strides, wrap).normalized()

    def expanded(self, axis: int, shape) -> Strided:
        """A size-1 dimension inserted at `axis`."""
        strides = list(self.strides)
        strides.insert(axis, ZERO)
        wrap = self.wrap
        if wrap is not None and wrap.dim >= axis:
            wrap = wrap.moved(wrap.dim + 1)
        return Strided(tuple(shape), self.start, tuple(strides), wrap)

    def broadcast(self, shape) -> Strided:
        return replace(self, shape=tuple(shape))

    def permuted(self, order, shape) -> Strided:
        """Dimension d of the result is dimension order[d] of this block."""
        wrap = self.wrap
        if wrap is not None:
            wrap = wrap.moved(list(order).index(wrap.dim))
        strides = tuple(self.strides[d] for d in order)
        return Strided(tuple(shape), self.start, strides, wrap)


def splat(shape, start: IndexExpr) -> Strided:
    """Every element `start`."""
    return Strided(tuple(shape), start, (ZERO,) * len(shape))


@dataclass(frozen=True)
class PointerState:
    """A structured pointer (block): `base` (a pointer argument) plus `offsets`, in elements of
    the base's pointee type."""

    base: Value
    offsets: Strided

    def map(self, function) -> PointerState:
        return PointerState(self.base, function(self.offsets))
