"""The structured ops of `linalg` as loop nests over their iteration domain.

Every structured op is one idea: loops over its domain, each operand indexed through its affine
map, the body computing output elements from input elements. `linalg.generic` is lowered
exactly so; `fill`, `copy`, `map`, `transpose`, `broadcast` and `reduce` are generics with
fixed maps and bodies; `matmul` runs as (i, k, j) loops so the innermost loop walks rows of B and
C contiguously (the order the vectorizer widens) while each C element still sums over k in
increasing order.

Outputs are destinations: on memrefs the op writes them; on tensors `destination()` gives the
buffer the result lives in — the init's own buffer when the init is a fresh `tensor.empty`
nobody else reads, else a fresh buffer (holding a copy of the init when the op reads it).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from llvmlite import ir

from ....ir import MemRefType, f32
from ....ir.affine import AffineBinaryExpr, AffineDimExpr
from ..lower_scalar.float_bits import IEEE, decode_to_f32, encode
from .affine import apply
from .element_math import multiply_add, narrow_float
from .function import FunctionLowering, lowers
from .loops import counted_loop, loop_nest
from .lower_matmul import matmul_kernel
from .snapshots import guard_overlaps
from .transpose_blocks import transpose_in_blocks
from .views import View, copy_elements, fill_elements


def copy_view(fl: FunctionLowering, source: View, target: View) -> None:
    """Element-by-element copy between two views of the same sizes."""
    copy_elements(fl.builder, source, target)


def destination(fl: FunctionLowering, init, reads: bool) -> View:
    """The view an op writes its result for output `init` into (see the module docstring)."""
    view = fl.value(init)
    if isinstance(init.type, MemRefType):
        return view
    producer = init.defining_op
    if producer is not None and producer.name == "tensor.empty" and init.has_one_use:
        return view
    fresh = fl.buffer(init.type.shape, init.type.element_type)
    if reads:
        copy_view(fl, view, fresh)
    return fresh


def _domain(op, operand_views, maps) -> list:
    """The loop bounds of a structured op: for each loop, the size of an operand dimension its
    maps index by that loop alone."""
    count = maps[0].num_dims
    bounds = [None] * count
    for view, affine_map in zip(operand_views, maps):
        if not isinstance(view, View):
            continue
        for size, expr in zip(view.sizes, affine_map.results):
            position = getattr(expr, "position", None)
            if position is not None and bounds[position] is None:
                bounds[position] = size
    if any(bound is None for bound in bounds):
        raise AssertionError(f"internal: cannot size the loops of {op.name}")
    return bounds


def _uses_block_argument(block, index: int) -> bool:
    return block.arguments[index].has_uses


def lower_structured(fl, op, inputs, outputs, maps, body_block, results_of_body, into=None) -> None:
    """The loop nest of a structured op: load operands through `maps`, lower `body_block` with
    its arguments bound, store what `results_of_body()` returns through the output maps.
    `into`: one view to write instead of the output, over its sizes (store_plan.py)."""
    b = fl.builder
    views = [fl.value(v) for v in inputs]
    if into is not None:
        out_views, bounds = [into], list(into.sizes)
    else:
        out_views = [
            destination(fl, v, _uses_block_argument(body_block, len(inputs) + i))
            for i, v in enumerate(outputs)
        ]
        bounds = _domain(op, views + out_views, maps)
    operands = [
        (body_block.arguments[k], view, affine_map)
        for k, (view, affine_map) in enumerate(zip(views + out_views, maps))
        if body_block.arguments[k].has_uses
    ]
    # Only inputs: an output read by the body (a reduction's accumulator) changes as it runs.
    inputs_used = [operand for operand in operands if operand[0].index < len(views)]
    row_invariant = _row_invariant(inputs_used, bounds)
    read_per_row = {id(argument) for argument, _, _ in row_invariant}
    saved = fl.loop_indices
    with _rows(b, bounds) as outer:
        # An operand the innermost loop does not move through (a broadcast column: `m[:, None]`)
        # is read once per row, here: read inside, LLVM kept its load in the loop (its address
        # and the row's store were not told apart) and left the loop scalar (tutorial 06's
        # exp2 over the scores, its rescaled accumulator).
        for argument, view, affine_map in row_invariant:
            fl.bind(argument, view.load(b, apply(b, affine_map, [*outer, 0])))
        with _innermost(b, bounds) as inner:
            indices = [*outer, *inner]
            fl.loop_indices = indices
            for argument, view, affine_map in operands:
                if not isinstance(view, View):  # a scalar input
                    fl.bind(argument, view)
                elif id(argument) not in read_per_row:
                    fl.bind(argument, view.load(b, apply(b, affine_map, indices)))
            yielded = results_of_body()
            for view, affine_map, value in zip(out_views, maps[len(views) :], yielded):
                view.store(b, value, apply(b, affine_map, indices))
    fl.loop_indices = saved
    for result, view in zip(op.results, out_views):
        fl.bind(result, view)


def _row_invariant(operands, bounds) -> list:
    """The view operands whose maps do not name the innermost loop, when that loop has a
    constant, non-zero trip count (so reading them before it reads what its first iteration
    would: never an element the nest does not touch)."""
    if len(bounds) == 0 or not isinstance(bounds[-1], int) or bounds[-1] <= 0:
        return []
    last = len(bounds) - 1
    return [
        (argument, view, affine_map)
        for argument, view, affine_map in operands
        if isinstance(view, View) and not any(_names_dim(e, last) for e in affine_map.results)
    ]


def _names_dim(expr, position: int) -> bool:
    """Whether the affine expression `expr` depends on loop `position`."""
    if isinstance(expr, AffineDimExpr):
        return expr.position == position
    if isinstance(expr, AffineBinaryExpr):
        return _names_dim(expr.lhs, position) or _names_dim(expr.rhs, position)
    return False


@contextmanager
def _rows(b: ir.IRBuilder, bounds) -> Iterator[list]:
    """The loops of a structured op's domain but its innermost (none for a 0-d domain)."""
    with loop_nest(b, bounds[:-1]) as outer:
        yield list(outer)


