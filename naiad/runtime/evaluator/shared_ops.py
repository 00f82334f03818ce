"""TTGIR's shared-memory buffers in the evaluator: a `!ttg.memdesc` is a NumPy array, and a
view of it (`ttg.memdesc_subslice`, `ttg.memdesc_index`) is a NumPy view of that array.

Where a buffer lies and how it is swizzled say which thread reads which bytes, not what the
elements are, so a module whose dots read their operands from buffers evaluates to the
values it had as TTIR (tests/backends/nvidia/test_dot_lowering.py runs both).
"""

from __future__ import annotations

import numpy as np

from .errors import handles
from .values import host_dtype


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


@handles("ttg.memdesc_index")
def memdesc_index(ev, op, operands):
    return operands[0][int(operands[1])]


@handles("ttg.local_dealloc")
def local_dealloc(ev, op, operands):
    """Nothing: the array goes with its last reference."""
