"""Atomic read-modify-write and compare-and-swap: lanes apply one after another, in lane order.

Programs run one at a time, so an atomic is trivially atomic across programs; within one operation,
lanes that address the same element see each other's updates in order, as a serialized GPU would.
"""

from __future__ import annotations

import time

import numpy as np

from .elementwise import extremum_float, host_dtype

_APPLY = {
    "add": np.add,
    "fadd": np.add,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
    "max": np.maximum,
    "umax": np.maximum,
    "min": np.minimum,
    "umin": np.minimum,
    "exch": lambda old, new: new,
}


def _targets(memory, ptr, mask, dtype):
    active = np.broadcast_to(np.asarray(True) if mask is None else mask, ptr.shape)
    buffer, index = memory.element_indices(ptr, active, dtype, "atomic")
    if buffer is not None and not buffer.writable:
        raise ValueError(f"cannot update argument `{buffer.name}` atomically: it is read-only")
    return active, buffer, index


def atomic_rmw(memory, kind, ptr, value, mask, ty):
    dtype = host_dtype(ty.scalar)
    active, buffer, index = _targets(memory, ptr, mask, dtype)
    out = np.zeros(ptr.shape, dtype)
    if buffer is None:
        return out
    view = buffer.typed(dtype)
    values = np.broadcast_to(value.astype(dtype), ptr.shape)[active]
    apply = _float_extremum(kind) if _is_float(dtype) and kind in ("max", "min") else _APPLY[kind]
    with np.errstate(all="ignore"):
        if len(np.unique(index)) == len(index):
            old = view[index].copy()
            view[index] = apply(old, values)
        else:
            old = np.empty(len(index), dtype)
            for lane, (i, v) in enumerate(zip(index, values)):
                old[lane] = view[i]
                view[i] = apply(view[i], v)
    out[active] = old
    return out


def _is_float(dtype) -> bool:
    return np.dtype(dtype).kind == "f" or np.dtype(dtype).name == "bfloat16"


def _float_extremum(kind: str):
    """A float `max` / `min` (a tensor descriptor's fp16/bf16 atomics): IEEE 754-2019's
    maximum / minimum, as `arith.maximumf`: a NaN on either side gives NaN and -0 is below +0,
    whichever order the lanes come in (NumPy's own picks a side on ties of zeros)."""
    return lambda old, new: extremum_float(old, new, kind, True)


def atomic_cas(memory, ptr, cmp, value, ty):
    dtype = host_dtype(ty.scalar)
    active, buffer, index = _targets(memory, ptr, None, dtype)
    out = np.zeros(ptr.shape, dtype)
    if buffer is None:
        return out
    # The GPU compares bit patterns (atom.cas.b32/b64): -0.0 is not 0.0, and a NaN equals itself.
    bits = np.dtype(f"u{np.dtype(dtype).itemsize}")
    view = buffer.typed(bits)
    cmps = np.broadcast_to(cmp.astype(dtype), ptr.shape)[active].view(bits)
    values = np.broadcast_to(value.astype(dtype), ptr.shape)[active].view(bits)
    old = np.empty(len(index), bits)
    for lane, (i, c, v) in enumerate(zip(index, cmps, values)):
        old[lane] = view[i]
        if view[i] == c:
            view[i] = v
    out[active] = old.view(dtype)
    return out


def atomic_poll(memory, ptr, expected, timeout_ns) -> np.ndarray:
    """Read the element at `ptr` until it equals `expected` (True), or until `timeout_ns`
    nanoseconds have passed since the first read (False; a zero timeout still reads once).
    No other program runs meanwhile, so only another thread of the process can change it: a
    poll without a timeout for a value nothing writes waits for ever, as on a GPU."""
    dtype = expected.dtype
    buffer, index = memory.element_indices(ptr, np.ones(ptr.shape, bool), dtype, "atomic_poll")
    view = buffer.typed(dtype)
    start = time.monotonic_ns()
    while view[index[0]] != expected:
        if timeout_ns is not None and time.monotonic_ns() - start >= _unsigned(timeout_ns):
            return np.array(False)
        time.sleep(0)  # let a writing thread run
    return np.array(True)


def _unsigned(value) -> int:
    """A uint64 operand, whichever signedness holds its bits."""
    return int(np.asarray(value).astype(np.int64).view(np.uint64))
