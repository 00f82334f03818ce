"""`tt` memory ops: loads, stores and atomics through pointers and block pointers
(TritonOps.td); tensor descriptors are in tt/descriptor.py.

Attributes that ODS declares `DefaultValuedAttr` (`cache`, `evict`, `isVolatile`,
`boundaryCheck`) are left out of the op when they hold their default, which `attribute_defaults`
names: the custom syntax prints nothing for them, and an op built here and one read back from
text compare equal. Constructors take keywords: `LoadOp(ptrs, mask, other, cache="ca")`.
"""

from __future__ import annotations

from typing import ClassVar

from ...ir import (
    BoolAttr,
    DenseArrayAttr,
    MemoryRead,
    MemoryWrite,
    Operation,
    Pure,
    RankedTensorType,
    SameOperandsAndResultEncoding,
    SameOperandsAndResultShape,
    attribute,
    encoding_of,
    i1,
    i32,
    irdl_op,
    operand,
    opt_attribute,
    opt_operand,
    result,
    shape_of,
    var_operand,
)
from ...ir.rewriter import constant_value
from ..base import (
    I1,
    I32,
    I64,
    BoolAttrC,
    DenseI32ArrayAttr,
    check_type,
    conditional_traits,
    fail,
    i1_like,
    i32_array,
    is_splat_value,
)
from .attributes import (
    DEFAULT_CACHE,
    DEFAULT_EVICT,
    CacheModifier,
    EvictionPolicy,
    MemSemantic,
    MemSyncScope,
    PaddingOption,
    RMWOp,
)
from .types import (
    TT,
    TT_BoolLike,
    TT_Ptr,
    TT_PtrLike,
    TT_PtrOrTensorPtr,
    TT_TensorPtr,
    TT_Type,
    is_tensor_pointer,
    pointee_type,
    pointer_type_same_shape,
)

CACHE_EVICT_FORMAT = "oilist(`cacheModifier` `=` $cache | `evictionPolicy` `=` $evict)"
_NO_BOUNDARY_CHECK = DenseArrayAttr(i32, ())
_ENUMS = {"cache": CacheModifier, "evict": EvictionPolicy, "padding": PaddingOption}


def normalize_attributes(cls, fields: dict) -> None:
    """Keywords to attributes (`cache="ca"`), and defaults dropped (see the module doc)."""
    for name, value in list(fields.items()):
        if name in _ENUMS and isinstance(value, str | int) and not isinstance(value, bool):
            value = _ENUMS[name].get(value)
        elif name == "isVolatile" and isinstance(value, bool):
            value = BoolAttr(value)
        elif name == "boundaryCheck" and value is not None:
            value = i32_array(value)
        if value is not None and cls.attribute_defaults.get(name) is value:
            value = None
        fields[name] = value


def _access_shape(t):
    """The shape a memory op works on: a block pointer's tensor's, else the type's."""
    return t.pointee_type.shape if is_tensor_pointer(t) else shape_of(t)


def _check_load_store_shapes(op, values) -> None:
    """Triton's SameLoadStoreOperandsShape / ...Encoding (a block pointer counts as the
    shape of its tensor)."""
    types = [v.type for v in values if v is not None]
    if len({_access_shape(t) for t in types}) > 1:
        fail(op, "requires the same shape for all operands and results")
    encodings = {encoding_of(t) for t in types} - {None}
    if len(encodings) > 1:
        fail(op, "requires the same encoding for all operands and results")


def _volatile_writes(op) -> frozenset:
    """A volatile load may not be removed or merged: Triton gives it a write effect too."""
    flag = op.attributes.get("isVolatile")
    return frozenset({MemoryWrite}) if flag is not None and flag.value else frozenset()


