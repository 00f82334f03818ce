"""The linear algebra of layouts over GF(2): products, composition, inverses, and what a map
reaches (injective, surjective, its redundant input bits).

LinearLayout (linear_layout.py) mixes these in; they read its packed bases directly (see that
module's doc for the representation) and build their results with `_make`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .bits import GF2Solver, field_shifts, repack, xor_bits

if TYPE_CHECKING:
    from .linear_layout import LinearLayout


class LayoutAlgebra:
    """Products, composition and inverses of LinearLayout (which mixes this in)."""

    __slots__ = ()

    def __mul__(self, outer: LinearLayout) -> LinearLayout:
        """The product `self * outer`: `outer` repeats `self`. Shared input dimensions put
        `outer`'s bits above `self`'s; shared output dimensions scale `outer`'s coordinates by
        `self`'s size. Dimensions are `self`'s, then `outer`'s new ones."""
        outs = list(self._outs) + [n for n in outer._outs if n not in self._outs]
        bits = [self.out_dim_size_log2(n) + outer.out_dim_size_log2(n) for n in outs]
        shifts = field_shifts(bits)
        inner_map = [(shifts[outs.index(n)], b) for n, b in zip(self._outs, self._out_bits)]
        outer_map = [
            (shifts[outs.index(n)] + self.out_dim_size_log2(n), b)
            for n, b in zip(outer._outs, outer._out_bits)
        ]
        ins = list(self._ins) + [n for n in outer._ins if n not in self._ins]
        rows = []
        for name in ins:
            row = [repack(b, self._shifts, inner_map) for b in self.packed_bases(name)]
            row += [repack(b, outer._shifts, outer_map) for b in outer.packed_bases(name)]
            rows.append(row)
        return self._make(ins, rows, outs, bits)

    def compose(self, outer: LinearLayout) -> LinearLayout:
        """`outer ∘ self`: this layout's outputs feed `outer`'s inputs of the same names (each
        no larger than `outer`'s input); the result maps this layout's inputs to `outer`'s
        outputs."""
        if set(outer._ins) != set(self._outs):
            raise ValueError(f"compose: inputs {outer._ins} do not match outputs {self._outs}")
        feeds = []
        for k, name in enumerate(self._outs):
            if self._out_bits[k] > outer.in_dim_size_log2(name):
                raise ValueError(f"compose: {name} is larger than the outer layout's input")
            feeds.append((self._shifts[k], (1 << self._out_bits[k]) - 1, outer.packed_bases(name)))
        rows = []
        for row in self._bases:
            new_row = []
            for packed in row:
                result = 0
                for shift, mask, bases in feeds:
                    result ^= xor_bits(bases, (packed >> shift) & mask)
                new_row.append(result)
            rows.append(new_row)
        return self._make(self._ins, rows, outer._outs, outer._out_bits)

    def invert(self) -> LinearLayout:
        """The inverse map (outputs -> inputs); the layout must be bijective."""
        if self.total_in_bits != self.total_out_bits or not self.is_injective():
            raise ValueError("invert: the layout is not bijective")
        return self.pseudo_invert()

    def pseudo_invert(self) -> LinearLayout:
        """A right inverse R (outputs -> inputs, with L(R(x)) = x) of a surjective layout: each
        output gets the preimage whose free input bits (`free_variable_masks`) are zero."""
        solver = GF2Solver(self._columns())
        rows = []
        for k, bits in enumerate(self._out_bits):
            row = []
            for i in range(bits):
                x = solver.solve(1 << (self._shifts[k] + i))
                if x is None:
                    raise ValueError("pseudo_invert: the layout is not surjective")
                row.append(x)
            rows.append(row)
        return self._make(self._outs, rows, self._ins, [len(b) for b in self._bases])

    def invert_and_compose(self, outer: LinearLayout) -> LinearLayout:
        """C with outer(C(x)) = self(x): for each input of this layout, an input of `outer`
        that holds the same element. For `convert_layout` from this layout to `outer`, C maps
        the source's (register, lane, warp) to the destination's. Among several preimages
        (`outer` broadcasts), the one with `outer`'s free bits zero is chosen.

        Raises ValueError when some element of this layout is not held by `outer`.
        """
        if set(outer._outs) != set(self._outs):
            raise ValueError(f"outputs {self._outs} and {outer._outs} differ")
        target = [
            (self._shifts[k], outer._shifts[outer._outs.index(n)], self._out_bits[k])
            for k, n in enumerate(self._outs)
        ]
        for n, b in zip(self._outs, self._out_bits):
            if b > outer.out_dim_size_log2(n):
                raise ValueError(f"{n} is larger than the other layout's")
        solver = GF2Solver(outer._columns())
        rows = []
        for row in self._bases:
            new_row = []
            for packed in row:
                moved = 0
                for src, dst, bits in target:
                    moved |= ((packed >> src) & ((1 << bits) - 1)) << dst
                x = solver.solve(moved)
                if x is None:
                    raise ValueError("invert_and_compose: an element has no preimage")
                new_row.append(x)
            rows.append(new_row)
        # The solutions are packed inputs of `outer`: as outputs, they keep that encoding.
        out_bits = [outer.in_dim_size_log2(n) for n in outer._ins]
        return self._make(self._ins, rows, outer._ins, out_bits)

    # -- what the map reaches

    def is_injective(self) -> bool:
        """Whether distinct inputs map to distinct outputs (no element held twice)."""
        solver = GF2Solver(self._columns())
        return solver.rank == self.total_in_bits

    def is_surjective(self) -> bool:
        """Whether every output coordinate is held by some input."""
        return GF2Solver(self._columns()).rank == self.total_out_bits

    def is_invertible(self) -> bool:
        return self.total_in_bits == self.total_out_bits and self.is_injective()

    def free_variable_masks(self) -> dict[str, int]:
        """Input dimension -> its redundant bits: a bit is redundant when its basis lies in the
        span of the bases before it (inputs in order, low bits first). The inputs whose
        redundant bits are all zero hold every element of the image exactly once, so only they
        need to store (duplicate elimination)."""
        solver = GF2Solver([])
        masks = {}
        for name, row in zip(self._ins, self._bases):
            mask = 0
            for i, b in enumerate(row):
                if not solver.add(b):
                    mask |= 1 << i
            masks[name] = mask
        return masks
