"""Tensor descriptors read and written by the tensor memory accelerator (TMA, sm_90 and later).

Everywhere a host `TensorDescriptor` is its base pointer, shape and strides, and its blocks are
loaded and stored through pointers (language/tensor_descriptors.py). On an NVIDIA target with
TMA, a descriptor whose tensor the hardware can address is also passed as a tensor map: the
128-byte `CUtensorMap` the launcher encodes (runtime/tensor_maps.py), a `!tt.tensordesc`
argument ahead of its parts, named `desc.tensor_map`. The tensor qualifies when the launcher
proved its base aligned to 16 bytes and every stride but the last a multiple of 16 elements
(the `tt.divisibility` facts it specializes on; TMA needs 16-byte aligned rows).

A block access then becomes `tt.descriptor_load` / `tt.descriptor_store` (a block atomic add,
and, or or xor `tt.descriptor_reduce`), which the NVIDIA back end lowers to one bulk tensor copy
(reduction) through shared memory (lowering/tma.py), when the block is
one the copy moves whole: two dimensions, or more whose leading ones are 1 (a block of one head
of (heads, rows, columns): the map bounds each dimension, so a block never passes into the
next head), rows of at least 32 bytes (the narrowest swizzled row) and at least 8 of them, no
`bool` elements, and NaN padding only for floats (the copy's NaN fill). A block of leading 1s
is copied as its two last dimensions: the `tt.descriptor_load` has the 2-D result and a
`tt.reshape` gives the block's shape back, the store reshapes its value to 2-D, so that the
kernel's own reshape of the block to 2-D (to take it into a dot) cancels against it and the
buffer the copy writes is the dot's operand. In a loop, the pipeliner overlaps the copies of
a dot's operands with the iterations before, and turns the other loads back into pointer loads
(they are zero-padded: NaN-padded loads in loops keep pointers from here). Out-of-bounds
elements are zero-filled (NaN for `padding="nan"`) and never written, as through pointers.

A descriptor made in the kernel (`tl.make_tensor_descriptor`) gets a tensor map the same way
(`in_kernel`): a `tt.make_tensor_descriptor` op, which each program builds in its slot of the
launch's global scratch (lowering/tensor_map_create.py; the launcher allocates it through
`naiad.set_allocator`'s allocator), when its block is one the copy moves whole and its last
stride is the literal 1. What the host checks of its maps, a base aligned to 16 bytes and row
strides that are 16-byte multiples, is proven after inlining by the axis analysis, which follows
the arithmetic from the kernel's specialized arguments (backends/nvidia/passes/
tensor_map_proofs.py); a descriptor without that proof goes back to pointers there. A
descriptor made inside a loop keeps pointers from the start (copies of an earlier iteration may
still read its map when the next one rewrites it), and so does one made in a `noinline` helper
(only the kernel has the scratch). A map is a value of the descriptor (its `tensor_map` tensor):
it crosses calls as an argument and a result, so a jit helper may make the descriptor its
caller reads (tutorial 06's `_maybe_make_tensor_desc`) or read its caller's. Where a descriptor
merges at a loop or an `if`, or enters a `noinline` callee, it leaves its map behind
(values.without_maps) and reads through pointers: the pointer fallback finds a map's parts only
where it was made or passed in. A helper that makes a map inside its caller's loop is inlined
there before the map's proof, which gives such a map back to pointers (tensor_map_proofs.py).
"""

from __future__ import annotations

from .. import ir
from ..dialects import arith, scf, tt
from ..dialects.tt.attributes import DescriptorReduceKind
from ..language import dtypes as t
from .types import ir_type

# A TMA row of fewer bytes has no swizzled shared layout (lowering/tma.py).
_MIN_ROW_BYTES = 32
_MIN_ROWS = 8
_DIVISIBLE = "tt.divisibility"


def qualifies(target, block_type: t.block_type, padding: str, base_attributes: dict, parts: dict):
    """Whether a host descriptor of `block_type` and `padding` is passed as a tensor map on
    `target`, from its base pointer's attributes and its parts' (`stride.i` -> attributes)."""
    if not _copies_on(target):
        return False
    rank = len(block_type.shape)
    aligned = [base_attributes] + [parts.get(f"stride.{i}", {}) for i in range(rank - 1)]
    return all(_divisible_by_16(a) for a in aligned) and block_moves_whole(block_type, padding)


def _copies_on(target) -> bool:
    """Whether `target` moves blocks by tensor copies: an NVIDIA GPU from sm_90, outside debug
    mode (whose bounds checks see pointer accesses)."""
    return target.backend == "cuda" and target.arch >= 90 and not target.debug


