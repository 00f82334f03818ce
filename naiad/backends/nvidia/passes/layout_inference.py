"""How a layout flows through an op: the encoding of its result given its operand's (forward),
and the encoding its operands need for a given result encoding (backward).

The TTGIR passes share these rules: convert-to-ttgir gives the results of shape ops the
layouts their operands imply, and remove-layout-conversions propagates the layouts of loads
forward and rematerializes producers backward. An op whose rule is unknown answers None: the
layout does not flow through it and a `ttg.convert_layout` stays where it meets it.

    reduce along axis a:   src E            -> result #ttg.slice<{dim = a, parent = E}>
    expand_dims axis a:    src slice(a, E)  -> result E
    trans order p:         src blocked      -> result blocked with every field permuted by p
    reshape:               src E            -> result #ttg.linear: each thread keeps its
                                               elements, at their row-major positions
    join:                  operands E       -> result #ttg.linear: E, and the new last
                                               dimension in the lowest register bit
    split:                 src E            -> results E without its last dimension, when that
                                               dimension is one register bit of E's
    elementwise, broadcast, convert_layout: the same encoding

Reshape, join and split read these rules both ways (a split's source needs its result's
layout joined, a join's operands their result's split), so that none of them moves an element
between threads: the lowering renumbers registers (lowering/positions.py, exchanges.py).
"""

from __future__ import annotations

from ....dialects import arith, math, scf, tt, ttg
from ....dialects.ttg.attributes import BlockedEncodingAttr, LinearEncodingAttr, SliceEncodingAttr
from ....ir import (
    DenseElementsAttr,
    Elementwise,
    Operation,
    RankedTensorType,
    SameOperandsAndResultEncoding,
    Value,
)
from ..layouts import LinearLayout, to_linear_encoding, to_linear_layout
from ..layouts.conversions import dim_names

_THREAD_DIMS = ("lane", "warp", "block")


def tensor_type(value: Value) -> RankedTensorType | None:
    """`value`'s type when it is a ranked tensor with at least one dimension, else None."""
    t = value.type
    return t if isinstance(t, RankedTensorType) and t.shape else None


def with_encoding(t: RankedTensorType, encoding) -> RankedTensorType:
    return t if t.encoding is encoding else t.clone(encoding=encoding)


def set_constant_type(op: arith.ConstantOp, t: RankedTensorType) -> None:
    """Give a dense tensor constant the type `t` (the same shape in another layout): its value
    attribute carries the type too."""
    attr = op.value
    op.attributes["value"] = DenseElementsAttr(t, attr.values)
    op.result.type = t


def permute_blocked(encoding, order) -> BlockedEncodingAttr | None:
    """The blocked layout of `tt.trans` with permutation `order` of a tensor in `encoding`:
    result dimension i is source dimension order[i], so every field is permuted and the
    fastest-first order renamed."""
    if not isinstance(encoding, BlockedEncodingAttr):
        return None
    inverse = _inverse(order)
    return BlockedEncodingAttr(
        [encoding.size_per_thread[d] for d in order],
        [encoding.threads_per_warp[d] for d in order],
        [encoding.warps_per_cta[d] for d in order],
        [inverse[d] for d in encoding.order],
    )


def permute_encoding(encoding, shape, order):
    """The layout of `tt.trans` with permutation `order` of a tensor of `shape` in `encoding`
    that leaves every element in the thread and register holding it: blocked layouts permuted
    field by field, any other through its linear layout, each basis's coordinates permuted
    (result dimension i is source dimension order[i]). None when it has no linear layout."""
    if isinstance(encoding, BlockedEncodingAttr):
        return permute_blocked(encoding, order)
    layout = _linear(encoding, shape)
    if layout is None:
        return None
    bases = [
        [tuple(b[d] for d in order) for b in layout.bases(name)]
        for name in ("register", *_THREAD_DIMS)
    ]
    return LinearEncodingAttr(*bases)


def _inverse(order) -> list[int]:
    inverse = [0] * len(order)
    for i, d in enumerate(order):
        inverse[d] = i
    return inverse


def _linear(encoding, shape) -> LinearLayout | None:
    """`encoding` over `shape` as a linear layout whose outputs are dim0, dim1, ... in order;
    None when it has none."""
    try:
        layout = to_linear_layout(encoding, shape)
    except (NotImplementedError, ValueError):
        return None
    return layout.transpose_outs(dim_names(len(shape)))


def reshape_encoding(encoding, src_shape, dst_shape) -> LinearEncodingAttr | None:
    """The layout of a row-major reshape from `src_shape` in `encoding` to `dst_shape` that
    leaves every element in the thread and register holding it: the flat index of a
    coordinate is a regrouping of its bits, so each basis is flattened and split again."""
    layout = _linear(encoding, src_shape)
    if layout is None:
        return None
    flat = layout.transpose_outs(reversed(dim_names(len(src_shape))))  # the last dim minor
    sizes = dict(reversed(list(zip(dim_names(len(dst_shape)), dst_shape))))
    return to_linear_encoding(flat.reshape_outs(sizes))


