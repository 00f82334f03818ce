"""TTGIR's shared-memory buffers in the evaluator: a `!ttg.memdesc` is a NumPy array, and a
view of it (`ttg.memdesc_subslice`, `ttg.memdesc_index`) is a NumPy view of that array.

Where a buffer lies and how it is swizzled say which thread reads which bytes, not what the
elements are, so a module whose dots read their operands from buffers evaluates to the
values it had as TTIR (tests/backends/nvidia/test_dot_lowering.py runs both).
"""

from __future__ import annotations

import numpy as np

from ...ir import RankedTensorType
from .errors import handles
from .values import host_dtype, lang_type


@handles("ttg.local_alloc")
def local_alloc(ev, op, operands):
    """A fresh buffer, a copy of the stored tensor when there is one."""
    if operands:
        return np.array(operands[0], copy=True)
    t = op.result.type
    return np.zeros(t.shape, host_dtype(t.element_type))


@handles("ttg.local_store")
def local_store(ev, op, operands):
    value, buffer = operands
    buffer[...] = value


@handles("ttg.local_load")
def local_load(ev, op, operands):
    return np.array(operands[0], copy=True)


@handles("ttg.memdesc_subslice")
def memdesc_subslice(ev, op, operands):
    offsets = op.attributes["offsets"].values
    index = tuple(slice(o, o + n) for o, n in zip(offsets, op.result.type.shape))
    return operands[0][index]


@handles("ttg.memdesc_trans")
def memdesc_trans(ev, op, operands):
    return np.transpose(operands[0], list(op.attributes["order"].values))


@handles("ttg.memdesc_index")
def memdesc_index(ev, op, operands):
    return operands[0][int(operands[1])]


@handles("ttg.local_dealloc")
def local_dealloc(ev, op, operands):
    """Nothing: the array goes with its last reference."""


@handles("ttg.async_copy_global_to_local")
def async_copy_global_to_local(ev, op, operands):
    """A load into the buffer, now: masked-off elements are zero-filled, as `cp.async`
    fills what it copies no bytes of. Programs run one at a time, so the copy is complete
    before anything could wait for it."""
    ptrs, buffer = ev.value(op.src), ev.value(op.dst)
    mask = ev.value(op.mask)
    t = op.src.type
    loaded_t = RankedTensorType(t.shape, t.element_type.pointee_type, t.encoding)
    zero = None if mask is None else np.zeros(buffer.shape, buffer.dtype)
    buffer[...] = ev.builder.load(ptrs, mask, zero, lang_type(loaded_t))
    return 0


@handles("ttg.async_commit_group", "ttg.async_wait")
def async_group(ev, op, operands):
    """Nothing to wait for: every copy is complete when it returns (a token stands for it)."""
    return 0


@handles("ttng.fence_async_shared")
def fence_async_shared(ev, op, operands):
    """Nothing: one program's stores are seen by its later reads."""


@handles("ttng.warp_group_dot_wait")
def warp_group_dot_wait(ev, op, operands):
    """Its inputs, accumulators and buffers: every dot is complete when it returns."""
    return list(operands)
