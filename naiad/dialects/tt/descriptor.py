"""`tt` tensor descriptors (TritonOps.td): `tt.make_tensor_descriptor` and the block loads,
stores, reductions, gathers and scatters through them (TMA on Hopper and later).

`!tt.tensordesc<64x64xf16>` is the descriptor's type; its block type is what one load gives.
"""

from __future__ import annotations

from typing import ClassVar

from ...ir import (
    MemoryRead,
    MemoryWrite,
    Operation,
    Pure,
    attribute,
    i32,
    irdl_op,
    operand,
    opt_attribute,
    result,
    var_operand,
)
from ..base import I32, I64, fail, tensor_of
from .attributes import (
    DEFAULT_CACHE,
    DEFAULT_EVICT,
    CacheModifier,
    DescriptorReduceKind,
    EvictionPolicy,
    PaddingOption,
)
from .memory import CACHE_EVICT_FORMAT, normalize_attributes
from .types import TT, TT_Ptr, TT_Tensor, TT_TensorDescType


@irdl_op
class MakeTensorDescOp(Operation):
    """A tensor descriptor over `base` with the parent tensor's `shape` and `strides`."""

    name = "tt.make_tensor_descriptor"
    traits = TT | {Pure}
    base = operand(TT_Ptr)
    shape = var_operand(I32)
    strides = var_operand(I64)
    padding = opt_attribute(PaddingOption)
    result = result(TT_TensorDescType)
    assembly_format = (
        "$base `,` `[` $shape `]` `,` `[` $strides `]` attr-dict `:` type($base) `,` type($result)"
    )
    attribute_defaults: ClassVar[dict] = {"padding": PaddingOption.get("zero")}

    def __init__(self, base, shape, strides, **fields):
        normalize_attributes(type(self), fields)
        super().__init__(base, shape, strides, **fields)

    def verify_(self) -> None:
        rank = self.result.type.block_type.rank
        if not len(self.shape) == len(self.strides) == rank:
            fail(self, f"expected {rank} shape and stride operands for a rank-{rank} descriptor")


def _check_descriptor_block(op, desc, tensor) -> None:
    block = desc.type.block_type
    if block.element_type is not tensor.element_type:
        fail(op, "descriptor block and tensor element types must match")
    if block.numel != tensor.numel:
        fail(op, "descriptor block and tensor must have the same number of elements")


def _check_indices(op) -> None:
    rank = op.desc.type.block_type.rank
    if len(op.indices) != rank:
        fail(op, f"expected {rank} indices for a rank-{rank} descriptor")


@irdl_op
class DescriptorLoadOp(Operation):
    """Load the block of `desc` at `indices` (a TMA load on Hopper and later)."""

    name = "tt.descriptor_load"
    traits = TT | {MemoryRead}
    desc = operand(TT_TensorDescType)
    indices = var_operand(I32)
    cache = opt_attribute(CacheModifier)
    evict = opt_attribute(EvictionPolicy)
    result = result(TT_Tensor)
    assembly_format = (
        f"$desc `[` $indices `]` {CACHE_EVICT_FORMAT} attr-dict `:` qualified(type($desc)) `->` "
        "type($result)"
    )
    attribute_defaults: ClassVar[dict] = {"cache": DEFAULT_CACHE, "evict": DEFAULT_EVICT}

    def __init__(self, desc, indices, **fields):
        fields.setdefault("result", desc.type.block_type.clone(encoding=None))
        normalize_attributes(type(self), fields)
        super().__init__(desc, indices, **fields)

    def verify_(self) -> None:
        _check_indices(self)
        _check_descriptor_block(self, self.desc, self.result.type)


@irdl_op
class DescriptorStoreOp(Operation):
    """Store `src` as the block of `desc` at `indices`."""

    name = "tt.descriptor_store"
    traits = TT | {MemoryRead, MemoryWrite}
    desc = operand(TT_TensorDescType)
    src = operand(TT_Tensor)
    indices = var_operand(I32)
    assembly_format = (
        "$desc `[` $indices `]` `,` $src attr-dict `:` qualified(type($desc)) `,` type($src)"
    )

    def verify_(self) -> None:
        _check_indices(self)
        _check_descriptor_block(self, self.desc, self.src.type)


@irdl_op
class DescriptorReduceOp(Operation):
    """Atomically combine `src` (add, min, max, ...) into the block of `desc` at `indices`."""

    name = "tt.descriptor_reduce"
    traits = TT | {MemoryRead, MemoryWrite}
    kind = attribute(DescriptorReduceKind)
    desc = operand(TT_TensorDescType)
    src = operand(TT_Tensor)
    indices = var_operand(I32)
    assembly_format = (
        "$kind `,` $desc `[` $indices `]` `,` $src attr-dict `:` qualified(type($desc)) `,` "
        "type($src)"
    )

    def verify_(self) -> None:
        _check_indices(self)
        _check_descriptor_block(self, self.desc, self.src.type)


_I32Tensor = tensor_of(lambda t: t is i32, "ranked tensor of i32 values")


@irdl_op
class DescriptorGatherOp(Operation):
    """Rows `x_offsets` of a one-row descriptor, from column `y_offset`, as a 2-D tensor."""

    name = "tt.descriptor_gather"
    traits = TT | {MemoryRead}
    desc = operand(TT_TensorDescType)
    x_offsets = operand(_I32Tensor)
    y_offset = operand(I32)
    result = result(TT_Tensor)
    assembly_format = (
        "$desc `[` $x_offsets `,` $y_offset `]` attr-dict `:` functional-type(operands, results)"
    )


@irdl_op
class DescriptorScatterOp(Operation):
    """The rows of `src` stored to rows `x_offsets` of a one-row descriptor."""

    name = "tt.descriptor_scatter"
    traits = TT | {MemoryRead, MemoryWrite}
    desc = operand(TT_TensorDescType)
    x_offsets = operand(_I32Tensor)
    y_offset = operand(I32)
    src = operand(TT_Tensor)
    assembly_format = "$desc `[` $x_offsets `,` $y_offset `]` `,` $src attr-dict `:` type(operands)"
