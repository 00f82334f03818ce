"""Which pointer blocks are *structured*: `base + start + Σ_d i_d · stride_d` over the block's
indices, so that a load or store becomes a strided view of the argument instead of a gather.

The analysis reads TTIR as the frontend and the TTIR pipeline leave it, following the producers
of a pointer back to its base (a kernel argument), as triton-shared's PtrAnalysis does:

    tt.make_range {start, end}      start, stride 1
    tt.splat %s / dense splat        start s, stride 0 in every dimension
    tt.expand_dims / tt.broadcast    a stride-0 dimension inserted / size-1 dimensions widened
    tt.trans                         strides permuted
    arith.addi / arith.subi          starts and strides added / subtracted
    arith.muli by a uniform block    start and strides scaled (narrower than 32 bits: only where
                                     the result cannot wrap, casts.py)
    arith.remsi %r, %m               a range (one moving dimension, stride 1) by a uniform %m:
                                     a wrap (strided.py), which loads and stores read as runs of
                                     rows between the wrap points
    arith.extsi / extui / trunci     unchanged where the cast is an identity on the range the
    arith.index_cast(ui)             offsets can have (casts.py); else not structured
    tt.addptr %p, %offsets           the pointer's state plus the offsets'

Anything else (a division, a select, offsets loaded from memory) is not structured; the
conversion then gathers and scatters element by element, which is always correct. Scalar
integers are decomposed into `IndexExpr` polynomials through addi / subi / muli / constants /
the integer casts casts.py looks through (a constant cast is folded); every other scalar is a
leaf, read signed.

Loop-carried pointers. A scalar pointer carried by a loop is structured with itself as the leaf
of its start (the conversion carries its offset). A pointer *block* carried by an `scf.for` is
structured when its initial value is and the value yielded for it has the same strides (and
wrap) relative to the iteration argument — `ptrs += BLOCK_K` advances only the start. Its
state inside the loop is the initial layout with the iteration argument as the leaf of the
start, and after the loop the same with the loop's result as the leaf: the conversion carries
only the start, an `index`, and the strides stay loop-invariant. The yield is examined under
that assumption; states computed while examining it are forgotten when it fails.

`base_of` answers, for every pointer value structured or not, which kernel argument it points
into: loads and stores of both paths index a view of that argument. A pointer made from an
integer, or cast to a pointee of another size, points into no argument: it is an address
(convert_addresses.py).
"""

from __future__ import annotations

from ...dialects import arith, scf, tt
from ...dialects.base import bit_width
from ...ir import (
    BlockArgument,
    DenseElementsAttr,
    IntegerAttr,
    RankedTensorType,
    Value,
    element_type,
)
from .casts import (
    INTEGER_CASTS,
    fits,
    fold,
    keeps,
    narrow_scalar,
    scalar_cast,
    signed,
    strided_range,
)
from .index_expr import ONE, ZERO, IndexExpr
from .strided import PointerState, Strided, Wrap, splat


def _shape(value: Value) -> tuple[int, ...]:
    t = value.type
    return tuple(t.shape) if isinstance(t, RankedTensorType) else ()


