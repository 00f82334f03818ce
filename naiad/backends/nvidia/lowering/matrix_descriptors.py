"""The constant part of a `wgmma` operand's shared-memory matrix descriptor (lowering/wgmma.py):
the layout of its `#ttg.nvmma_shared` buffer as the instruction reads it. The descriptor holds
the swizzle mode, the stride between 8-row groups of the strided dimension (SBO, 8 rows of the
swizzle width) and between column blocks of the contiguous dimension (LBO); the operand's
address fills its low bits per instruction.
"""

from __future__ import annotations

from dataclasses import dataclass

from ....errors import InternalError
from ..layouts import LinearLayout

_SWIZZLE_MODE = {128: 1, 64: 2, 32: 3}


@dataclass(frozen=True)
class Descriptor:
    """The constant part of an operand's matrix descriptor and its major order: `transposed`
    is the instruction's imm-trans flag (the operand's M or N dimension is the contiguous one)."""

    bits: int
    transposed: bool


def matrix_descriptor(to_offset: LinearLayout, swizzle: int, nbytes: int, k_dim: int):
    """The descriptor of an operand stored by `to_offset` (element -> offset of one 2-D
    buffer) with a `swizzle`-byte swizzle, K along `k_dim`."""
    names = to_offset.in_dims

    def byte_offset(dim: int, step: int) -> int:
        coords = {names[0]: 0, names[1]: 0}
        coords[names[dim]] = step
        return to_offset.apply(**coords)[0] * nbytes

    contiguous = 0 if byte_offset(0, 1) == nbytes else 1
    strided = 1 - contiguous
    row_elements = swizzle // nbytes
    sizes = [to_offset.in_dim_size(n) for n in names]
    sbo = byte_offset(strided, 8)
    if sbo != 8 * swizzle:
        raise InternalError("wgmma: the operand's buffer is not in rows of its swizzle")
    if sizes[contiguous] > row_elements:
        lbo = byte_offset(contiguous, row_elements)
    else:
        lbo = sizes[strided] * swizzle  # not read: one column block
    bits = (lbo >> 4) << 16 | (sbo >> 4) << 32 | _SWIZZLE_MODE[swizzle] << 62
    return Descriptor(bits, contiguous != k_dim)