@conditional_traits(_volatile_writes)
@irdl_op
class LoadOp(Operation):
    """Load through a pointer, a tensor of pointers or a block pointer; lanes where `mask` is
    false read `other` (unspecified without it)."""

    name = "tt.load"
    traits = TT | {MemoryRead}
    ptr = operand(TT_PtrOrTensorPtr)
    mask = opt_operand(TT_BoolLike)
    other = opt_operand(TT_Type)
    boundaryCheck = opt_attribute(DenseI32ArrayAttr)  # the ODS name
    padding = opt_attribute(PaddingOption)
    cache = opt_attribute(CacheModifier)
    evict = opt_attribute(EvictionPolicy)
    isVolatile = opt_attribute(BoolAttrC)  # the ODS name
    result = result(TT_Type)
    assembly_format = (
        f"$ptr (`,` $mask^)? (`,` $other^)? {CACHE_EVICT_FORMAT} attr-dict `:` type($ptr)"
    )
    type_inference = (
        ("result", "ptr", pointee_type),
        ("mask", "ptr", lambda t: i1_like(pointee_type(t))),
        ("other", "ptr", pointee_type),
    )
    attribute_defaults: ClassVar[dict] = {
        "boundaryCheck": _NO_BOUNDARY_CHECK,
        "cache": DEFAULT_CACHE,
        "evict": DEFAULT_EVICT,
        "isVolatile": BoolAttr(False),
    }

    def __init__(self, ptr, mask=None, other=None, **fields):
        if "result" not in fields:
            fields["result"] = pointee_type(ptr.type)
        normalize_attributes(type(self), fields)
        super().__init__(ptr, mask, other, **fields)

    def verify_(self) -> None:
        _check_load_store_shapes(self, (self.ptr, self.mask, self.other, self.result))
        expected = pointee_type(self.ptr.type)
        check_type(self, self.result.type, expected, "result matches ptr type")
        if self.mask is not None:
            check_type(self, self.mask.type, i1_like(expected), "mask type matches ptr type")
        if self.other is not None:
            check_type(self, self.other.type, expected, "other matches ptr type")


@irdl_op
class StoreOp(Operation):
    """Store `value` through pointers; lanes where `mask` is false are not written."""

    name = "tt.store"
    traits = TT | {MemoryWrite}
    ptr = operand(TT_PtrOrTensorPtr)
    value = operand(TT_Type)
    mask = opt_operand(TT_BoolLike)
    boundaryCheck = opt_attribute(DenseI32ArrayAttr)  # the ODS name
    cache = opt_attribute(CacheModifier)
    evict = opt_attribute(EvictionPolicy)
    assembly_format = f"$ptr `,` $value (`,` $mask^)? {CACHE_EVICT_FORMAT} attr-dict `:` type($ptr)"
    type_inference = (
        ("value", "ptr", pointee_type),
        ("mask", "ptr", lambda t: i1_like(pointee_type(t))),
    )
    attribute_defaults: ClassVar[dict] = {
        "boundaryCheck": _NO_BOUNDARY_CHECK,
        "cache": DEFAULT_CACHE,
        "evict": DEFAULT_EVICT,
    }

    def __init__(self, ptr, value, mask=None, **fields):
        normalize_attributes(type(self), fields)
        super().__init__(ptr, value, mask, **fields)

    def verify_(self) -> None:
        _check_load_store_shapes(self, (self.ptr, self.value, self.mask))
        expected = pointee_type(self.ptr.type)
        check_type(self, self.value.type, expected, "value type matches ptr type")
        if self.mask is not None:
            check_type(self, self.mask.type, i1_like(expected), "mask type matches ptr type")


def _atomic_fields(sem, scope, fields: dict) -> None:
    fields["sem"] = MemSemantic.get(sem)
    fields["scope"] = MemSyncScope.get(scope)


def _check_ptr_matches(op, value, what: str) -> None:
    t = op.ptr.type
    space = (t.element_type if isinstance(t, RankedTensorType) else t).address_space
    check_type(op, t, pointer_type_same_shape(value.type, space), what)


@irdl_op
class AtomicRMWOp(Operation):
    """Atomically combine `val` into memory (`atomic_rmw_op`: add, fadd, max, exch, ...),
    returning the old value."""

    name = "tt.atomic_rmw"
    traits = TT | {
        SameOperandsAndResultShape,
        SameOperandsAndResultEncoding,
        MemoryRead,
        MemoryWrite,
    }
    atomic_rmw_op = attribute(RMWOp)
    ptr = operand(TT_PtrLike)
    val = operand(TT_Type)
    mask = opt_operand(TT_BoolLike)
    sem = attribute(MemSemantic)
    scope = attribute(MemSyncScope)
    result = result(TT_Type, like="val")
    assembly_format = (
        "$atomic_rmw_op `,` $sem `,` $scope `,` $ptr `,` $val (`,` $mask^)? attr-dict `:` "
        "functional-type(operands, $result)"
    )

    def __init__(self, op, ptr, val, mask=None, *, sem="acq_rel", scope="gpu", **fields):
        _atomic_fields(sem, scope, fields)
        super().__init__(ptr, val, mask, atomic_rmw_op=RMWOp.get(op), **fields)

    def verify_(self) -> None:
        _check_ptr_matches(self, self.val, "ptr type matches value type")
        if self.mask is not None:
            check_type(self, self.mask.type, i1_like(self.val.type), "mask type matches value type")