@contextmanager
def _innermost(b: ir.IRBuilder, bounds) -> Iterator[list]:
    """The innermost loop of the domain, as a list of its index (empty for a 0-d domain)."""
    if not bounds:
        yield []
        return
    with counted_loop(b, 0, bounds[-1], name=f"d{len(bounds) - 1}") as index:
        yield [index]


def _lower_body(fl: FunctionLowering, block):
    """Lower the ops of a body block up to its terminator; the terminator's operands."""

    def run():
        for inner in block:
            if inner is block.last_op:
                return [fl.value(v) for v in inner.operands]
            fl.lower_op(inner)
        return []

    return run


@lowers("linalg.generic", "linalg.map")
def _generic(fl: FunctionLowering, op, into=None, guarded: bool = False) -> None:
    """`guarded`: the overlap guard has run already (streaming.py writes a store in pieces)."""
    # At its store (store_plan.py): guard the reads in place that the store may overwrite.
    if into is not None and not guarded:
        guard_overlaps(fl, op, into)
    into = into if into is not None else fl.into.get(op)  # in_place.update_in_place
    inputs = list(op.inputs)
    outputs = list(op.inits)
    block = op.body
    lower_structured(fl, op, inputs, outputs, op.maps(), block, _lower_body(fl, block), into)


@lowers("linalg.index")
def _index(fl: FunctionLowering, op) -> None:
    fl.bind(op.results[0], fl.loop_indices[op.dim.value])


@lowers("linalg.fill")
def _fill(fl: FunctionLowering, op) -> None:
    (value,) = op.inputs
    (init,) = op.outputs
    target = destination(fl, init, reads=False)
    fill_elements(fl.builder, target, fl.value(value))
    for result in op.results:
        fl.bind(result, target)


@lowers("linalg.copy")
def _copy(fl: FunctionLowering, op) -> None:
    (source,) = op.inputs
    (init,) = op.outputs
    target = destination(fl, init, reads=False)
    copy_view(fl, fl.value(source), target)
    for result in op.results:
        fl.bind(result, target)


@lowers("linalg.transpose", "linalg.broadcast")
def _permute(fl: FunctionLowering, op) -> None:
    source = fl.value(op.input)
    target = destination(fl, op.init, reads=False)
    input_map = op.maps()[0]
    output_map = op.maps()[1]
    b = fl.builder
    swapped = op.name == "linalg.transpose" and list(op.permutation.values) == [1, 0]
    if swapped and transpose_in_blocks(b, source, target):
        for result in op.results:
            fl.bind(result, target)
        return
    with loop_nest(b, target.sizes) as indices:
        # The loops run over the output; the input index is the input map composed with the
        # inverse of the output map, which for these ops maps output dims to loop dims.
        loop = [None] * input_map.num_dims
        for expr, index in zip(output_map.results, indices):
            loop[expr.position] = index
        target.store(b, source.load(b, apply(b, input_map, loop)), indices)
    for result in op.results:
        fl.bind(result, target)


@lowers("linalg.matmul", "linalg.batch_matmul")
def _matmul(fl: FunctionLowering, op) -> None:
    a, bm = (fl.value(v) for v in op.inputs)
    (init,) = op.outputs
    c = fl.into.get(op)  # a loop's carried accumulator (lower_matmul.accumulates_in_place)
    if c is None:
        c = destination(fl, init, reads=True)
    if matmul_kernel(fl, op, a, bm, c):  # the register-blocked micro-kernel (lower_matmul.py)
        for result in op.results:
            fl.bind(result, c)
        return
    out_type = init.type.element_type
    narrow = narrow_float(out_type)
    acc = c
    if narrow is not None:  # accumulate in f32, round into the 16/8-bit type once at the end
        acc = fl.buffer(c.sizes, None, element=ir.FloatType())
        _convert_view(fl, c, acc, lambda b, x: decode_to_f32(b, x, narrow))
        out_type = f32
    b = fl.builder
    batch = acc.sizes[:-2]
    m, n = acc.sizes[-2:]
    k = a.sizes[-1]
    with (
        loop_nest(b, batch) as outer,
        counted_loop(b, 0, m, name="m") as i,
        counted_loop(b, 0, k, name="k") as kk,
    ):
        lhs = a.load(b, [*outer, i, kk])
        with counted_loop(b, 0, n, name="n") as j:
            rhs = bm.load(b, [*outer, kk, j])
            total = multiply_add(
                fl,
                lhs,
                op.inputs[0].type,
                rhs,
                op.inputs[1].type,
                acc.load(b, [*outer, i, j]),
                out_type,
            )
            acc.store(b, total, [*outer, i, j])
    if narrow is not None:
        _convert_view(fl, acc, c, lambda b, x: encode(b, x, narrow, "rtne", IEEE))
    for result in op.results:
        fl.bind(result, c)


def _convert_view(fl: FunctionLowering, source: View, target: View, convert) -> None:
    b = fl.builder
    with loop_nest(b, target.sizes) as indices:
        target.store(b, convert(b, source.load(b, indices)), indices)
