"""`coalesce`: give every global load, store and atomic on a tensor of pointers the blocked
layout in which a warp's threads access consecutive addresses, each thread up to 16 bytes.

From AxisInfo (naiad/passes/analysis/axis_info.py), per memory op: its pointers' dimensions
ordered by contiguity (longest first) and, along the fastest, how many elements a thread can
access at once: min(contiguity, divisibility in elements, 128 bits), at most the elements per
thread, raised to the widest of the memory ops connected to it by def-use chains with the same
shape and order (a store keeps its own limit: a thread writing more than 16 bytes leaves gaps in
the warp's writes). Only a pointer that an op computes is widened so: one that arrives as a
block argument (a loop's carried `a_ptrs`) keeps its own width, as in Triton's pass. Else a
matmul's f32 operand, loaded in its K loop, took the 8 elements a thread of its f16 output's
store (the same rows, reached through the loop's results) and was copied as two 16-byte halves,
each warp access touching every other 16 bytes of its sectors: tf32 128x32x32 tiles ran at 67
TFLOP/s against 127 on an H200.

A block loaded by a tensor copy (`tt.descriptor_load`, read from shared memory) takes 16 bytes a
thread along its rows, the widest shared-memory access; a block stored by one keeps the layout
it has (it is written into shared memory from any). Always legal: the op's operands are
converted to that layout and its results back, and remove-layout-conversions carries the new
layout to the neighbours.

    %v = tt.load %p : tensor<1024x!tt.ptr<f32>, #blocked>                (sizePerThread = [1])
    ==>
    %q = ttg.convert_layout %p : tensor<1024x!tt.ptr<f32>, #blocked> -> tensor<..., #blocked1>
    %w = tt.load %q : tensor<1024x!tt.ptr<f32>, #blocked1>               (sizePerThread = [4])
    %v = ttg.convert_layout %w : tensor<1024xf32, #blocked1> -> tensor<1024xf32, #blocked>
"""

from __future__ import annotations

from dataclasses import dataclass

from ....dialects import tt, ttg
from ....dialects.ttg.attributes import BlockedEncodingAttr
from ....ir import Operation, is_pointer_like, register_pass
from ....ir.passes import Pass
from ....passes.analysis import AxisInfoAnalysis
from .layout_inference import tensor_type, with_encoding

MEMORY_OPS = (tt.LoadOp, tt.StoreOp, tt.AtomicRMWOp, tt.AtomicCASOp)


def module_int(module: Operation, name: str) -> int:
    """An integer attribute of a TTGIR module (`ttg.num-warps`, ...)."""
    attr = module.attributes.get(name)
    if attr is None:
        raise ValueError(f"not a TTGIR module: it has no {name!r} attribute")
    return attr.value


def memory_pointer(op: Operation):
    """The tensor of pointers a memory op accesses, or None (scalars, block pointers)."""
    if not isinstance(op, MEMORY_OPS):
        return None
    ptr = op.operands[0]
    t = tensor_type(ptr)
    return ptr if t is not None and is_pointer_like(t) else None


@register_pass("coalesce")
@dataclass(frozen=True)
class Coalesce(Pass):
    """Lay out each global memory access for coalesced 16-byte accesses (see the module doc)."""

    def run(self, module: Operation) -> None:
        num_warps = module_int(module, "ttg.num-warps")
        threads = module_int(module, "ttg.threads-per-warp")
        analysis = AxisInfoAnalysis(module)
        memory_ops = [op for op in module.walk() if memory_pointer(op) is not None]
        component = _components(module)
        groups: dict[int, list[Operation]] = {}
        for op in memory_ops:
            groups.setdefault(component[op], []).append(op)
        chosen = {}
        for op in memory_ops:
            neighbours = groups[component[op]]
            chosen[op] = _coalesced_encoding(op, neighbours, analysis, num_warps, threads)
        for op in module.walk():
            if isinstance(op, tt.DescriptorLoadOp):
                chosen[op] = _tensor_copy_encoding(op, num_warps, threads)
        for op, encoding in chosen.items():
            _relayout(op, encoding)


def _tensor_copy_encoding(op, num_warps: int, threads: int):
    """16 bytes a thread along the rows of a tensor copy's block (see the module doc): the
    load's own, whose leading dimensions of 1 a map of more dimensions drops
    (frontend/tensor_maps.py)."""
    t = op.result.type
    shape = list(t.shape)
    per_thread = min(128 // t.element_type.width, max(t.numel // (num_warps * threads), 1))
    size = [1] * (len(shape) - 1) + [min(per_thread, shape[-1])]
    order = list(range(len(shape) - 1, -1, -1))
    return BlockedEncodingAttr.for_shape(shape, size, order, num_warps, threads)


def _per_thread(op: Operation, order, analysis: AxisInfoAnalysis) -> int:
    return analysis.max_vector_width(memory_pointer(op), dim=order[0])


def _coalesced_encoding(op, neighbours, analysis: AxisInfoAnalysis, num_warps, threads):
    ptr = memory_pointer(op)
    shape = ptr.type.shape
    order = analysis.order(ptr)
    per_thread = _per_thread(op, order, analysis)
    for other in neighbours if ptr.defining_op is not None else ():
        other_ptr = memory_pointer(other)
        if other is op or other_ptr.type.shape != shape:
            continue
        if analysis.order(other_ptr) == order:
            per_thread = max(per_thread, _per_thread(other, order, analysis))
    elements = 1
    for d in shape:
        elements *= d
    per_thread = min(per_thread, max(elements // (num_warps * threads), 1))
    if not isinstance(op, tt.LoadOp):
        per_thread = min(per_thread, _per_thread(op, order, analysis))
    size = [1] * len(shape)
    size[order[0]] = per_thread
    return BlockedEncodingAttr.for_shape(shape, size, order, num_warps, threads)


def _components(module: Operation) -> dict[Operation, int]:
    """Each op's connected component of the def-use graph (block arguments end a chain): the
    memory ops of one component share their widths."""
    component: dict[Operation, int] = {}
    for start in module.walk():
        if start in component:
            continue
        index = len(component)
        component[start] = index
        queue = [start]
        while queue:
            op = queue.pop()
            neighbours = [v.defining_op for v in op.operands if v.defining_op is not None]
            neighbours += [user for r in op.results for user in r.users]
            for other in neighbours:
                if other not in component:
                    component[other] = index
                    queue.append(other)
    return component


def _relayout(op: Operation, encoding) -> None:
    """Run `op` in `encoding`: its tensor operands converted to it (even where that is the
    layout they had, as Triton's pass does: remove-layout-conversions folds those), its
    results back where their layout changed."""
    for i, value in enumerate(op.operands):
        t = tensor_type(value)
        if t is not None:
            convert = ttg.ConvertLayoutOp(
                value, result=with_encoding(t, encoding), location=op.location
            )
            op.parent.insert_before(convert, op)
            op.set_operand(i, convert.result)
    for value in op.results:
        t = tensor_type(value)
        if t is None or t.encoding is encoding:
            continue
        value.type = with_encoding(t, encoding)
        back = ttg.ConvertLayoutOp(value, result=t, location=op.location)
        op.parent.insert_after(back, op)
        value.replace_uses_where(back.result, lambda user, _index, back=back: user is not back)