@irdl_op
class AtomicCASOp(Operation):
    """Atomically: `old = *ptr; if old == cmp: *ptr = val`; returns `old`."""

    name = "tt.atomic_cas"
    traits = TT | {
        SameOperandsAndResultShape,
        SameOperandsAndResultEncoding,
        MemoryRead,
        MemoryWrite,
    }
    ptr = operand(TT_PtrLike)
    cmp = operand(TT_Type)
    val = operand(TT_Type)
    sem = attribute(MemSemantic)
    scope = attribute(MemSyncScope)
    result = result(TT_Type, like="val")
    assembly_format = (
        "$sem `,` $scope `,` $ptr `,` $cmp `,` $val attr-dict `:` "
        "functional-type(operands, $result)"
    )

    def __init__(self, ptr, cmp, val, *, sem="acq_rel", scope="gpu", **fields):
        _atomic_fields(sem, scope, fields)
        super().__init__(ptr, cmp, val, **fields)

    def verify_(self) -> None:
        _check_ptr_matches(self, self.cmp, "ptr type matches cmp type")
        _check_ptr_matches(self, self.val, "ptr type matches value type")


@irdl_op
class AtomicPollOp(Operation):
    """Wait until `*ptr == expected` (a scalar 16-, 32- or 64-bit integer), reading it with
    `sem` (acquire or relaxed) at `scope`; true once seen, false if `timeout` (unsigned
    nanoseconds) passed first. Without a timeout it waits for ever. It reads only, but it
    orders memory and must stay where it is, so it is marked as writing too."""

    name = "tt.atomic_poll"
    traits = TT | {MemoryRead, MemoryWrite}
    ptr = operand(TT_PtrLike)  # a scalar pointer (verify_): written `!tt.ptr<...>` in full
    expected = operand(TT_Type)
    timeout = opt_operand(I64)
    sem = attribute(MemSemantic)
    scope = attribute(MemSyncScope)
    result = result(I1)
    assembly_format = (
        "$sem `,` $scope `,` $ptr `,` $expected (`timeout` $timeout^)? attr-dict `:` "
        "type($ptr) `,` type($expected) `->` type($result)"
    )

    def __init__(self, ptr, expected, timeout=None, *, sem="acquire", scope="gpu", **fields):
        _atomic_fields(sem, scope, fields)
        fields.setdefault("result", i1)
        super().__init__(ptr, expected, timeout, **fields)

    def verify_(self) -> None:
        if isinstance(self.ptr.type, RankedTensorType):
            fail(self, "polls a scalar pointer")
        _check_ptr_matches(self, self.expected, "ptr type matches expected type")


@irdl_op
class MakeTensorPtrOp(Operation):
    """A block pointer: `base` with the parent tensor's shape and strides, at `offsets`.
    ODS says SameVariadicOperandSize; here the three groups' sizes are kept in
    `operandSegmentSizes`, as for any op with several variadic groups."""

    name = "tt.make_tensor_ptr"
    traits = TT | {Pure}
    base = operand(TT_Ptr)
    shape = var_operand(I64)
    strides = var_operand(I64)
    offsets = var_operand(I32)
    order = attribute(DenseI32ArrayAttr)
    result = result(TT_TensorPtr)
    assembly_format = (
        "$base `,` `[` $shape `]` `,` `[` $strides `]` `,` `[` $offsets `]` attr-dict `:` "
        "type($result)"
    )
    type_inference = (
        ("base", "result", lambda t: type(t)(t.pointee_type.element_type, t.address_space)),
    )

    def __init__(self, base, shape, strides, offsets, order, **fields):
        super().__init__(base, shape, strides, offsets, order=i32_array(order), **fields)

    def verify_(self) -> None:
        t = self.result.type
        rank = t.pointee_type.rank
        if not len(self.shape) == len(self.strides) == len(self.offsets) == rank:
            fail(self, f"expected {rank} shape, stride and offset operands each")
        expected = type(t)(t.pointee_type.element_type, t.address_space)
        check_type(self, self.base.type, expected, "infer pointer type from the result type")


@irdl_op
class AdvanceOp(Operation):
    """A block pointer moved by `offsets` (one per dimension)."""

    name = "tt.advance"
    traits = TT | {Pure}
    ptr = operand(TT_TensorPtr)
    offsets = var_operand(I32)
    result = result(TT_TensorPtr, like="ptr")
    assembly_format = "$ptr `,` `[` $offsets `]` attr-dict `:` type($result)"
    type_inference = (("ptr", "result", None),)

    def verify_(self) -> None:
        check_type(self, self.result.type, self.ptr.type, "result type matches ptr type")

    def fold(self):
        if all(is_splat_value(constant_value(v), lambda x: x == 0) for v in self.offsets):
            return (self.ptr,)
        return None