class PointerAnalysis:
    """Structured states of pointer and integer values, computed on demand and memoized."""

    def __init__(self):
        self._scalars: dict[Value, IndexExpr] = {}
        self._offsets: dict[Value, Strided | None] = {}
        self._pointers: dict[Value, PointerState | None] = {}
        self._bases: dict[Value, Value | None] = {}

    # -- scalars ------------------------------------------------------------------------------

    def scalar(self, value: Value) -> IndexExpr:
        """`value` (an integer scalar) as a polynomial over leaves."""
        known = self._scalars.get(value)
        if known is None:
            known = self._scalar(value)
            self._scalars[value] = known
        return known

    def _scalar(self, value: Value) -> IndexExpr:
        op = value.defining_op
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            return IndexExpr.constant(_signed_constant(op.value.value, value.type))
        if isinstance(op, INTEGER_CASTS):
            return scalar_cast(op, self.scalar(op.operands[0]))
        if isinstance(op, arith.AddIOp):
            return narrow_scalar(value, self.scalar(op.lhs) + self.scalar(op.rhs))
        if isinstance(op, arith.SubIOp):
            return narrow_scalar(value, self.scalar(op.lhs) - self.scalar(op.rhs))
        if isinstance(op, arith.MulIOp):
            return narrow_scalar(value, self.scalar(op.lhs) * self.scalar(op.rhs))
        return IndexExpr.leaf(value)

    # -- integer blocks -----------------------------------------------------------------------

    def offsets(self, value: Value) -> Strided | None:
        """The structured state of an integer block (or scalar, as rank 0), or None."""
        if value in self._offsets:
            return self._offsets[value]
        self._offsets[value] = None  # a cycle through loop arguments is not structured
        state = self._block_offsets(value)
        self._offsets[value] = None if state is None else state.normalized()
        return self._offsets[value]

    def _block_offsets(self, value: Value) -> Strided | None:
        shape = _shape(value)
        if not shape:
            return Strided((), self.scalar(value), ())
        op = value.defining_op
        if op is None:
            return None
        if isinstance(op, tt.MakeRangeOp):
            return Strided(shape, IndexExpr.constant(op.start.value), (ONE,))
        if isinstance(op, arith.ConstantOp):
            attr = op.value
            if isinstance(attr, DenseElementsAttr) and attr.is_splat:
                value = attr.splat_value
                if isinstance(value, int):
                    constant = _signed_constant(value, element_type(op.result.type))
                    return splat(shape, IndexExpr.constant(constant))
            return None
        if isinstance(op, tt.SplatOp):
            return splat(shape, self.scalar(op.src))
        if isinstance(op, INTEGER_CASTS):
            return self._cast(op, shape)
        if isinstance(op, arith.AddIOp | arith.SubIOp | arith.MulIOp):
            state = self._binary(op)
            return state if state is None or fits(value, strided_range(state)) else None
        if isinstance(op, arith.RemSIOp):
            return self._remainder(op, shape)
        return self._shape_op(op, shape, self.offsets)

    def _cast(self, op, shape) -> Strided | None:
        """A cast of a block keeps its offsets only where it is an identity on the values they
        can have (casts.py): `tl.arange(0, 256).to(tl.int8)` wraps, and a zero extension of a
        block with an unbounded start may not be one. A uniform constant block is folded."""
        state = self.offsets(op.operands[0])
        if state is None:
            return None
        if keeps(op, strided_range(state)):
            return state
        if state.is_uniform and state.start.is_constant:
            return splat(shape, IndexExpr.constant(fold(op, state.start.constant_value)))
        return None

    def _binary(self, op) -> Strided | None:
        lhs, rhs = self.offsets(op.lhs), self.offsets(op.rhs)
        if lhs is None or rhs is None:
            return None
        if isinstance(op, arith.AddIOp):
            return lhs.plus(rhs)
        if isinstance(op, arith.SubIOp):
            return lhs.plus(rhs, -1)
        if rhs.is_uniform:
            return lhs.scaled(rhs.start)
        if lhs.is_uniform:
            return rhs.scaled(lhs.start)
        return None

    def _remainder(self, op, shape) -> Strided | None:
        """`(s + i_w) % m`: a wrap along the one moving dimension w (stride 1), m uniform."""
        lhs, rhs = self.offsets(op.lhs), self.offsets(op.rhs)
        if lhs is None or rhs is None or not rhs.is_uniform or not lhs.is_affine:
            return None
        moving = [d for d, stride in enumerate(lhs.strides) if stride.constant_value != 0]
        if len(moving) != 1 or lhs.strides[moving[0]].constant_value != 1:
            return None
        wrap = Wrap(moving[0], lhs.start, rhs.start, ONE)
        return Strided(shape, ZERO, (ZERO,) * len(shape), wrap)

    def _shape_op(self, op, shape, state_of):
        """expand_dims, broadcast and trans, on integer or pointer blocks alike."""
        transform = _reshaping(op, shape)
        src = None if transform is None else state_of(op.src)
        if src is None:
            return None
        return src.map(transform) if isinstance(src, PointerState) else transform(src)

    # -- pointers -----------------------------------------------------------------------------

    def pointer(self, value: Value) -> PointerState | None:
        """The structured state of a pointer or pointer block, or None."""
        if value in self._pointers:
            return self._pointers[value]
        self._pointers[value] = None
        state = self._pointer(value)
        if state is not None:
            state = state.map(Strided.normalized)
        self._pointers[value] = state
        return state

    def _pointer(self, value: Value) -> PointerState | None:
        shape = _shape(value)
        op = value.defining_op
        base = self.base_of(value)
        if base is None:
            return None
        if value is base:  # a kernel argument
            return PointerState(base, splat(shape, ZERO))
        if not shape and (op is None or isinstance(op, scf.ForOp | scf.IfOp | scf.WhileOp)):
            # A scalar pointer carried by a loop or yielded by a region is carried as its
            # offset: a leaf.
            return PointerState(base, Strided((), IndexExpr.leaf(value), ()))
        if op is None:
            return self._carried_block(value, base)
        if isinstance(op, scf.ForOp):
            inside = self.pointer(op.region_iter_args[op.results.index(value)])
            return None if inside is None else inside.map(lambda s: s.with_start(_leaf(value)))
        if isinstance(op, tt.AddPtrOp):
            ptr, offsets = self.pointer(op.ptr), self.offsets(op.offset)
            if ptr is None or offsets is None:
                return None
            if not ptr.offsets.shape and shape:  # a scalar pointer plus a block: broadcast
                total = splat(shape, ptr.offsets.start).plus(offsets)
            else:
                total = ptr.offsets.plus(offsets)
            return None if total is None else PointerState(ptr.base, total)
        if isinstance(op, tt.SplatOp):
            src = self.pointer(op.src)
            return None if src is None else PointerState(src.base, splat(shape, src.offsets.start))
        if isinstance(op, tt.BitcastOp):
            return self.pointer(op.src) if _same_element_size(op) else None
        return self._shape_op(op, shape, self.pointer)

    def _carried_block(self, argument: Value, base: Value) -> PointerState | None:
        """A pointer block carried by an `scf.for`, structured when its yield only moves its
        start (see the module docstring). Asked before the yield (the conversion asks at the
        loop, before its body), so that the yield is examined under the assumption."""
        loop = argument.owner.parent_op()
        if not isinstance(loop, scf.ForOp) or argument.index == 0:
            return None
        i = argument.index - 1
        init = self.pointer(loop.initArgs[i])
        yielded = _yielded(loop.region, i)
        if init is None or yielded is None:
            return None
        assumed = init.map(lambda s: s.with_start(_leaf(argument)))
        mark = len(self._pointers)
        self._pointers[argument] = assumed
        after = self.pointer(yielded)
        if after is not None and after.base is base and after.offsets.same_layout(assumed.offsets):
            return assumed
        for stale in list(self._pointers)[mark:]:  # computed under the failed assumption
            del self._pointers[stale]
        return None

    def base_of(self, value: Value) -> Value | None:
        """The pointer argument `value` points into, or None when that is not one argument
        (a pointer loaded from memory, made from an integer, or selected between two
        arguments)."""
        if value in self._bases:
            return self._bases[value]
        self._bases[value] = None
        base = self._base(value)
        self._bases[value] = base
        return base

    def _base(self, value: Value) -> Value | None:
        op = value.defining_op
        if op is None:
            return self._argument_base(value)
        if isinstance(op, tt.AddPtrOp):
            return self.base_of(op.ptr)
        if isinstance(op, tt.SplatOp | tt.ExpandDimsOp | tt.BroadcastOp | tt.TransOp):
            return self.base_of(op.src)
        if isinstance(op, tt.BitcastOp) and not _same_element_size(op):
            return None  # offsets in other units: the conversion goes through its address
        if isinstance(op, tt.BitcastOp | tt.ReshapeOp):
            return self.base_of(op.src)
        if isinstance(op, arith.SelectOp):
            a, b = self.base_of(op.true_value), self.base_of(op.false_value)
            return a if a is not None and a is b else None
        if isinstance(op, scf.ForOp | scf.IfOp | scf.WhileOp):
            return self._region_result_base(op, value)
        return None

    def _argument_base(self, value: Value) -> Value | None:
        if not isinstance(value, BlockArgument):
            return None
        block = value.owner
        parent = block.parent_op()
        if isinstance(parent, tt.FuncOp):
            if block is parent.body.entry_block:
                return value
            return self._branch_argument_base(value)
        if isinstance(parent, scf.ForOp) and value.index > 0:
            i = value.index - 1
            return self._loop_base(value, parent.initArgs[i], _yielded(parent.region, i))
        if isinstance(parent, scf.WhileOp):
            i = value.index
            if block.parent is parent.regions[0]:
                return self._loop_base(value, parent.operands[i], _yielded(parent.regions[1], i))
            return self.base_of(_condition_arg(parent, i))
        return None

    def _branch_argument_base(self, argument: Value) -> Value | None:
        """A block argument reached by branches: the base every incoming pointer shares."""
        block = argument.owner
        incoming = []
        for other in block.parent.blocks:
            terminator = other.last_op
            if terminator is None:
                continue
            for index, successor in enumerate(terminator.successors):
                if successor is block:
                    incoming.append(terminator.successor_operands(index)[argument.index])
        if not incoming:
            return None
        self._bases[argument] = base = self.base_of(incoming[0])
        if base is None or any(self.base_of(v) is not base for v in incoming[1:]):
            return None
        return base

    def _loop_base(self, argument: Value, init: Value, yielded: Value | None) -> Value | None:
        """A loop-carried pointer keeps the base of its initial value if every iteration
        yields a pointer into that base (assumed while the yield is examined, since the yield
        usually derives from the argument itself)."""
        base = self.base_of(init)
        self._bases[argument] = base
        if base is None or yielded is None or self.base_of(yielded) is not base:
            return None
        return base

    def _region_result_base(self, op, value) -> Value | None:
        i = op.results.index(value)
        if isinstance(op, scf.ForOp):
            return self._merge(op.initArgs[i], [_yielded(op.region, i)])
        if isinstance(op, scf.IfOp):
            yields = [_yielded(r, i) for r in op.regions if r.entry_block is not None]
            return self._merge(yields[0], yields[1:])
        return self.base_of(_condition_arg(op, i))

    def _merge(self, first: Value, others: list[Value | None]) -> Value | None:
        base = self.base_of(first)
        for other in others:
            if other is None or self.base_of(other) is not base:
                return None
        return base


