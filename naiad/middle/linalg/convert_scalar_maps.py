"""`tt.map_elementwise` → a parallel `linalg.generic` whose body is the scalar region.

With `pack = 1` the generic reads one element of each operand and the region (branches and loops
on scalars included) is its body. With `pack = k` the operands are read as one row-major run of
elements: element `i` belongs to the group starting at `i - i % k`, the generic reads that
group's `k` elements of each operand (the last group completed with copies of the last
element, as the interpreter does), calls the region and keeps result `i % k` of each result. Each
group is so computed `k` times, once per element: `pack` is the GPU's register grouping and buys
nothing on the CPU.
"""

from __future__ import annotations

from ...dialects import tt
from ...ir import RankedTensorType, index, is_pointer_like
from . import emit, emit_tensor
from .conversion import FunctionConversion, converts, fail


@converts(tt.MapElementwiseOp)
def _map_elementwise(c: FunctionConversion, op) -> None:
    if any(is_pointer_like(v.type.element_type) for v in [*op.srcs, *op.results]):
        fail(op, "tl.map_elementwise over pointers does not compile for the CPU")
    sources = [c.value(v) for v in op.srcs]
    result_types = [r.type for r in op.results]
    pack = op.pack.value
    if pack == 1:
        results = emit.elementwise(
            c, sources, result_types, lambda xs: emit.call_region(c, op.scalarOp, xs)
        )
    else:
        results = _packed(c, op, sources, result_types, pack)
    for old, new in zip(op.results, results):
        c.bind(old, new)


def _flat_type(t: RankedTensorType) -> RankedTensorType:
    count = 1
    for size in t.shape:
        count *= size
    return RankedTensorType([count], t.element_type)


def _packed(c, op, sources, result_types, pack: int) -> list:
    flat = [emit_tensor.reshape(c, s, _flat_type(s.type)) for s in sources]
    flat_types = [_flat_type(t) for t in result_types]
    count = flat_types[0].shape[0]
    last = emit.index_constant(c, count - 1)

    def body(_):
        i = emit.loop_index(c, 0)
        lane = emit.op(c, "arith.remui", [i, emit.index_constant(c, pack)], index)
        start = emit.op(c, "arith.subi", [i, lane], index)
        positions = []
        for j in range(pack):
            at = emit.op(c, "arith.addi", [start, emit.index_constant(c, j)], index)
            positions.append(emit.op(c, "arith.minui", [at, last], index))
        arguments = [emit.extract_element(c, s, [p]) for s in flat for p in positions]
        results = emit.call_region(c, op.scalarOp, arguments)
        return [_pick(c, results[r * pack : (r + 1) * pack], lane) for r in range(len(flat_types))]

    made = emit.generic(c, [], [], flat_types, ["parallel"], body)
    return [emit_tensor.reshape(c, m, t) for m, t in zip(made, result_types)]


def _pick(c, values, lane):
    """`values[lane]`, as a chain of selects."""
    chosen = values[0]
    for j, value in enumerate(values[1:], start=1):
        here = emit.compare(c, "eq", lane, emit.index_constant(c, j))
        chosen = emit.select(c, here, value, chosen)
    return chosen
