"""The interpreter's builder: makes every language value as a NumPy array, right away.

Handles are NumPy arrays (0-d for scalars) of the host dtype of their language type, and
`Pointers` for pointer values. One builder serves one launch; `pid` is set per program instance.
"""

from __future__ import annotations

import functools

import numpy as np

from ...language.core import tensor
from ...language.semantic.program import BlockHasNoScalarValue
from . import elementwise as ew
from .memory import Memory, Pointers, merged_origin
from .regions import dot, reduce, scan
from .scalar_maps import map_elementwise


class DeviceAssertionError(AssertionError):
    """A `device_assert` (or `assert` in a kernel) failed in debug mode."""


class InterpreterBuilder:
    """A `naiad.language.builder.Builder` over NumPy."""

    holds_inline_ptx = False

    def __init__(self, memory: Memory, grid: tuple, debug: bool, out=print):
        self.memory = memory
        self.grid = grid
        self.debug = debug
        self.pid = (0, 0, 0)
        self.out = out

    # -- values ---------------------------------------------------------------------------------
    def constant(self, value, ty):
        dtype = ew.host_dtype(ty)
        if ty.is_int():
            bits = ty.int_bitwidth
            value = int(value) % (1 << bits)
            if ty.is_int_signed() and value >= 1 << (bits - 1):
                value -= 1 << bits
            return np.array(value, dtype=dtype)
        if ty.is_floating():
            value = float(value)
            if value != value:  # NaN: made each time (its payload is not in the key)
                return ew.floats.convert(np.array(value, np.float64), "fp64", ty.name)
            return _float_constant(ty.name, value.hex())
        raise TypeError(f"cannot make a constant of type {ty}")

    def splat(self, scalar, ty):
        if isinstance(scalar, Pointers):
            return Pointers(np.broadcast_to(scalar.addr, ty.shape), scalar.origin)
        return np.broadcast_to(scalar, ty.shape)

    def retype(self, value, ty):
        return np.asarray(value).view(ew.host_dtype(ty.scalar))

    def elementwise(self, op, operands, ty, **attrs):
        if ty.scalar.is_ptr():
            pointers = ew.pointer_op(op, operands, ty)
            if op == "tt.int_to_ptr":  # its origin: the argument it points into, if any
                pointers.origin = self.memory.origin_of(pointers.addr)
            return pointers
        arrays = [o.addr if isinstance(o, Pointers) else np.asarray(o) for o in operands]
        if op in ew.BINARY:
            result = ew.BINARY[op](arrays[0], arrays[1], ty, **attrs)
        elif op in ew.UNARY:
            result = ew.UNARY[op](arrays[0], ty)
        elif op in ew.CONVERSIONS:
            src = attrs["src"]
            return ew.floats.convert(
                arrays[0], src.name, ty.scalar.name, attrs.get("rounding", "rtne")
            )
        elif op == "arith.select":
            result = np.where(arrays[0], arrays[1], arrays[2])
        elif op == "arith.bitcast":
            result = arrays[0].view(ew.host_dtype(ty.scalar))
        elif op == "tt.ptr_to_int":
            result = arrays[0].view(np.int64)
        elif op == "math.fma":
            result = ew.fma(*arrays, ty)
        elif op == "tt.clampf":
            result = ew.clampf(*arrays, ty, attrs["propagate_nan"])
        elif op == "tt.extern_elementwise":
            from .libdevice import call as libdevice_call

            result = libdevice_call(attrs["symbol"], arrays, ty)
        else:
            raise NotImplementedError(f"the interpreter has no meaning for `{op}`")
        return np.asarray(result).astype(ew.host_dtype(ty.scalar), copy=False)

    def make_range(self, start, end, ty):
        return np.arange(start, end, dtype=np.int32)

    def program_id(self, axis):
        return np.array(self.pid[axis], dtype=np.int32)

    def num_programs(self, axis):
        return np.array(self.grid[axis], dtype=np.int32)

    # -- shapes ---------------------------------------------------------------------------------
    def _structural(self, fn, *values):
        """Apply a shape function to arrays, keeping pointer provenance."""
        arrays = [v.addr if isinstance(v, Pointers) else v for v in values]
        result = fn(*arrays)
        if any(isinstance(v, Pointers) for v in values):
            if isinstance(result, tuple):
                return tuple(Pointers(r, merged_origin(*values)) for r in result)
            return Pointers(result, merged_origin(*values))
        return result

    def broadcast(self, value, ty):
        return self._structural(lambda a: np.broadcast_to(a, ty.shape), value)

    def expand_dims(self, value, axis, ty):
        return self._structural(lambda a: np.expand_dims(a, axis), value)

    def reshape(self, value, ty, can_reorder):
        return self._structural(lambda a: np.reshape(a, ty.shape), value)

    def permute(self, value, order, ty):
        return self._structural(lambda a: np.transpose(a, order), value)

    def join(self, lhs, rhs, ty):
        return self._structural(lambda a, b: np.stack([a, b], axis=-1), lhs, rhs)

    def split(self, value, ty):
        return self._structural(lambda a: (a[..., 0], a[..., 1]), value)

    def cat(self, lhs, rhs, ty):
        return self._structural(lambda a, b: np.concatenate([a, b]), lhs, rhs)

    def unsplat(self, value, ty):
        return self._structural(lambda a: np.reshape(a, ()), value)

    def gather(self, src, index, axis, ty):
        index = np.asarray(index).astype(np.int64)
        size = np.shape(src.addr if isinstance(src, Pointers) else src)[axis]
        if ((index < 0) | (index >= size)).any():
            raise IndexError(f"gather index out of range [0, {size}) along axis {axis}")
        return self._structural(lambda a: np.take_along_axis(a, index, axis), src)

    def histogram(self, value, num_bins, mask, ty):
        values = np.asarray(value).astype(np.int64).reshape(-1)
        keep = (values >= 0) & (values < num_bins)
        if mask is not None:
            keep &= np.asarray(mask).reshape(-1)
        return np.bincount(values[keep], minlength=num_bins).astype(np.int32)

    # -- memory ---------------------------------------------------------------------------------
    def load(self, ptr, mask, other, ty, cache="", evict="", volatile=False):
        """Programs run one at a time here: the hints change nothing."""
        dtype = ew.host_dtype(ty.scalar)
        fill = np.zeros((), dtype) if other is None else other
        if ty.scalar.is_ptr():  # a pointer loaded from memory: where it points, its origin
            addr = self.memory.load(ptr, mask, np.uint64, fill)
            return Pointers(addr, self.memory.origin_of(addr))
        result = self.memory.load(ptr, mask, dtype, fill)
        return result if ty.is_block() else result.reshape(())

    def block_pointers(self, base, offsets, strides, shape, checks, ty):
        """A block pointer's pointers and mask in a few NumPy operations (the semantic layer
        would make some twenty values of them): the same int64 arithmetic, wrapping alike, the
        per-dimension byte offsets summed before they are added to the base (equal modulo 2**64
        to adding them one by one)."""
        block = ty.shape
        size = np.int64(max(1, ty.scalar.element_ty.primitive_bitwidth // 8))
        offset, mask = np.zeros((), np.int64), None
        for d, extent in enumerate(block):
            coords = np.asarray(offsets[d]).astype(np.int64) + np.arange(extent, dtype=np.int64)
            coords = coords.reshape([-1 if axis == d else 1 for axis in range(len(block))])
            offset = offset + coords * np.asarray(strides[d]).astype(np.int64)
            if d in checks:
                inside = (coords >= 0) & (coords < np.asarray(shape[d]).astype(np.int64))
                mask = inside if mask is None else mask & inside
        addr = (base.addr.astype(np.int64) + np.broadcast_to(offset, block) * size).view(np.uint64)
        return Pointers(addr, base.origin), None if mask is None else np.broadcast_to(mask, block)

    def store(self, ptr, value, mask, cache="", evict=""):
        """Cache hints change nothing here."""
        value = value.addr if isinstance(value, Pointers) else np.asarray(value)
        self.memory.store(ptr, value, mask, value.dtype)

    def atomic_rmw(self, kind, ptr, value, mask, sem, scope, ty):
        from .atomics import atomic_rmw

        return atomic_rmw(self.memory, kind, ptr, np.asarray(value), np.asarray(mask), ty)

    def atomic_cas(self, ptr, cmp, value, sem, scope, ty):
        from .atomics import atomic_cas

        return atomic_cas(self.memory, ptr, np.asarray(cmp), np.asarray(value), ty)

    def atomic_poll(self, ptr, expected, timeout, sem, scope):
        from .atomics import atomic_poll

        return atomic_poll(self.memory, ptr, np.asarray(expected), timeout)

    # -- regions --------------------------------------------------------------------------------
    def reduce(self, values, axis, combine, types):
        return reduce(values, axis, combine)

    def scan(self, values, axis, reverse, combine, types):
        return scan(values, axis, reverse, combine)

    def map_elementwise(self, values, shape, pack, body):
        return map_elementwise(values, shape, pack, body)

    def dot(self, lhs, rhs, acc, input_precision, max_num_imprecise_acc, ty):
        return dot(
            np.asarray(lhs),
            np.asarray(rhs),
            np.asarray(acc),
            input_precision,
            ew.host_dtype(ty.scalar),
        )

    # -- side effects ---------------------------------------------------------------------------
    def _linear_pid(self):
        x, y, z = self.pid
        return x + self.grid[0] * (y + self.grid[1] * z)

    def static_print(self, text):
        if self._linear_pid() == 0:
            self.out(text, end="")

    def device_print(self, prefix, hex, values, types):
        from .printing import format_device_print

        for line in format_device_print(self.pid, prefix, hex, values, types):
            self.out(line)

    def inline_asm(self, asm, constraints, values, result_types, is_pure, pack):
        raise NotImplementedError(
            "inline_asm_elementwise runs only on the GPU back end: inline PTX "
            "cannot execute in the interpreter or on the CPU"
        )

    def device_assert(self, cond, message):
        cond = np.asarray(cond)
        if not cond.all():
            where = np.argwhere(~cond)[:4].tolist() if cond.ndim else []
            at = f" at index {where[0]}" if where else ""
            raise DeviceAssertionError(
                f"Device-side assertion `{message}` failed in program {self.pid}{at}"
            )

    def barrier(self):
        """Programs run one at a time and each as a whole, so there is nothing to wait for."""

    def assume(self, cond):
        if self.debug and not np.asarray(cond).all():
            raise DeviceAssertionError(
                f"tl.assume: the assumed condition is false in program {self.pid}"
            )

    def tensor_map(self, target, base, shape, strides, wide_strides, block_type, padding):
        """None: the interpreter reads every descriptor through its pointers."""
        return None

    def hint(self, value, kind, values):
        if self.debug and kind == "multiple_of" and not isinstance(value, Pointers):
            divisor = np.array(values[-1] if np.ndim(value) else values[0], dtype=np.int64)
            if (np.asarray(value).astype(np.int64) % divisor).any():
                raise DeviceAssertionError(f"tl.multiple_of: a value is not a multiple of {values}")
        return value

    # -- Python protocols -------------------------------------------------------------------------
    def to_python(self, value, ty, kind):
        if isinstance(value, Pointers):
            return kind(int(value.addr))
        return kind(np.asarray(value).item()) if kind is not int else int(np.asarray(value))

    def to_string(self, value, ty):
        if isinstance(value, Pointers):
            return str(value.addr)
        return str(np.asarray(value))


@functools.lru_cache(maxsize=1024)
def _float_constant(name: str, hex_value: str) -> np.ndarray:
    """The float constant `hex_value` (`float.hex`: -0.0 apart from 0.0) of type `name`, made
    once (a launch makes hundreds of constants, mostly the same few), read-only as it is
    shared."""
    value = ew.floats.convert(np.array(float.fromhex(hex_value), np.float64), "fp64", name)
    value.setflags(write=False)
    return value


def scalar_tensor(value, ty) -> tensor:
    """A language scalar holding `value` (used for kernel arguments)."""
    return tensor(np.asarray(value, dtype=ew.host_dtype(ty)), ty)


__all__ = ["BlockHasNoScalarValue", "DeviceAssertionError", "InterpreterBuilder", "scalar_tensor"]