def _same_element_size(op) -> bool:
    """Whether a pointer bitcast keeps the size of an element (an i1 takes a byte)."""
    source, target = (element_type(v.type).pointee_type for v in (op.src, op.result))
    return (bit_width(source) + 7) // 8 == (bit_width(target) + 7) // 8


def _yielded(region, index: int) -> Value | None:
    block = region.entry_block
    terminator = None if block is None else block.last_op
    if terminator is None or index >= len(terminator.operands):
        return None
    return terminator.operands[index]


def _condition_arg(op, index: int) -> Value:
    """The value `scf.condition` forwards to result / after-region argument `index`."""
    condition = op.regions[0].entry_block.last_op
    return condition.operands[1 + index]


def _reshaping(op, shape):
    """What a shape op does to a `Strided` state, or None for other ops."""
    if isinstance(op, tt.ExpandDimsOp):
        return lambda state: state.expanded(op.axis.value, shape)
    if isinstance(op, tt.BroadcastOp):
        return lambda state: state.broadcast(shape)
    if isinstance(op, tt.TransOp):
        return lambda state: state.permuted(op.order.values, shape)
    return None


def _signed_constant(value, t) -> int:
    """An integer constant as the analysis reads every value: signed (an i1 true is -1)."""
    return signed(int(value), bit_width(t))


def _leaf(value: Value) -> IndexExpr:
    return IndexExpr.leaf(value)
