"""The `bufferization` dialect (BufferizationOps.td): the crossings between tensors and
memrefs that the Linalg form uses.

    %t = bufferization.to_tensor %buf restrict writable : memref<1024xf32> to tensor<1024xf32>
    %m = bufferization.to_buffer %t read_only : tensor<4xf32> to memref<4xf32>
    bufferization.materialize_in_destination %slice in writable %view
        : (tensor<?xf32>, memref<?xf32, strided<[1], offset: ?>>) -> ()
    %a = bufferization.alloc_tensor(%n) : tensor<?xf32>

`to_buffer` is upstream's current name of `to_memref`. `alloc_tensor` takes no `memory_space`
here: upstream holds it as a `ui64` attribute, and the IR's integers are signless.
"""

from __future__ import annotations

from ...ir import (
    DYNAMIC,
    Constraint,
    MemoryRead,
    MemoryWrite,
    MemRefType,
    Operation,
    Pure,
    RankedTensorType,
    UnitAttr,
    irdl_op,
    is_memref,
    operand,
    opt_attribute,
    opt_operand,
    result,
    var_operand,
    var_result,
)
from ..base import Index, UnitAttrC, check_type, fail

AnyTensor = Constraint("tensor of any type values", lambda t: isinstance(t, RankedTensorType))
AnyMemRefLike = Constraint("ranked or unranked memref of any type values", is_memref)
AnyShaped = Constraint(
    "shaped of any type values", lambda t: isinstance(t, RankedTensorType) or is_memref(t)
)


def tensor_of_memref(t) -> RankedTensorType:
    """The tensor type a memref's contents make (MLIR's getTensorTypeFromMemRefType): its
    shape and element type, without layout or memory space."""
    if not isinstance(t, MemRefType):
        raise ValueError(f"no ranked tensor type for {t}")
    return RankedTensorType(t.shape, t.element_type)


def _unit(flag) -> UnitAttr | None:
    return UnitAttr() if flag else None


@irdl_op
class ToTensorOp(Operation):
    """The contents of `buffer` as a tensor. `restrict`: no other to_tensor of this buffer
    (or an alias) exists; `writable`: bufferization may write into the buffer in place."""

    name = "bufferization.to_tensor"
    traits = frozenset({MemoryRead})
    buffer = operand(AnyMemRefLike)
    restrict = opt_attribute(UnitAttrC)
    writable = opt_attribute(UnitAttrC)
    result = result(AnyTensor)
    assembly_format = (
        "$buffer (`restrict` $restrict^)? (`writable` $writable^)? attr-dict `:` type($buffer) "
        "`to` type($result)"
    )

    def __init__(self, buffer, *, restrict=False, writable=False, **fields):
        if "result" not in fields:
            fields["result"] = tensor_of_memref(buffer.type)
        super().__init__(buffer, restrict=_unit(restrict), writable=_unit(writable), **fields)

    def verify_(self) -> None:
        _check_tensor_equivalent(self, self.result.type, self.buffer.type, "result type")


def _check_tensor_equivalent(op, tensor, memref, what: str) -> None:
    expected = tensor_of_memref(memref) if isinstance(memref, MemRefType) else None
    if tensor is not expected:
        fail(op, f"failed to verify that {what} matches tensor equivalent of the buffer ({memref})")


@irdl_op
class ToBufferOp(Operation):
    """A buffer holding `tensor` (upstream's `to_memref`, renamed). `read_only`: the buffer
    is not written."""

    name = "bufferization.to_buffer"
    traits = frozenset({Pure})
    tensor = operand(AnyTensor)
    read_only = opt_attribute(UnitAttrC)
    buffer = result(AnyMemRefLike)
    assembly_format = (
        "$tensor (`read_only` $read_only^)? attr-dict `:` type($tensor) `to` type($buffer)"
    )

    def __init__(self, tensor, buffer_type=None, *, read_only=False, **fields):
        """`buffer_type` defaults to the identity-layout memref of the tensor's shape."""
        if buffer_type is None:
            t = tensor.type
            buffer_type = MemRefType(t.shape, t.element_type)
        super().__init__(tensor, read_only=_unit(read_only), buffer=buffer_type, **fields)

    def verify_(self) -> None:
        _check_tensor_equivalent(self, self.tensor.type, self.buffer.type, "type of 'tensor'")


