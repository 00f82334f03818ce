"""The interpreter's view of memory: argument buffers, pointers with provenance, checked access.

A pointer value is a `Pointers`: an array of 64-bit addresses plus the buffer (argument) it was
derived from. Every access is checked lane by lane: an active lane must address the storage of that
argument, otherwise the kernel gets an error naming the argument and the offending offsets (the GPU
would read garbage or fault; the interpreter never touches memory it was not given). A pointer made
from an integer, or loaded from memory, takes as its origin the argument whose storage holds every
address it was made with (`Memory.holding`), so an access through it that strays is blamed on the
argument it pointed into, as the compiled code's bounds checks blame it; one made with addresses in
several arguments, or outside all of them, is resolved lane by lane at each access. An address
that no argument holds is looked for in the host arrays alive in the process (live_arrays.py: a
table of `data_ptr()`s passed instead of the tensors), once per launch, and only when a pointer
made with it is first accessed (`PendingOrigin`): the search walks every object the collector
tracks (0.3-0.8 s in a test suite's process), and integers made pointers that no access reads
through (a `tl.where` between two of them, stored as integers) need none; an active lane
outside every one of them is an error of its own (the interpreter reads only arrays it can see).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

from ..host_arrays import HostArray
from .live_arrays import describe_live, live_host_arrays


class OutOfBoundsAccess(IndexError):
    """An active lane of a load, store or atomic addresses memory outside its argument."""


@dataclass(eq=False)
class Buffer:
    """One argument's storage: `[base, base + nbytes)`, seen as bytes through `memory`."""

    name: str
    base: int
    nbytes: int
    data_ptr: int
    itemsize: int
    writable: bool = True

    def __post_init__(self):
        raw = (ctypes.c_uint8 * max(self.nbytes, 1)).from_address(self.base) if self.base else None
        self.memory = np.ctypeslib.as_array(raw) if raw is not None else np.zeros(1, np.uint8)

    def typed(self, np_dtype) -> np.ndarray:
        """The storage as an array of `np_dtype` (element i at byte offset i * itemsize)."""
        itemsize = np.dtype(np_dtype).itemsize
        return np.ndarray((self.nbytes // itemsize,), np_dtype, self.memory, 0)


class Pointers:
    """An array of addresses and the buffer they derive from (None when unknown; a
    PendingOrigin until the live arrays are looked at)."""

    __slots__ = ("addr", "origin")

    def __init__(self, addr, origin: Buffer | PendingOrigin | None):
        self.addr = np.asarray(addr, dtype=np.uint64)
        self.origin = origin

    @property
    def shape(self):
        return self.addr.shape

    def __repr__(self):
        where = self.origin.name if self.origin else "?"
        return f"Pointers({where}: {self.addr!r})"


class PendingOrigin:
    """The origin of a pointer made with addresses some of which no argument holds, found at
    the first access through it (`resolved`): `find()` gives it (`Memory.holding` once the
    live arrays are looked at, or the common origin of a select's operands)."""

    __slots__ = ("_buffer", "_find")

    def __init__(self, find):
        self._find, self._buffer = find, None

    def buffer(self) -> Buffer | None:
        if self._find is not None:
            self._buffer, self._find = self._find(), None
        return self._buffer

    @property
    def name(self) -> str:
        return self.buffer().name if self.buffer() is not None else "?"


def resolved(origin) -> Buffer | None:
    """A pointer's origin as a buffer (a `PendingOrigin` looked up now)."""
    return origin.buffer() if isinstance(origin, PendingOrigin) else origin


def merged_origin(*values):
    """The common origin of several pointer operands, or None when they differ (pending
    while one of them is)."""
    origins = {v.origin for v in values if isinstance(v, Pointers)}
    if len(origins) > 1 and any(isinstance(o, PendingOrigin) for o in origins):
        return PendingOrigin(lambda: _common({resolved(o) for o in origins}))
    return _common(origins)


def _common(origins: set):
    return origins.pop() if len(origins) == 1 else None


class Memory:
    """The buffers of one launch, and checked typed access to them."""

    def __init__(self):
        self.buffers: list[Buffer] = []
        self._bases = np.zeros(0, np.uint64)
        self._live: list[HostArray] | None = None  # found when no argument holds an address

    def add(self, buffer: Buffer) -> Buffer:
        self.buffers.append(buffer)
        self.buffers.sort(key=lambda b: b.base)
        self._bases = np.array([b.base for b in self.buffers], dtype=np.uint64)
        return buffer

    def _containing(self, addr: np.ndarray) -> np.ndarray:
        """Per address, the index of the buffer whose storage holds it, -1 where none does."""
        where = np.searchsorted(self._bases, addr, side="right") - 1
        ends = np.array([b.base + b.nbytes for b in self.buffers], dtype=np.uint64)
        inside = (where >= 0) & (addr < ends[np.maximum(where, 0)]) if len(ends) else where >= 0
        return np.where(inside, where, -1)

    def _containing_or_live(self, addr: np.ndarray) -> np.ndarray:
        """`_containing`, after adding the live arrays that hold addresses no buffer holds."""
        where = self._containing(addr)
        if (where < 0).any() and self._add_live(addr[where < 0]):
            where = self._containing(addr)
        return where

    def _add_live(self, addr: np.ndarray) -> bool:
        """Add the live arrays holding some of `addr` as buffers; whether any was added."""
        if self._live is None:
            self._live = live_host_arrays()
        known = {b.base for b in self.buffers}
        added = False
        for array in self._live:
            if array.storage_base in known:
                continue
            end = array.storage_base + array.storage_nbytes
            if ((addr >= array.storage_base) & (addr < end)).any():
                base, nbytes = array.storage_base, array.storage_nbytes
                name = describe_live(array)
                self.add(Buffer(name, base, nbytes, base, array.itemsize, array.writable))
                added = True
        return added

    def origin_of(self, addr):
        """`holding`, looked up among the live arrays only at the first access through the
        pointer (a PendingOrigin) where some address is inside no argument."""
        addr = np.asarray(addr, dtype=np.uint64).reshape(-1)
        where = self._containing(addr)
        if (where < 0).any():
            return PendingOrigin(lambda: self.holding(addr))
        if where.size == 0 or (where != where[0]).any():
            return None
        return self.buffers[int(where[0])]

    def holding(self, addr) -> Buffer | None:
        """The buffer whose storage holds every address of `addr` (a pointer's provenance when
        it is made from integers), None when no one buffer does."""
        where = self._containing_or_live(np.asarray(addr, dtype=np.uint64).reshape(-1))
        if where.size == 0 or where[0] < 0 or (where != where[0]).any():
            return None
        return self.buffers[int(where[0])]

    def _locate(self, addr: np.ndarray, what: str) -> np.ndarray:
        """Per address, the index of the buffer holding it (for pointers of unknown origin)."""
        where = self._containing_or_live(addr)
        if (where < 0).any():
            bad = addr[where < 0]
            shown = ", ".join(f"{int(x):#x}" for x in bad[:8]) + (", ..." if bad.size > 8 else "")
            raise OutOfBoundsAccess(
                f"{what} through a pointer made from an integer: {bad.size} active lane(s) "
                f"address [{shown}], inside no argument of the kernel and no live host array; "
                "the interpreter reads and writes only arrays it can see"
            )
        return where

    def accesses(self, ptrs: Pointers, active: np.ndarray | None, np_dtype, what: str):
        """[(buffer, lanes, element indices)], one per buffer the active lanes address (lanes
        of unknown origin may address several); `lanes` selects them in the flattened block."""
        addr = ptrs.addr.reshape(-1)
        lanes = slice(None) if active is None else np.flatnonzero(active.reshape(-1))
        addr = addr[lanes]
        if addr.size == 0:
            return []
        origin = resolved(ptrs.origin)
        if origin is not None:
            return [(origin, lanes, self._indices(origin, addr, np_dtype, what))]
        where = self._locate(addr, what)
        if (where == where[0]).all():
            buffer = self.buffers[int(where[0])]
            return [(buffer, lanes, self._indices(buffer, addr, np_dtype, what))]
        positions = np.arange(ptrs.addr.size)[lanes]
        groups = []
        for i in np.unique(where):
            chosen = where == i
            buffer = self.buffers[int(i)]
            index = self._indices(buffer, addr[chosen], np_dtype, what)
            groups.append((buffer, positions[chosen], index))
        return groups

    def element_indices(self, ptrs: Pointers, active: np.ndarray | None, np_dtype, what: str):
        """The one buffer and the element indices addressed by the active lanes (flattened, in
        order), for accesses that must stay inside one buffer (atomics)."""
        groups = self.accesses(ptrs, active, np_dtype, what)
        if not groups:
            return None, np.zeros(0, np.int64)
        if len(groups) != 1:
            names = ", ".join(buffer.name for buffer, _, _ in groups)
            raise OutOfBoundsAccess(
                f"one {what} spans several arguments ({names}); each {what} must "
                "stay inside one argument"
            )
        return groups[0][0], groups[0][2]

    @staticmethod
    def _indices(buffer: Buffer, addr: np.ndarray, np_dtype, what: str) -> np.ndarray:
        """The element indices of `addr` in `buffer`, every one checked to lie inside it."""
        itemsize = np.dtype(np_dtype).itemsize
        offset = addr.astype(np.int64) - np.int64(buffer.base)
        outside = (offset < 0) | (offset + itemsize > buffer.nbytes)
        if outside.any():
            element = (addr.astype(np.int64) - np.int64(buffer.data_ptr)) // buffer.itemsize
            bad = element[outside]
            shown = ", ".join(str(int(x)) for x in bad[:8]) + (", ..." if bad.size > 8 else "")
            raise OutOfBoundsAccess(
                f"out-of-bounds {what} through argument `{buffer.name}`: {bad.size} active lane(s) "
                f"address element offset(s) [{shown}] outside its storage of "
                f"{buffer.nbytes // buffer.itemsize} element(s)"
            )
        # Inside the buffer every offset is >= 0, and an item's size a power of two: bit
        # operations give `% itemsize` and `// itemsize`, several times faster.
        if itemsize > 1 and (offset & (itemsize - 1)).any():
            raise OutOfBoundsAccess(
                f"misaligned {what} through argument `{buffer.name}`: addresses "
                f"must be multiples of {itemsize} bytes"
            )
        return offset >> (itemsize.bit_length() - 1)

    def load(self, ptrs: Pointers, mask, np_dtype, fill) -> np.ndarray:
        active = None if mask is None else np.broadcast_to(mask, ptrs.shape)
        groups = self.accesses(ptrs, active, np_dtype, "load")
        if active is None:
            out = np.empty(ptrs.shape, np_dtype)
        else:
            out = np.array(np.broadcast_to(fill, ptrs.shape), dtype=np_dtype, order="C")
        flat = out.reshape(-1)
        for buffer, lanes, index in groups:
            flat[lanes] = buffer.typed(np_dtype)[index]
        return out

    def store(self, ptrs: Pointers, values, mask, np_dtype) -> None:
        active = None if mask is None else np.broadcast_to(mask, ptrs.shape)
        groups = self.accesses(ptrs, active, np_dtype, "store")
        values = np.broadcast_to(np.asarray(values, np_dtype), ptrs.shape).reshape(-1)
        for buffer, _, _ in groups:
            if not buffer.writable:
                raise ValueError(f"cannot store through argument `{buffer.name}`: it is read-only")
        for buffer, lanes, index in groups:
            buffer.typed(np_dtype)[index] = values[lanes]


class HostCopies:
    """Host copies of GPU storages for one launch, written back when it ends (arguments that
    alias one storage share one copy)."""

    def __init__(self):
        self.by_storage = {}

    def host_address(self, array) -> tuple[int, int]:
        """(host address of the data, host base of the storage) for a GPU array."""
        key = array.storage_base
        if key not in self.by_storage:
            self.by_storage[key] = (array.owner, array.owner.cpu())
        _, host = self.by_storage[key]
        return host.data_ptr() + (array.data_ptr - array.storage_base), host.data_ptr()

    def write_back(self):
        for device_storage, host in self.by_storage.values():
            device_storage.copy_(host)


def argument_pointers(name: str, array: HostArray, memory: Memory, copies: HostCopies) -> Pointers:
    """Register array argument `name` (on the host, or copied there) and point at its data."""
    data_ptr, base = array.data_ptr, array.storage_base
    if array.device != "cpu":
        data_ptr, base = copies.host_address(array)
    buffer = memory.add(
        Buffer(name, base, array.storage_nbytes, data_ptr, array.itemsize, array.writable)
    )
    return Pointers(np.array(data_ptr, dtype=np.uint64), buffer)
