"""Memory builtins: load, store, atomics and block pointers.

Block pointers (and the tensor descriptors of `tensor_descriptors.py`, built on them) are
language-level values, as in Triton 3.8: a load through one builds the block of pointers
`base + sum_d (offset_d + arange(block_d)) * stride_d` and the mask `0 <= coordinate < shape` for
the checked dimensions, then loads through ordinary pointers. Every back end therefore sees one
kind of memory access.
"""

from __future__ import annotations

import math as _pymath

from . import dtypes as t
from .core import _tensor_member, _unwrap_if_constexpr, builtin, must_use_result, tensor


@builtin
def load(
    pointer,
    mask=None,
    other=None,
    boundary_check=(),
    padding_option="",
    cache_modifier="",
    eviction_policy="",
    volatile=False,
    _semantic=None,
):
    """Load a block (or a scalar) through `pointer`.

    Lanes where `mask` is false are not read; they take `other` (unspecified without `other`).
    For a block pointer, `boundary_check` lists the dimensions to bound-check and
    `padding_option` ("zero" or "nan") fills out-of-bounds lanes. Cache and eviction hints are
    accepted and passed to the GPU back end.
    """
    return _semantic.load(
        pointer,
        mask,
        other,
        _unwrap_if_constexpr(boundary_check),
        _unwrap_if_constexpr(padding_option),
        cache_modifier,
        eviction_policy,
        volatile,
    )


@_tensor_member
@builtin
def store(
    pointer,
    value,
    mask=None,
    boundary_check=(),
    cache_modifier="",
    eviction_policy="",
    _semantic=None,
):
    """Store `value` (broadcast and converted to the pointee type) where `mask` is true."""
    return _semantic.store(
        pointer,
        value,
        mask,
        _unwrap_if_constexpr(boundary_check),
        _unwrap_if_constexpr(cache_modifier),
        _unwrap_if_constexpr(eviction_policy),
    )


# -------------------------------------------------------------------------------------------------
# atomics: each returns the values memory held before the operation
# -------------------------------------------------------------------------------------------------
def _rmw(op):
    @builtin
    def atomic(pointer, val, mask=None, sem=None, scope=None, _semantic=None):
        return _semantic.atomic_rmw(op, pointer, val, mask, sem, scope)

    return atomic


def _extremum(which):
    @builtin
    def atomic(pointer, val, mask=None, sem=None, scope=None, _semantic=None):
        return _semantic.atomic_extremum(which, pointer, val, mask, sem, scope)

    return atomic


atomic_add = _tensor_member(_rmw("add"))
atomic_and = _tensor_member(_rmw("and"))
atomic_or = _tensor_member(_rmw("or"))
atomic_xor = _tensor_member(_rmw("xor"))
atomic_xchg = _tensor_member(_rmw("xchg"))
atomic_max = _tensor_member(_extremum("max"))
atomic_min = _tensor_member(_extremum("min"))
for _name in (
    "atomic_add",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "atomic_xchg",
    "atomic_max",
    "atomic_min",
):
    _fn = globals()[_name]
    _fn.__name__ = _fn.__qualname__ = _name
    _fn.__doc__ = (
        f"Atomically apply `{_name[7:]}` of `val` at `pointer` where `mask` holds; "
        "return the old values. `sem` (acquire, release, acq_rel, relaxed) and `scope` "
        "(gpu, cta, sys) order it with other memory operations."
    )
    setattr(tensor, _name, _fn)


@_tensor_member
@builtin
def atomic_cas(pointer, cmp, val, sem=None, scope=None, _semantic=None):
    """Atomically store `val` where memory equals `cmp`; return the old values."""
    return _semantic.atomic_cas(pointer, cmp, val, sem, scope)


