"""The `ttng` ops of tensor maps made in the kernel, as Triton's TTGIR spells a descriptor that
`tl.make_tensor_descriptor` makes: a slot of the launch's global scratch, the map written into
it, acquired, and read as a descriptor.

    %p = ttg.global_scratch_alloc {alignment = 128 : i32, nbytes = 128 : i32} : !tt.ptr<i8>
    ttng.tensormap_create %p, %base, [%c64, %c128], [%K, %M], [%row_bytes], [%c1, %c1]
        {elem_type = 6 : i32, fill_mode = 0 : i32, interleave_layout = 0 : i32,
         swizzle_mode = 3 : i32} : (!tt.ptr<i8>, !tt.ptr<f16>, i32, i32, i32, i32, i64, i32, i32) -> ()
    ttng.tensormap_fenceproxy_acquire %p : !tt.ptr<i8>
    %d = ttng.reinterpret_tensor_descriptor %p : !tt.ptr<i8> to !tt.tensordesc<tensor<128x64xf16, #shared>>

The sizes, boxes and element strides are innermost first; the global strides are in bytes,
one fewer than the rank (the innermost is the element). The attributes are PTX's
`tensormap.replace` field values (`elem_type` 6 is f16, `swizzle_mode` 3 is 128 bytes).
"""  # noqa: E501

from __future__ import annotations

from ...ir import (
    MemoryRead,
    MemoryWrite,
    Operation,
    attribute,
    irdl_op,
    operand,
    result,
    var_operand,
)
from ..base import I32, I32Attr
from ..tt.types import TT_Ptr, TT_TensorDescType

_EFFECTS = frozenset({MemoryRead, MemoryWrite})


@irdl_op
class TensormapCreateOp(Operation):
    """Write the tensor map of the tensor at `global_address` into the 128 bytes at
    `desc_ptr` (global memory) and release it to the tensor-map proxy."""

    name = "ttng.tensormap_create"
    traits = _EFFECTS
    desc_ptr = operand(TT_Ptr)
    global_address = operand(TT_Ptr)
    box_dim = var_operand(I32)
    global_dim = var_operand(I32)
    global_stride = var_operand()
    element_stride = var_operand(I32)
    elem_type = attribute(I32Attr)
    interleave_layout = attribute(I32Attr)
    swizzle_mode = attribute(I32Attr)
    fill_mode = attribute(I32Attr)
    assembly_format = (
        "$desc_ptr `,` $global_address `,` `[` $box_dim `]` `,` `[` $global_dim `]` `,` "
        "`[` $global_stride `]` `,` `[` $element_stride `]` attr-dict `:` "
        "functional-type(operands, results)"
    )


@irdl_op
class TensormapFenceproxyAcquireOp(Operation):
    """Acquire the tensor map at `desc_ptr` in the tensor-map proxy, before copies read it."""

    name = "ttng.tensormap_fenceproxy_acquire"
    traits = _EFFECTS
    desc_ptr = operand(TT_Ptr)
    assembly_format = "$desc_ptr attr-dict `:` qualified(type($desc_ptr))"


@irdl_op
class ReinterpretTensorDescOp(Operation):
    """The tensor map at `rawDesc` as a descriptor of its block type."""

    name = "ttng.reinterpret_tensor_descriptor"
    rawDesc = operand(TT_Ptr)  # the ODS name
    result = result(TT_TensorDescType)
    assembly_format = (
        "$rawDesc attr-dict `:` qualified(type($rawDesc)) `to` qualified(type($result))"
    )
