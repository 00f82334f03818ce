"""The rounds of a `ttg.convert_layout` round trip: the scratch holds part of the tensor at once.

A round trip through the whole tile takes the tile's bytes of shared memory: a 128 x 256 f32
accumulator takes 128 KiB, more than a block may use on the 8.6 and 8.9 GPUs (A10, L4, RTX:
99 KiB), so the kernel could not launch there. Most such tensors repeat their pattern: a
register basis `r` that both layouts hold (the same tensor step at a register bit of the
source and at one of the destination) splits the elements into two halves, each thread
holding its elements of both halves at the same registers but for that bit. The conversion can
then move one half, wait, and move the other through the same bytes: the stores of the
registers with the bit 0, a barrier, the loads of the destination's registers with the bit 0,
a barrier, then the same with the bit 1. With `k` such bases, `2 ** k` rounds through
`1 / 2 ** k` of the scratch.

That is right when the elements the threads store in a round are those they load in it: the
source's other bases (registers, lanes, warps) and the destination's must span one and the
same space, which none of the round bases is in (a lane holding a round basis's element, a
repeated register equal to one, or another basis mixing one in would fetch an element from
another round). Any subset of bases meeting that meets it too, so the bases are taken greedily.
The bases kept for the vectors of the accesses (the common registers `convert_swizzle.py`
puts at the lowest offsets) are left out: a round splits a tile, never a vector.

Which conversions go in rounds, and how many, is allocate-shared-memory's choice
(passes/scratch_size.py lists the sizes a conversion can take); the shared layout puts the
round bases at its highest offset bits, so the round is the offset's top bits and its offset
in the scratch the rest (`convert_swizzle.py`, `convert_plan.py`).
"""

from __future__ import annotations

from functools import lru_cache

from ..layouts import LinearLayout
from ..layouts.bits import GF2Solver
from .convert_swizzle import MAX_VECTOR_BYTES, independent_registers, stmatrix_rows

_DIMS = ("register", "lane", "warp", "block")


def _rest(layout: LinearLayout, register_bits: set[int]) -> list[int]:
    """Every packed basis of `layout` but those of the given register bits."""
    rest = []
    for name in _DIMS:
        for bit, basis in enumerate(layout.packed_bases(name)):
            if not (name == "register" and bit in register_bits):
                rest.append(basis)
    return rest


def _splits(src: LinearLayout, dst: LinearLayout, bases: list[int]) -> bool:
    """Whether the source and the destination, without the register bits of `bases`, span
    the same space and one of `len(bases)` fewer dimensions than the tensor's (so none of
    `bases` is in it)."""
    src_bits, dst_bits = independent_registers(src), independent_registers(dst)
    rest_src = _rest(src, {src_bits[b] for b in bases})
    rest_dst = _rest(dst, {dst_bits[b] for b in bases})
    want = src.total_out_bits - len(bases)
    return (
        GF2Solver(rest_src).rank == want
        and GF2Solver(rest_dst).rank == want
        and GF2Solver(rest_src + rest_dst).rank == want
    )


@lru_cache(maxsize=1024)
def round_bases(
    src: LinearLayout, dst: LinearLayout, elem_bytes: int, stmatrix: bool | None = None
) -> tuple[int, ...]:
    """The packed register bases a round trip from `src` to `dst` can go in rounds along, the
    most first (the source's highest register bits first: the farthest repetitions of its
    pattern); the rounds of `2 ** k` use the first `k`. With `stmatrix` (False: plain, True:
    `.trans`) the stores' vectors are the three source bases along a matrix's row
    (`stmatrix_layout`), which alone are kept out: a 16-bit accumulator's row +8 register,
    which the general layout keeps for its vectors, may then be a round, as in Triton's
    conversion of tutorial 09's epilogue (two rounds of 32 KB)."""
    if any(src.packed_bases("block")) or any(dst.packed_bases("block")):
        return ()  # a tensor spread over a cluster's blocks goes whole
    src_bits, dst_bits = independent_registers(src), independent_registers(dst)
    common = [b for b in src_bits if b in dst_bits]
    if stmatrix is None:
        common = common[(MAX_VECTOR_BYTES // elem_bytes).bit_length() - 1 :]
    elif not src.packed_bases("register") or len(src.packed_bases("lane")) != 5:
        return ()  # no layout stmatrix stores (convert_swizzle.stmatrix_layout)
    else:
        row = set(stmatrix_rows(src, not stmatrix))
        common = [b for b in common if b not in row and b != src.packed_bases("register")[0]]
    chosen: list[int] = []
    for basis in sorted(common, key=lambda b: -src_bits[b]):
        if _splits(src, dst, [*chosen, basis]):
            chosen.append(basis)
    return tuple(chosen)


def most_rounds(src: LinearLayout, dst: LinearLayout, elem_bytes: int, stmatrix=None) -> int:
    """The most rounds a round trip from `src` to `dst` can take (1: the whole tile), by
    `stmatrix` stores where given (as `round_bases`)."""
    return 1 << len(round_bases(src, dst, elem_bytes, stmatrix))