# The copy engine's tensor maps have at most 5 dimensions.
_MAX_RANK = 5


def block_moves_whole(block_type: t.block_type, padding: str = "zero") -> bool:
    """Whether one bulk tensor copy moves a block of `block_type` (see the module doc)."""
    element = block_type.element_ty
    shape = block_type.shape
    if not 2 <= len(shape) <= _MAX_RANK or any(n != 1 for n in shape[:-2]) or element == t.int1:
        return False
    if padding == "nan" and not element.is_floating():
        return False
    rows, columns = shape[-2:]
    return columns * element.primitive_bitwidth // 8 >= _MIN_ROW_BYTES and rows >= _MIN_ROWS


def _divisible_by_16(attributes: dict) -> bool:
    attr = attributes.get(_DIVISIBLE)
    return attr is not None and attr.value % 16 == 0


def in_kernel(irb, target, base, shape, strides, wide_strides, block_type, padding):
    """The tensor map (an IR value) of a descriptor made in the kernel over `base` (a pointer
    tensor) with `shape` and `strides` as the kernel gave them (ints, constexprs or tensors)
    and its strides as int64 tensors (`wide_strides`), built by `irb`; None where the
    descriptor keeps pointers (the module doc). The op takes i32 sizes and i64 strides, as
    Triton's does."""
    if not _copies_on(target) or len(block_type.shape) != 2:  # 2-D maps alone made here
        return None
    block = irb.builder.block
    if not block_moves_whole(block_type, padding) or scf.in_loop(block) or _noinline(block):
        return None
    if getattr(strides[-1], "value", strides[-1]) != 1:
        return None
    sizes = [_int32(irb, getattr(s, "value", s)) for s in shape]
    op = irb._create(
        tt.MakeTensorDescOp, base.handle, sizes, [s.handle for s in wide_strides],
        padding=padding, result=argument_type(block_type),
    )  # fmt: skip
    return op.result


def _noinline(block) -> bool:
    """Whether `block` lies in a `noinline` jit helper, which stays a call: its map would need
    the kernel's scratch."""
    op = block.parent_op()
    while op is not None and not isinstance(op, tt.FuncOp):
        op = op.parent_op()
    flag = op.attributes.get("noinline") if op is not None else None
    return isinstance(flag, ir.BoolAttr) and flag.value


def _int32(irb, size):
    """A size as an i32 IR value (Triton's descriptor sizes are 32-bit)."""
    if isinstance(size, int):
        return irb.constant(size, t.int32)
    handle = size.handle
    if handle.type == ir.i32:
        return handle
    return irb._create(arith.TruncIOp, handle, out=ir.i32).out


def argument_type(block_type: t.block_type) -> ir.Type:
    """The `!tt.tensordesc` argument of a tensor map for blocks of `block_type`."""
    return tt.TensorDescType(ir_type(block_type))


def load(irb, tensor_map, offsets, desc_type):
    """The block at `offsets` (i32 IR values) by a tensor copy through `tensor_map`, or None
    where pointers load it (a NaN-padded block in a loop: see the module doc)."""
    if desc_type.padding == "nan" and scf.in_loop(irb.builder.block):
        return None
    block = tensor_map.type.block_type
    if block.rank == 2:
        return irb._create(tt.DescriptorLoadOp, tensor_map, offsets).result
    rows = block.clone(shape=block.shape[-2:], encoding=None)  # the module doc
    loaded = irb._create(tt.DescriptorLoadOp, tensor_map, offsets, result=rows).result
    return irb._create(tt.ReshapeOp, loaded, shape=block.shape).result


def store(irb, tensor_map, offsets, value) -> None:
    """Store `value` (an IR value of the block's shape) by a tensor copy through `tensor_map`;
    a block of leading 1s as its last two dimensions (the module doc)."""
    irb._create(tt.DescriptorStoreOp, tensor_map, _rows(irb, value), offsets)


def reduce(irb, tensor_map, offsets, value, kind: str) -> None:
    """Combine `value` into the block at `offsets` by the atomic `kind` (add, and, or, xor), one
    bulk tensor reduction through `tensor_map`, shaped as `store`'s copy."""
    kind = DescriptorReduceKind.get(kind)
    irb._create(tt.DescriptorReduceOp, tensor_map, _rows(irb, value), offsets, kind=kind)


def _rows(irb, value):
    """A stored block of leading 1s as its last two dimensions (the module doc)."""
    shape = value.type.shape
    if len(shape) > 2:
        return irb._create(tt.ReshapeOp, value, shape=shape[-2:]).result
    return value
