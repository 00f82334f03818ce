"""Language types (`naiad.language.dtypes`) as IR types, the one table docs/frontend.md gives.

Integers are signless in the IR: `int32` and `uint32` are both `i32`, and the signedness stays in
the language type, where it already chose the operation (`divsi`/`divui`, `extsi`/`extui`, ...).
"""

from __future__ import annotations

from functools import cache

from .. import ir
from ..dialects import tt
from ..ir.float_format import FLOAT_KINDS
from ..language import dtypes as t


@cache
def ir_type(ty: t.dtype) -> ir.Type:
    """The IR type of a language type: scalars, pointers (to scalars or, for block pointers, to
    blocks) and blocks (`tensor<shape x element>`). Cached: a compile asks for the same few types
    thousands of times."""
    if isinstance(ty, t.block_type):
        return ir.RankedTensorType(ty.shape, ir_type(ty.element_ty))
    if isinstance(ty, t.pointer_type):
        return tt.PointerType(ir_type(ty.element_ty), ty.address_space)
    if ty.is_int():
        return ir.IntegerType(ty.int_bitwidth)
    if ty.name in FLOAT_KINDS:
        return ir.FloatType(FLOAT_KINDS[ty.name])
    raise TypeError(f"the language type {ty} has no IR type")


def is_signed(ty: t.dtype) -> bool:
    """Whether the scalar of `ty` is a signed integer (`tt.print` records it per argument)."""
    return ty.scalar.is_int_signed()