@irdl_op
class MaterializeInDestinationOp(Operation):
    """Store `source` into `dest`: a memref (no result; `writable` is required) or a tensor
    (the result is `dest` holding `source`). `restrict` as for to_tensor."""

    name = "bufferization.materialize_in_destination"
    traits = frozenset({MemoryRead, MemoryWrite})
    source = operand(AnyTensor)
    dest = operand(AnyShaped)
    restrict = opt_attribute(UnitAttrC)
    writable = opt_attribute(UnitAttrC)
    result = var_result(AnyTensor)  # ODS: Optional<AnyTensor>
    assembly_format = (
        "$source `in` (`restrict` $restrict^)? (`writable` $writable^)? $dest attr-dict `:` "
        "functional-type(operands, results)"
    )

    def __init__(self, source, dest, *, restrict=False, writable=None, **fields):
        """`writable` defaults to whether `dest` is a memref, the only valid choice."""
        memref_dest = is_memref(dest.type)
        if writable is None:
            writable = memref_dest
        fields.setdefault("result", [] if memref_dest else [dest.type])
        super().__init__(source, dest, restrict=_unit(restrict), writable=_unit(writable), **fields)

    def verify_(self) -> None:
        source, dest = self.source.type, self.dest.type
        to_memref = is_memref(dest)
        if not to_memref:
            if len(self.result) != 1:
                fail(self, "tensor 'dest' implies exactly one tensor result")
            if self.result[0].type is not dest:
                fail(self, "result and 'dest' types must match")
        elif self.result:
            fail(self, "memref 'dest' implies zero results")
        if self.restrict is not None and not to_memref:
            fail(self, "'restrict' is valid only for memref destinations")
        if (self.writable is not None) != to_memref:
            fail(
                self,
                "'writable' must be specified if and only if the destination is of memref type",
            )
        check_type(
            self,
            source.element_type,
            dest.element_type,
            "all of {source, dest} have same element type",
        )
        if not isinstance(dest, RankedTensorType | MemRefType):
            fail(self, "source/destination shapes are incompatible")
        if len(source.shape) != len(dest.shape):
            fail(self, "rank mismatch between source and destination shape")
        for a, b in zip(source.shape, dest.shape):
            if a != b and DYNAMIC not in (a, b):
                fail(self, "source/destination shapes are incompatible")


@irdl_op
class AllocTensorOp(Operation):
    """A new tensor in a buffer of its own: uninitialized (its dynamic sizes given in
    order), or a copy of `copy`. `size_hint` is for sparse tensors."""

    name = "bufferization.alloc_tensor"
    dynamic_sizes = var_operand(Index)
    copy = opt_operand(AnyTensor)
    size_hint = opt_operand(Index)
    result = result(AnyTensor)
    custom_syntax = True

    def __init__(self, result_type, dynamic_sizes=(), copy=None, size_hint=None, **fields):
        super().__init__(list(dynamic_sizes), copy, size_hint, result=result_type, **fields)

    def verify_(self) -> None:
        t = self.result.type
        if self.copy is not None and self.dynamic_sizes:
            fail(self, "dynamic sizes not needed when copying a tensor")
        dynamic = sum(1 for d in t.shape if d == DYNAMIC)
        if self.copy is None and len(self.dynamic_sizes) != dynamic:
            fail(self, f"expected {dynamic} dynamic sizes")
        if self.copy is not None and self.copy.type is not t:
            fail(self, "expected that `copy` and return type match")
