"""`tl.map_elementwise` in the interpreter: the mapped function called on NumPy values.

Pack `k` groups `k` consecutive elements (row-major); the last group of a block whose size is
not a multiple of `k` is completed with copies of its last element, whose results are dropped.
The function is first called once, on whole blocks of lanes (lane `j` holds element `j` of every
group): plain arithmetic then costs one NumPy operation. If it needs one Python value per call
(`if`, `while` on its arguments), it is called group by group instead, as the region runs in a
compiled kernel.
"""

from __future__ import annotations

import numpy as np

from ...language.semantic.program import BlockHasNoScalarValue
from .memory import Pointers, merged_origin


def _flat(value):
    if isinstance(value, Pointers):
        return Pointers(np.asarray(value.addr).reshape(-1), value.origin)
    return np.asarray(value).reshape(-1)


def _take(value, index):
    if isinstance(value, Pointers):
        return Pointers(np.asarray(value.addr[index]), value.origin)
    return np.asarray(value[index])


def _assemble(pieces: list, shape):
    """One result from `pieces[k]`, the value of element `k` (or of lanes: a strided piece)."""
    if any(isinstance(p, Pointers) for p in pieces):
        addr = _assemble([np.asarray(p.addr) for p in pieces], shape)
        return Pointers(addr, merged_origin(*pieces))
    return np.stack([np.asarray(p) for p in pieces]).reshape(shape)


def map_elementwise(values, shape, pack: int, body) -> list:
    flat = [_flat(v) for v in values]
    count = int(np.prod(shape, dtype=np.int64))
    if count % pack == 0:
        try:
            return _by_lanes(flat, count, shape, pack, body)
        except BlockHasNoScalarValue:
            pass
    return _by_groups(flat, count, shape, pack, body)


def _by_lanes(flat, count: int, shape, pack: int, body) -> list:
    lanes = [_take(x, slice(j, None, pack)) for x in flat for j in range(pack)]
    results = body(lanes, (count // pack,))
    outputs = []
    for first in range(0, len(results), pack):
        # Lane j of every group, j = 0..pack-1: stacked as (pack, groups), read group-major.
        stacked = _assemble(results[first : first + pack], (pack, count // pack))
        outputs.append(_transposed(stacked, shape))
    return outputs


def _transposed(stacked, shape):
    if isinstance(stacked, Pointers):
        return Pointers(np.asarray(stacked.addr).T.reshape(shape), stacked.origin)
    return np.ascontiguousarray(stacked.T).reshape(shape)


def _by_groups(flat, count: int, shape, pack: int, body) -> list:
    groups = -(-count // pack)
    per_element = None
    for g in range(groups):
        indices = [min(g * pack + j, count - 1) for j in range(pack)]
        results = body([_take(x, i) for x in flat for i in indices], ())
        if per_element is None:
            per_element = [[] for _ in range(len(results) // pack)]
        for r, column in enumerate(per_element):
            column += results[r * pack : (r + 1) * pack]
    return [_assemble(column[:count], shape) for column in per_element]
