"""`tensor` ops and tensor constants on buffers.

A tensor is a `View`; an op that "changes" one (insert, insert_slice) writes a copy unless the
destination is a fresh `tensor.empty` nobody else reads (`destination`) or a loop's carried
buffer it may write in place (in_place.inserts_in_place). Slices are views of
the same buffer (tensors are never written once made, so sharing is safe); an expand is a view
of any source, a collapse one where each merged group lies one dimension after another, and
any other reshape a view of a contiguous source, else of a contiguous copy.

Dense constants: a splat is a one-element global read with all strides 0 (a broadcast view),
any other a global array.

`arith.select` on tensors reaches the back end only when a canonicalization after the Linalg
conversion made it (an `scf.if` whose results are values defined outside it becomes a select on
its scalar condition, as upstream MLIR's): it writes a fresh buffer, element by element.
"""

from __future__ import annotations

import itertools

from llvmlite import ir

from ....dialects.memref.reshape import reassociation_groups
from ....ir import DenseElementsAttr, RankedTensorType
from ..lower_scalar.types import llvm_type
from .function import FunctionLowering, lowers
from .loops import loop_nest
from .lower_linalg import copy_view, destination
from .lower_memref import index_value, kept
from .views import View, mul


@lowers("tensor.empty")
def _empty(fl: FunctionLowering, op) -> None:
    t = op.results[0].type
    fl.bind(op.results[0], fl.buffer(t.shape, t.element_type))


@lowers("tensor.extract")
def _extract(fl: FunctionLowering, op) -> None:
    view: View = fl.value(op.tensor)
    fl.bind(op.results[0], view.load(fl.builder, [fl.value(v) for v in op.indices]))


@lowers("tensor.insert")
def _insert(fl: FunctionLowering, op) -> None:
    target = _written(fl, op)
    target.store(fl.builder, fl.value(op.scalar), [fl.value(v) for v in op.indices])
    fl.bind(op.results[0], target)


def _slice(fl: FunctionLowering, op, view: View, full_shape) -> View:
    offsets = [index_value(fl, x) for x in op.mixed_offsets]
    sizes = [index_value(fl, x) for x in op.mixed_sizes]
    strides = [index_value(fl, x) for x in op.mixed_strides]
    return view.subview(fl.builder, offsets, sizes, strides, kept(sizes, full_shape))


@lowers("tensor.extract_slice")
def _extract_slice(fl: FunctionLowering, op) -> None:
    fl.bind(op.results[0], _slice(fl, op, fl.value(op.source), op.results[0].type.shape))


def _written(fl: FunctionLowering, op) -> View:
    """Where an insert writes: a loop's carried buffer where the insert makes that tensor's
    next value in place (in_place.inserts_in_place), else its destination or a copy of it."""
    carried = fl.into.get(op)
    return carried if carried is not None else destination(fl, op.dest, reads=True)


@lowers("tensor.insert_slice")
def _insert_slice(fl: FunctionLowering, op) -> None:
    target = _written(fl, op)
    window = _slice(fl, op, target, op.source.type.shape)
    copy_view(fl, fl.value(op.source), window)
    fl.bind(op.results[0], target)


@lowers("tensor.expand_shape", "tensor.collapse_shape", "tensor.reshape", "tensor.cast")
def _reshape(fl: FunctionLowering, op) -> None:
    source: View = fl.value(op.operands[0])
    t = op.results[0].type
    reshaped = _regrouped(fl.builder, op, source, list(t.shape))
    if reshaped is None:
        if not source.is_contiguous():
            contiguous = fl.buffer(source.sizes, None, element=source.element)
            copy_view(fl, source, contiguous)
            source = contiguous
        reshaped = View.contiguous(source.pointer, source.element, list(t.shape))
        reshaped.offset = source.offset
    fl.bind(op.results[0], reshaped)


def _regrouped(b: ir.IRBuilder, op, source: View, shape: list) -> View | None:
    """The view an expand or collapse makes of `source` whatever its strides, where it is
    one: an expand always (each dimension's stride spread over its group), a collapse where
    each group's dimensions lie one after another (strides known to chain), else None."""
    if op.name not in ("tensor.expand_shape", "tensor.collapse_shape"):
        return None
    groups = reassociation_groups(op.reassociation)
    strides: list = [None] * len(shape)
    if op.name == "tensor.expand_shape":
        for stride, group in zip(source.strides, groups):
            for d in reversed(group):
                strides[d] = stride
                stride = mul(b, stride, shape[d])
    else:
        for d, group in enumerate(groups):
            kept_dims = [k for k in group if source.sizes[k] != 1] or group[-1:]
            for k, k_next in itertools.pairwise(kept_dims):
                step = source.strides[k_next]
                if not isinstance(step, int) or source.strides[k] != step * source.sizes[k_next]:
                    return None
            strides[d] = source.strides[kept_dims[-1]]
    return View(source.pointer, source.element, source.offset, shape, strides)


@lowers("arith.constant")
def _constant(fl: FunctionLowering, op) -> None:
    t = op.results[0].type
    attr = op.value
    if not isinstance(t, RankedTensorType):
        fl.bind(op.results[0], fl.constant(attr.value, t))
        return
    if not isinstance(attr, DenseElementsAttr):
        raise TypeError(f"the CPU back end cannot lower the constant {attr}")
    element = llvm_type(t.element_type)
    values = [attr.splat_value] if attr.is_splat else list(attr.values)
    constants = [fl.constant(v, t.element_type) for v in values]
    array_type = ir.ArrayType(element, len(constants))
    name = fl.module.get_unique_name("constant")
    storage = ir.GlobalVariable(fl.module, array_type, name)
    storage.global_constant = True
    storage.linkage = "internal"
    storage.initializer = ir.Constant(array_type, constants)
    if attr.is_splat:
        view = View(storage, element, 0, list(t.shape), [0] * t.rank)
    else:
        view = View.contiguous(storage, element, list(t.shape))
    fl.bind(op.results[0], view)


@lowers("arith.select")
def _select(fl: FunctionLowering, op) -> None:
    """A select of scalars, or of tensors by a scalar or an elementwise condition (see the
    module docstring)."""
    t = op.results[0].type
    if not isinstance(t, RankedTensorType):
        fl.lower_scalar(op)
        return
    b = fl.builder
    operands = [fl.value(v) for v in op.operands]
    target = fl.buffer(t.shape, t.element_type)
    with loop_nest(b, target.sizes) as indices:
        cond, then, other = (v.load(b, indices) if isinstance(v, View) else v for v in operands)
        target.store(b, b.select(cond, then, other), indices)
    fl.bind(op.results[0], target)
