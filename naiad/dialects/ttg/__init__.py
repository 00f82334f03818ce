"""The `ttg` dialect (TritonGPU): tensors with layouts, shared memory and asynchronous copies.

TTGIR is TTIR whose tensors carry a layout encoding (ttg/attributes.py), plus the ops below,
which move data between layouts and memories. Their text is Triton 3.8's:

    %1 = ttg.convert_layout %0 : tensor<128xf32, #blocked> -> tensor<128xf32, #blocked1>
    %a = ttg.local_alloc : () -> !ttg.memdesc<2x128x64xf16, #shared, #smem, mutable>
    %s = ttg.memdesc_index %a[%i] : !ttg.memdesc<2x128x64xf16, ...> -> !ttg.memdesc<128x64xf16, ...>
    %t = ttg.async_copy_global_to_local %ptrs, %s mask %m other %z : tensor<...> -> <128x64xf16, ...>
    %g = ttg.async_commit_group tokens %t
    %w = ttg.async_wait %g {num = 0 : i32}
    %v = ttg.local_load %s token %w : !ttg.memdesc<128x64xf16, ...> -> tensor<128x64xf16, #dot>

A TTGIR module carries the attributes `"ttg.num-warps"`, `"ttg.num-ctas"`,
`"ttg.threads-per-warp"` (i32) and `ttg.target` (`"cuda:90"`); `module_attributes` builds them.
`ttg.barrier` (ttg/barrier.py) is the one op of the dialect that TTIR also holds.
"""  # noqa: E501

from __future__ import annotations

from typing import ClassVar

from ...ir import (
    AnyType,
    MemoryRead,
    MemoryWrite,
    Operation,
    Pure,
    SameOperandsAndResultElementType,
    SameOperandsAndResultShape,
    TensorOf,
    attribute,
    irdl_op,
    operand,
    opt_attribute,
    opt_operand,
    result,
    var_operand,
)
from ...ir.attributes import IntegerAttr, StringAttr
from ...ir.types import i32
from ..base import I32, BoolAttrC, DenseI32ArrayAttr, I32Attr
from ..tt.attributes import CacheModifier, EvictionPolicy
from ..tt.memory import CACHE_EVICT_FORMAT
from ..tt.types import TT_BoolLike, TT_Ptr, TT_PtrTensor, TT_Tensor
from . import attributes as ttg_attributes  # noqa: F401  (registers the encodings)
from .barrier import AddrSpace, BarrierOp  # noqa: F401  (part of this dialect)
from .partitions import (  # noqa: F401
    WarpReturnOp,
    WarpSpecializeOp,
    WarpSpecializePartitionsOp,
    WarpYieldOp,
)
from .types import TTG_AsyncToken, TTG_MemDesc

AnyTensor = TensorOf(AnyType)


def module_attributes(
    num_warps: int, target: str, num_ctas: int = 1, threads_per_warp: int = 32
) -> dict:
    """The attributes of a TTGIR module, as Triton's convert-triton-to-tritongpu sets them."""
    return {
        "ttg.num-warps": IntegerAttr(num_warps, i32),
        "ttg.num-ctas": IntegerAttr(num_ctas, i32),
        "ttg.threads-per-warp": IntegerAttr(threads_per_warp, i32),
        "ttg.target": StringAttr(target),
    }


@irdl_op
class ConvertLayoutOp(Operation):
    """The same tensor in another layout (register permutation, warp shuffles or a round trip
    through shared memory, planned from the two linear layouts)."""

    name = "ttg.convert_layout"
    traits = frozenset({Pure, SameOperandsAndResultShape, SameOperandsAndResultElementType})
    src = operand(AnyTensor)
    result = result(AnyTensor)
    assembly_format = "$src attr-dict `:` type($src) `->` type($result)"


@irdl_op
class LocalAllocOp(Operation):
    """Allocate a buffer in shared memory, initialized from `src` when given."""

    name = "ttg.local_alloc"
    traits = frozenset({MemoryWrite})
    src = opt_operand(AnyTensor)
    alignment = opt_attribute(I32Attr)
    result = result(TTG_MemDesc)
    assembly_format = "($src^)? attr-dict `:` functional-type(operands, results)"


@irdl_op
class LocalDeallocOp(Operation):
    """Free a buffer of `ttg.local_alloc` (shared-memory allocation uses the liveness this
    marks)."""

    name = "ttg.local_dealloc"
    traits = frozenset({MemoryWrite})
    src = operand(TTG_MemDesc)
    assembly_format = "$src attr-dict `:` qualified(type($src))"


