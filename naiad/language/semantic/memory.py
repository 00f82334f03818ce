"""Loads, stores and atomics (block pointers and descriptors become pointer blocks and masks)."""

from __future__ import annotations

from .. import dtypes as t
from ..core import _unwrap_if_constexpr, tensor

_LOAD_CACHE = ("", ".ca", ".cg", ".cs", ".cv")  # .cs: Triton main's
_STORE_CACHE = ("", ".wb", ".cg", ".cs", ".wt")
_EVICTION = ("", "evict_first", "evict_last")
_SEMANTICS = ("acquire", "release", "acq_rel", "relaxed")
_SCOPES = ("gpu", "cta", "sys")


def _check_choice(kind: str, value, allowed):
    value = _unwrap_if_constexpr(value)
    if value is None:  # Triton reads None as the default (""), e.g. `padding_option=None`
        value = ""
    if value not in allowed:
        raise ValueError(f"{kind} must be one of {list(allowed)}, got {value!r}")
    return value


class MemoryMixin:
    """Mixed into `Semantic`."""

    # -- load / store ---------------------------------------------------------------------------
    def load(
        self,
        ptr,
        mask=None,
        other=None,
        boundary_check=(),
        padding_option="",
        cache_modifier="",
        eviction_policy="",
        volatile=False,
    ) -> tensor:
        hints = {
            "cache": _check_choice("cache_modifier", cache_modifier, _LOAD_CACHE),
            "evict": _check_choice("eviction_policy", eviction_policy, _EVICTION),
            "volatile": bool(_unwrap_if_constexpr(volatile)),
        }
        padding_option = _check_choice("padding_option", padding_option, ("", "zero", "nan"))
        if getattr(ptr, "is_block_pointer", False):
            if mask is not None or other is not None:
                raise ValueError(
                    "`mask` and `other` arguments cannot be specified for loading block pointers"
                )
            return ptr.load(self, boundary_check, padding_option, hints)
        if boundary_check or padding_option:
            raise ValueError("`boundary_check` and `padding_option` are only for block pointers")
        return self.pointer_load(ptr, mask, other, hints)

    def pointer_load(self, ptr, mask=None, other=None, hints=None) -> tensor:
        """A load through a pointer or a block of them; `hints`: `cache` (".cg", ...), `evict`
        ("evict_last", ...) and `volatile`, which the TTIR keeps (load's defaults: none)."""
        ptr = self.to_tensor(ptr)
        if not ptr.type.scalar.is_ptr():
            raise ValueError(f"Unsupported ptr type {ptr.type} in `tl.load`")
        if other is not None and mask is None:
            raise ValueError("`other` cannot be provided without `mask`")
        if ptr.type.is_block():
            # As Triton: a load broadcasts the pointer with the mask and `other` (both ways),
            # so `tl.load(p + cols[None, :], mask=rows[:, None] < m)` loads a full block.
            if mask is not None:
                ptr, mask = self.broadcast_impl_value(ptr, self.to_tensor(mask))
            if other is not None:
                ptr, other = self.broadcast_impl_value(ptr, self.to_tensor(other))
        mask, other = self._broadcast_to_pointer(ptr, mask, other, "load")
        element = ptr.type.scalar.element_ty
        if element.is_bool():
            as_bytes = self.cast(ptr, t.pointer_type(t.int8, ptr.type.scalar.address_space))
            other = None if other is None else self.cast(other, t.int8)
            return self.cast(self.pointer_load(as_bytes, mask, other, hints), t.int1)
        if other is not None:
            other = self.cast(other, element)
        ty = ptr.type.with_element_ty(element) if ptr.type.is_block() else element
        # The hints only when given, as for stores: a builder without them still loads.
        given = {name: value for name, value in (hints or {}).items() if value}
        handle = self.builder.load(
            ptr.handle,
            None if mask is None else mask.handle,
            None if other is None else other.handle,
            ty,
            **given,
        )
        return tensor(handle, ty)

    def _broadcast_to_pointer(self, ptr, mask, other, what):
        if mask is not None:
            mask = self.to_tensor(mask)
            if mask.type.scalar != t.int1:
                raise ValueError(
                    f"Mask argument of tl.{what} must be of type int1 (bool), got "
                    f"{mask.type.scalar}"
                )
        if other is not None:
            other = self.to_tensor(other)
        if ptr.type.is_block():
            shape = ptr.type.shape
            mask = None if mask is None else self.broadcast_impl_shape(mask, shape)
            other = None if other is None else self.broadcast_impl_shape(other, shape)
        elif mask is not None and mask.type.is_block():
            raise ValueError(
                "Mask argument cannot be block type if pointer argument is not a block"
            )
        elif other is not None and other.type.is_block():
            raise ValueError(
                "Other argument cannot be block type if pointer argument is not a block"
            )
        return mask, other

    def store(
        self, ptr, value, mask=None, boundary_check=(), cache_modifier="", eviction_policy=""
    ) -> None:
        _check_choice("cache_modifier", cache_modifier, _STORE_CACHE)
        _check_choice("eviction_policy", eviction_policy, _EVICTION)
        if getattr(ptr, "is_block_pointer", False):
            if mask is not None:
                raise ValueError("`mask` argument cannot be specified for storing block pointers")
            return ptr.store(self, value, boundary_check)
        if boundary_check:
            raise ValueError("`boundary_check` is only for block pointers")
        return self.pointer_store(ptr, value, mask, cache_modifier, eviction_policy)

    def pointer_store(self, ptr, value, mask=None, cache_modifier="", eviction_policy="") -> None:
        ptr = self.to_tensor(ptr)
        if not ptr.type.scalar.is_ptr():
            raise ValueError(f"Unsupported ptr type {ptr.type} in `tl.store`")
        if ptr.type.scalar.is_const():
            raise ValueError("Cannot store to a constant pointer")
        value = self.to_tensor(value)
        if ptr.type.is_block():
            value = self.broadcast_impl_shape(value, ptr.type.shape)
        elif value.type.is_block():
            raise ValueError(
                "Value argument cannot be block type if pointer argument is not a block"
            )
        mask, _ = self._broadcast_to_pointer(ptr, mask, None, "store")
        element = ptr.type.scalar.element_ty
        if element.is_bool():
            ptr = self.cast(ptr, t.pointer_type(t.int8, ptr.type.scalar.address_space))
            element = t.int8
        value = self.cast(value, element)
        mask_handle = None if mask is None else mask.handle
        # The hints only when given, so a builder without them still drives a plain store.
        hints = {"cache": cache_modifier, "evict": eviction_policy}
        hints = {k: v for k, v in hints.items() if v}
        self.builder.store(ptr.handle, value.handle, mask_handle, **hints)

    # -- atomics --------------------------------------------------------------------------------
    def _atomic_operands(self, ptr, val, mask, op, sem, scope):
        ptr = self.to_tensor(ptr)
        if not ptr.type.scalar.is_ptr():
            raise ValueError(f"Pointer argument of atomic_{op} must be a pointer, got {ptr.type}")
        if ptr.type.scalar.is_const():
            raise ValueError("Cannot store to a constant pointer")
        element = ptr.type.scalar.element_ty
        # Triton's atom_red_typechecking_impl: fp16/bf16 only for add; no 16-bit integers and
        # nothing narrower than 16 bits. (atomic_cas checks only the width: 16, 32 or 64 bits.)
        if op == "cas":
            pass
        elif element.is_fp16() or element.is_bf16():
            if op != "add":
                raise ValueError(f"atomic_{op} does not support {element}")
        elif element in (t.int16, t.uint16) or element.primitive_bitwidth < 16:
            raise ValueError(f"atomic_{op} does not support {element}")
        if op in ("and", "or", "xor") and element.is_floating():
            raise ValueError(f"atomic_{op} does not support {element}")
        val = self.to_tensor(val)
        if ptr.type.is_block():
            val = self.broadcast_impl_shape(val, ptr.type.shape)
        elif val.type.is_block():
            ptr = self.broadcast_impl_shape(ptr, val.type.shape)
        val = self.cast(val, element)
        if mask is None:
            mask = self.full_constant(True, t.int1, ptr.type.get_block_shapes())
        mask, _ = self._broadcast_to_pointer(ptr, mask, None, f"atomic_{op}")
        sem = _check_choice("sem", _unwrap_if_constexpr(sem) or "acq_rel", _SEMANTICS)
        scope = _check_choice("scope", _unwrap_if_constexpr(scope) or "gpu", _SCOPES)
        return ptr, val, mask, sem, scope

    def _atomic(self, op, ptr, val, mask, sem, scope) -> tensor:
        handle = self.builder.atomic_rmw(
            op, ptr.handle, val.handle, mask.handle, sem, scope, val.type
        )
        return tensor(handle, val.type)

    def atomic_rmw(self, op: str, ptr, val, mask=None, sem=None, scope=None) -> tensor:
        """add, and, or, xor, xchg (max and min go through `atomic_extremum`)."""
        ptr, val, mask, sem, scope = self._atomic_operands(ptr, val, mask, op, sem, scope)
        element = val.type.scalar
        kind = {
            "add": "fadd" if element.is_floating() else "add",
            "and": "and",
            "or": "or",
            "xor": "xor",
            "xchg": "exch",
        }[op]
        return self._atomic(kind, ptr, val, mask, sem, scope)

    def atomic_extremum(self, which: str, ptr, val, mask=None, sem=None, scope=None) -> tensor:
        """atomic_max / atomic_min; floats use integer atomics on their bit patterns, as Triton.

        For a non-negative float, a larger value has a larger signed bit pattern; for a negative
        one, a larger value has a smaller unsigned bit pattern. So max is smax where val >= 0 and
        umin where val < 0 (min is the mirror), each under its half of the mask.
        """
        ptr, val, mask, sem, scope = self._atomic_operands(ptr, val, mask, which, sem, scope)
        element = val.type.scalar
        if element.is_int():
            kind = ("" if element.is_int_signed() else "u") + which
            return self._atomic(kind, ptr, val, mask, sem, scope)
        if element not in (t.float32, t.float64):
            raise ValueError(f"atomic_{which} does not support {element}")
        itype = t.int32 if element.is_fp32() else t.int64
        utype = t.uint32 if element.is_fp32() else t.uint64
        int_ptr = self.cast(ptr, t.pointer_type(itype, ptr.type.scalar.address_space))
        uint_ptr = self.cast(ptr, t.pointer_type(utype, ptr.type.scalar.address_space))
        as_int = self.bitcast(val, itype)
        as_uint = self.bitcast(val, utype)
        non_negative = self.greater_equal(as_int, 0)
        negative = self.less_than(as_int, 0)
        pos_kind, neg_kind = ("max", "umin") if which == "max" else ("min", "umax")
        pos_old = self._atomic(pos_kind, int_ptr, as_int, self.and_(mask, non_negative), sem, scope)
        neg_old = self._atomic(neg_kind, uint_ptr, as_uint, self.and_(mask, negative), sem, scope)
        old_bits = self.where(non_negative, pos_old, self.bitcast(neg_old, itype))
        return self.bitcast(old_bits, element)

    def float_extremum(self, which: str, ptr, val, mask, sem, scope) -> tensor:
        """A float `tt.atomic_rmw max|min` of a block of pointers, `val` and `mask` already of
        its shape and type: IEEE 754-2019's maximum / minimum per element (a NaN wins, -0 is
        below +0). A tensor descriptor's fp16/bf16 atomics are these (Hopper's bulk tensor
        reduction in Triton); `atomic_extremum` refuses 16-bit floats, as Triton's
        `tl.atomic_max` does."""
        return self._atomic(which, ptr, val, mask, sem, scope)

    def atomic_cas(self, ptr, cmp, val, sem=None, scope=None) -> tensor:
        ptr, val, _, sem, scope = self._atomic_operands(ptr, val, None, "cas", sem, scope)
        element = val.type.scalar
        if element.primitive_bitwidth not in (16, 32, 64):
            raise ValueError("atomic_cas only supports elements with width {16, 32, 64}")
        cmp = (
            self.cast(
                self.broadcast_impl_shape(self.to_tensor(cmp), val.type.get_block_shapes()), element
            )
            if val.type.is_block()
            else self.cast(self.to_tensor(cmp), element)
        )
        handle = self.builder.atomic_cas(ptr.handle, cmp.handle, val.handle, sem, scope, val.type)
        return tensor(handle, val.type)

    def atomic_poll(self, ptr, expected, sem=None, scope=None, timeout_ns=None) -> tensor:
        """Triton 3.9's checks, in its words: a scalar pointer to a 16-, 32- or 64-bit integer,
        a poll that only reads (acquire or relaxed), a scalar integer timeout cast to uint64."""
        timeout_ns = _unwrap_if_constexpr(timeout_ns)
        if isinstance(timeout_ns, int) and timeout_ns < 0:
            raise ValueError("atomic_poll timeout_ns must be non-negative")
        ptr, expected = self.to_tensor(ptr), self.to_tensor(expected)
        if ptr.type.is_block():
            raise ValueError("atomic_poll only supports a pointer to a scalar")
        if not ptr.type.is_ptr():
            raise ValueError(f"Unsupported ptr type {ptr.type} in `tl.atomic_poll`")
        if expected.type.is_block():
            raise ValueError("Expected value argument cannot be block type")
        element = ptr.type.element_ty
        if not element.is_int() or element.primitive_bitwidth not in (16, 32, 64):
            raise ValueError("atomic_poll only supports integer elements with width {16, 32, 64}")
        expected = self.cast(expected, element)
        sem = _check_choice("sem", _unwrap_if_constexpr(sem) or "acquire", _SEMANTICS)
        if sem not in ("acquire", "relaxed"):
            raise ValueError("atomic_poll only supports acquire and relaxed semantics")
        scope = _check_choice("scope", _unwrap_if_constexpr(scope) or "gpu", _SCOPES)
        timeout = None
        if timeout_ns is not None:
            timeout = self.to_tensor(timeout_ns)
            if timeout.type.is_block() or not timeout.type.is_int():
                raise ValueError("atomic_poll timeout_ns must be a scalar integer")
            timeout = self.cast(timeout, t.uint64).handle
        handle = self.builder.atomic_poll(ptr.handle, expected.handle, timeout, sem, scope)
        return tensor(handle, t.int1)