# -------------------------------------------------------------------------------------------------
# block pointers
# -------------------------------------------------------------------------------------------------
class block_ptr:
    """A pointer to a `block_shape` window of a `shape`-sized strided tensor, at `offsets`."""

    is_block_pointer = True

    def __init__(self, base, shape, strides, offsets, block_shape, order):
        self.base, self.shape, self.strides = base, list(shape), list(strides)
        self.offsets, self.block_shape, self.order = list(offsets), list(block_shape), list(order)
        self.type = t.pointer_type(t.block_type(base.type.scalar.element_ty, self.block_shape))

    @must_use_result
    def advance(self, offsets, _semantic=None):
        """`tl.advance(self, offsets)`, as the method `ptr.advance(offsets)`."""
        return advance(self, offsets, _semantic=_semantic)

    def advanced(self, semantic, deltas):
        if len(deltas) != len(self.offsets):
            raise ValueError(f"advance needs {len(self.offsets)} offsets, got {len(deltas)}")
        # As Triton 3.8: offsets are int64; every delta is widened, then added.
        deltas = [semantic.cast(d, t.int64) for d in deltas]
        offsets = [semantic.add(o, d) for o, d in zip(self.offsets, deltas)]
        return block_ptr(self.base, self.shape, self.strides, offsets, self.block_shape, self.order)

    def _pointers_and_mask(self, semantic, boundary_check):
        """The block of pointers and the bounds mask, computed as Triton 3.8 lowers a block
        pointer: per dimension, the int64 coordinates `offset + arange`, broadcast to the block,
        times the stride; the mask `0 <= coordinate < shape` of the checked dimensions. A
        builder that can make both at once (the interpreter) is asked first."""
        made = self._made_at_once(semantic, boundary_check)
        if made is not None:
            return made
        rank = len(self.block_shape)
        pointers, mask = self.base, None
        zero = semantic.scalar_constant(0, t.int64) if boundary_check else None
        for d in range(rank):
            span = semantic.cast(semantic.arange(0, self.block_shape[d]), t.int64)
            coords = semantic.add(self.offsets[d], span)
            for axis in range(rank):
                if axis != d:
                    coords = semantic.expand_dims(coords, axis)
            coords = semantic.broadcast_impl_shape(coords, self.block_shape)
            pointers = semantic.add(pointers, semantic.mul(coords, self.strides[d]))
            if d in boundary_check:
                inside = semantic.and_(
                    semantic.greater_equal(coords, zero), semantic.less_than(coords, self.shape[d])
                )
                mask = inside if mask is None else semantic.and_(mask, inside)
        return pointers, mask

    def _made_at_once(self, semantic, checks):
        """The builder's `block_pointers` as tensors, or None where it builds them from
        operations. Only for the usual operand types (integer offsets of 32 or 64 bits, int64
        strides and shape), whose arithmetic it must repeat bit for bit."""
        scalars = [*self.offsets, *self.strides, *self.shape]
        if not all(isinstance(s, tensor) and not s.type.is_block() for s in scalars):
            return None
        offset_types = {o.type for o in self.offsets}
        if not offset_types <= {t.int32, t.int64}:
            return None
        if any(s.type != t.int64 for s in [*self.strides, *self.shape]):
            return None
        ty = t.block_type(self.base.type.scalar, self.block_shape)
        made = semantic.builder.block_pointers(
            self.base.handle,
            [o.handle for o in self.offsets],
            [s.handle for s in self.strides],
            [s.handle for s in self.shape],
            sorted(set(checks)),
            ty,
        )
        if made is None:
            return None
        pointers, mask = made
        mask_type = t.block_type(t.int1, self.block_shape)
        return tensor(pointers, ty), None if mask is None else tensor(mask, mask_type)

    def _check_boundary(self, boundary_check):
        checks = [boundary_check] if isinstance(boundary_check, int) else list(boundary_check)
        for d in checks:
            if not 0 <= d < len(self.block_shape):
                raise ValueError(
                    f"boundary_check dimension {d} is out of range for a block pointer "
                    f"of rank {len(self.block_shape)}"
                )
        return checks

    def load(self, semantic, boundary_check, padding_option, hints=None):
        checks = self._check_boundary(boundary_check)
        pointers, mask = self._pointers_and_mask(semantic, checks)
        other = None
        if mask is not None and padding_option:
            element = self.base.type.scalar.element_ty
            if padding_option == "nan" and not element.is_floating():
                raise ValueError("padding_option='nan' needs a floating-point block")
            other = _pymath.nan if padding_option == "nan" else 0
        elif mask is not None:
            other = 0
        if other == 0 and self.base.type.scalar.element_ty.is_floating():
            other = 0.0  # an fp32 zero converted to the element type, as Triton's padding
        return semantic.pointer_load(pointers, mask, other, hints)

    def store(self, semantic, value, boundary_check):
        pointers, mask = self._pointers_and_mask(semantic, self._check_boundary(boundary_check))
        return semantic.pointer_store(pointers, value, mask)


@builtin
def make_block_ptr(base, shape, strides, offsets, block_shape, order, _semantic=None):
    """A block pointer into a strided `shape` tensor at `base` (deprecated in Triton 3.8, kept)."""
    base = _semantic.to_tensor(base)
    if base.type.is_block() or not base.type.scalar.is_ptr():
        raise ValueError(f"make_block_ptr: base must be a scalar pointer, got {base.type}")
    block_shape = [_unwrap_if_constexpr(b) for b in _unwrap_if_constexpr(block_shape)]
    _semantic.validate_block_shape(block_shape)
    order = [_unwrap_if_constexpr(o) for o in _unwrap_if_constexpr(order)]
    ranks = {len(shape), len(strides), len(offsets), len(block_shape), len(order)}
    if len(ranks) != 1:
        raise ValueError(
            "make_block_ptr: shape, strides, offsets, block_shape and order must have "
            "the same length"
        )
    if sorted(order) != list(range(len(block_shape))):
        raise ValueError(f"make_block_ptr: order must be a permutation, got {order}")
    shape = [_semantic.cast(_semantic.to_tensor(s), t.int64) for s in shape]
    strides = [_semantic.cast(_semantic.to_tensor(s), t.int64) for s in strides]
    offsets = [_semantic.cast(_semantic.to_tensor(o), t.int64) for o in offsets]
    return block_ptr(base, shape, strides, offsets, block_shape, order)


@must_use_result
@builtin
def advance(base, offsets, _semantic=None):
    """A block pointer moved by `offsets` (one per dimension); `base` is unchanged."""
    if not getattr(base, "is_block_pointer", False):
        raise TypeError("advance needs a block pointer made by make_block_ptr")
    return base.advanced(_semantic, [_semantic.to_tensor(o) for o in _unwrap_if_constexpr(offsets)])


tensor.advance = advance