@irdl_op
class LocalLoadOp(Operation):
    """Read a shared-memory buffer into registers, in the result's layout; `token` orders it
    after the asynchronous copies that wrote the buffer."""

    name = "ttg.local_load"
    traits = frozenset({MemoryRead})
    src = operand(TTG_MemDesc)
    token = opt_operand(TTG_AsyncToken)
    result = result(AnyTensor)
    assembly_format = (
        "$src (`token` $token^)? attr-dict `:` qualified(type($src)) `->` type($result)"
    )


@irdl_op
class LocalStoreOp(Operation):
    """Write a register tensor into a shared-memory buffer."""

    name = "ttg.local_store"
    traits = frozenset({MemoryWrite})
    src = operand(AnyTensor)
    dst = operand(TTG_MemDesc)
    assembly_format = "$src `,` $dst attr-dict `:` type($src) `->` qualified(type($dst))"


@irdl_op
class MemDescIndexOp(Operation):
    """Buffer `index` of a multi-buffered allocation: the view that drops the leading
    dimension."""

    name = "ttg.memdesc_index"
    traits = frozenset({Pure})
    src = operand(TTG_MemDesc)
    index = operand(I32)
    result = result(TTG_MemDesc)
    assembly_format = (
        "$src `[` $index `]` attr-dict `:` qualified(type($src)) `->` qualified(type($result))"
    )


@irdl_op
class MemDescSubsliceOp(Operation):
    """The view of a buffer starting at constant `offsets` with the result's shape (the
    result type keeps the allocation's shape)."""

    name = "ttg.memdesc_subslice"
    traits = frozenset({Pure})
    src = operand(TTG_MemDesc)
    offsets = attribute(DenseI32ArrayAttr)
    result = result(TTG_MemDesc)
    custom_syntax = True


@irdl_op
class MemDescTransOp(Operation):
    """The buffer seen with its dimensions permuted: result dimension i is source dimension
    `order[i]` (no data moves; the shared layout's order is permuted with them)."""

    name = "ttg.memdesc_trans"
    traits = frozenset({Pure})
    src = operand(TTG_MemDesc)
    order = attribute(DenseI32ArrayAttr)
    result = result(TTG_MemDesc)
    assembly_format = "$src attr-dict `:` qualified(type($src)) `->` qualified(type($result))"


@irdl_op
class AsyncCopyGlobalToLocalOp(Operation):
    """Start copying the elements at `src` into buffer `dst` (`cp.async`); lanes where `mask`
    is false write `other`. The result token completes with the copy's commit group."""

    name = "ttg.async_copy_global_to_local"
    traits = frozenset({MemoryRead, MemoryWrite})
    src = operand(TT_PtrTensor)
    dst = operand(TTG_MemDesc)  # `result` in Triton's ODS, which names the token `token`
    mask = opt_operand(TT_BoolLike)
    other = opt_operand(TT_Tensor)
    cache = opt_attribute(CacheModifier)
    evict = opt_attribute(EvictionPolicy)
    isVolatile = opt_attribute(BoolAttrC)  # the ODS name
    contiguity = opt_attribute(I32Attr)
    token = result(TTG_AsyncToken)
    assembly_format = (
        f"$src `,` $dst (`mask` $mask^)? (`other` $other^)? {CACHE_EVICT_FORMAT}"
        " attr-dict `:` type($src) `->` type($dst)"
    )
    attribute_defaults: ClassVar[dict] = {
        "cache": CacheModifier.get("none"),
        "evict": EvictionPolicy.get("evict_normal"),
    }


@irdl_op
class AsyncCommitGroupOp(Operation):
    """Close the group of asynchronous copies issued so far by this thread."""

    name = "ttg.async_commit_group"
    traits = frozenset({MemoryRead, MemoryWrite})
    inputTokens = var_operand(TTG_AsyncToken)  # the ODS name
    asyncToken = result(TTG_AsyncToken)  # the ODS name
    assembly_format = "(`tokens` $inputTokens^)? attr-dict"


@irdl_op
class AsyncWaitOp(Operation):
    """Wait until at most `num` groups of asynchronous copies are still in flight."""

    name = "ttg.async_wait"
    traits = frozenset({MemoryRead, MemoryWrite})
    asyncToken = var_operand(TTG_AsyncToken)  # the ODS name
    num = attribute(I32Attr)
    retToken = result(TTG_AsyncToken)  # the ODS name
    assembly_format = "($asyncToken^)? attr-dict"


@irdl_op
class GlobalScratchAllocOp(Operation):
    """`nbytes` of this program's slice of the launch's global scratch (a tensor map made in
    the kernel, ttng/tensor_maps.py), aligned to `alignment`."""

    name = "ttg.global_scratch_alloc"
    traits = frozenset({MemoryRead, MemoryWrite})
    nbytes = attribute(I32Attr)
    alignment = attribute(I32Attr)
    result = result(TT_Ptr)
    assembly_format = "attr-dict `:` qualified(type($result))"