def join_encoding(encoding, shape) -> LinearEncodingAttr | None:
    """The layout of `tt.join` of two tensors of `shape` in `encoding`: each thread holds the
    pair of elements it holds of each, in adjacent registers (the new dimension is the lowest
    register bit), so the result is made without moving an element."""
    layout = _linear(encoding, shape)
    if layout is None:
        return None
    bases = {name: [(*b, 0) for b in layout.bases(name)] for name in ("register", *_THREAD_DIMS)}
    bases["register"].insert(0, (0,) * len(shape) + (1,))
    return LinearEncodingAttr(*bases.values())


def split_encoding(encoding, shape) -> LinearEncodingAttr | None:
    """The layout of the halves of `tt.split` of a tensor of `shape` (last dimension 2) in
    `encoding`, when the last dimension is one register bit of it and nothing else selects
    along it: each half is then a choice of registers. None otherwise (the source must be
    converted first, to the halves' layout joined)."""
    layout = _linear(encoding, shape)
    if layout is None:
        return None
    pair = (0,) * (len(shape) - 1) + (1,)
    registers = layout.bases("register")
    if registers.count(pair) != 1 or any(b[-1] and b != pair for b in registers):
        return None
    if any(b[-1] for name in _THREAD_DIMS for b in layout.bases(name)):
        return None
    kept = [b[:-1] for b in registers if b != pair]
    return LinearEncodingAttr(kept, *([b[:-1] for b in layout.bases(n)] for n in _THREAD_DIMS))


def _named(inferred, t: RankedTensorType):
    """`inferred`, or the encoding `t` has when it is the same layout: a `#ttg.linear` equal
    to a value's blocked layout would only add a conversion that moves nothing."""
    if inferred is None or t.encoding is None or inferred is t.encoding:
        return inferred
    if _linear(inferred, t.shape) == _linear(t.encoding, t.shape):
        return t.encoding
    return inferred


def keeps_encoding(op: Operation) -> bool:
    """Ops whose tensor results have the layout of their tensor operands."""
    traits = op.traits
    return (
        Elementwise in traits
        or SameOperandsAndResultEncoding in traits
        or isinstance(op, ttg.ConvertLayoutOp)
    )


def infer_dst_encoding(op: Operation, encoding):
    """The encoding of `op`'s results when its tensor operands have `encoding` (None: the
    layout does not flow through `op`)."""
    if isinstance(op, tt.ReduceOp):
        return SliceEncodingAttr(op.axis.value, encoding)
    if isinstance(op, tt.ExpandDimsOp):
        if isinstance(encoding, SliceEncodingAttr) and encoding.dim == op.axis.value:
            return encoding.parent
        return None
    if isinstance(op, tt.TransOp):
        permuted = permute_encoding(encoding, op.src.type.shape, list(op.order.values))
        return _named(permuted, op.result.type)
    if isinstance(op, tt.ReshapeOp):
        inferred = reshape_encoding(encoding, op.src.type.shape, op.result.type.shape)
        return _named(inferred, op.result.type)
    if isinstance(op, tt.JoinOp):
        return _named(join_encoding(encoding, op.lhs.type.shape), op.result.type)
    if isinstance(op, tt.SplitOp):
        return _named(split_encoding(encoding, op.src.type.shape), op.outLHS.type)
    if keeps_encoding(op):
        return encoding
    return None


def infer_src_encoding(op: Operation, encoding):
    """The encoding `op`'s tensor operands need for its results to have `encoding` (None: no
    such encoding is known)."""
    if isinstance(op, tt.ReduceOp):
        if isinstance(encoding, SliceEncodingAttr) and encoding.dim == op.axis.value:
            return encoding.parent
        return None
    if isinstance(op, tt.ExpandDimsOp):
        return SliceEncodingAttr(op.axis.value, encoding)
    if isinstance(op, tt.TransOp):
        order = _inverse(list(op.order.values))
        return _named(permute_encoding(encoding, op.result.type.shape, order), op.src.type)
    if isinstance(op, tt.ReshapeOp):
        inferred = reshape_encoding(encoding, op.result.type.shape, op.src.type.shape)
        return _named(inferred, op.src.type)
    if isinstance(op, tt.JoinOp):
        return _named(split_encoding(encoding, op.result.type.shape), op.lhs.type)
    if isinstance(op, tt.SplitOp):
        return _named(join_encoding(encoding, op.outLHS.type.shape), op.src.type)
    if isinstance(op, tt.LoadOp) or keeps_encoding(op):
        return encoding
    return None


# Ops that take several instructions or the special-function unit: rematerializing them costs
# more than an add (remove-layout-conversions weighs them 8x).
_EXPENSIVE = (arith.DivFOp, arith.RemFOp, math.FloatUnaryOp, math.FloatBinaryOp, math.IPowIOp)


def is_expensive_math(op: Operation) -> bool:
    return isinstance(op, _EXPENSIVE) and not isinstance(op, (math.AbsFOp, math.CopySignOp))


def loop_parts(op: Operation):
    """(init operands, region arguments, results, yield) of the values an `scf.for` carries."""
    assert isinstance(op, scf.ForOp)
    body = op.body
    return op.operands[3:], body.arguments[1:], op.results, body.terminator
