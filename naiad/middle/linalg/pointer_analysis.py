"""Which pointer blocks are *structured*: `base + start + Σ_d i_d · stride_d` over the block's
indices, so that a load or store becomes a strided view of the argument instead of a gather.

The analysis reads TTIR as the frontend and the TTIR pipeline leave it, following the producers
of a pointer back to its base (a kernel argument), as triton-shared's PtrAnalysis does:

    tt.make_range {start, end}      start, stride 1
    tt.splat %s / dense splat        start s, stride 0 in every dimension
    tt.expand_dims / tt.broadcast    a stride-0 dimension inserted / size-1 dimensions widened
    tt.trans                         strides permuted
    arith.addi / arith.subi          starts and strides added / subtracted
    arith.muli by a uniform block    start and strides scaled
    arith.extsi / extui / trunci     unchanged (offsets are assumed not to overflow; see
                                     index_expr.py)
    tt.addptr %p, %offsets           the pointer's state plus the offsets'

Anything else (a modulo, a division, a select, offsets loaded from memory, a loop-carried
offset block) is not structured; the conversion then gathers and scatters element by element,
which is always correct. Scalar integers are decomposed into `IndexExpr` polynomials through
addi / subi / muli / constants / integer casts; every other scalar is a leaf.

`base_of` answers, for every pointer value structured or not, which kernel argument it points
into: loads and stores of both paths index a view of that argument.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...dialects import arith, scf, tt
from ...ir import BlockArgument, DenseElementsAttr, IntegerAttr, RankedTensorType, Value
from .index_expr import ONE, ZERO, IndexExpr


@dataclass(frozen=True)
class Strided:
    """`value[i_0, ..., i_{r-1}] = start + Σ_d i_d · strides[d]` over a block of `shape`."""

    shape: tuple[int, ...]
    start: IndexExpr
    strides: tuple[IndexExpr, ...]

    @property
    def is_uniform(self) -> bool:
        """Every element equal (all strides zero)."""
        return all(s.constant_value == 0 for s in self.strides)

    def normalized(self) -> Strided:
        """Size-1 dimensions get stride 0: their index is always 0, so any stride means the same."""
        strides = tuple(ZERO if n == 1 else s for n, s in zip(self.shape, self.strides))
        return Strided(self.shape, self.start, strides)

    def __add__(self, other: Strided) -> Strided:
        return Strided(
            self.shape, self.start + other.start, _zip(self.strides, other.strides, 1)
        ).normalized()

    def __sub__(self, other: Strided) -> Strided:
        return Strided(
            self.shape, self.start - other.start, _zip(self.strides, other.strides, -1)
        ).normalized()

    def scaled(self, factor: IndexExpr) -> Strided:
        return Strided(
            self.shape, self.start * factor, tuple(s * factor for s in self.strides)
        ).normalized()


def _zip(a, b, sign):
    return tuple(x + y if sign > 0 else x - y for x, y in zip(a, b))


@dataclass(frozen=True)
class PointerState:
    """A structured pointer (block): `base` (a pointer argument) plus `offsets`, in elements of
    the base's pointee type."""

    base: Value
    offsets: Strided


def _shape(value: Value) -> tuple[int, ...]:
    t = value.type
    return tuple(t.shape) if isinstance(t, RankedTensorType) else ()


def _splat(shape, start: IndexExpr) -> Strided:
    return Strided(tuple(shape), start, (ZERO,) * len(shape))


class PointerAnalysis:
    """Structured states of pointer and integer values, computed on demand and memoized.

    `leaf_roots` maps pointer block arguments the conversion carries as plain offsets (a scalar
    pointer advanced in a loop) to the base they point into; such a pointer is structured with
    itself as the leaf of its start.
    """

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
            return IndexExpr.constant(int(op.value.value))
        if isinstance(op, arith.ExtSIOp | arith.ExtUIOp | arith.TruncIOp):
            return self.scalar(op.operands[0])
        if isinstance(op, arith.IndexCastOp | arith.IndexCastUIOp):
            return self.scalar(op.operands[0])
        if isinstance(op, arith.AddIOp):
            return self.scalar(op.lhs) + self.scalar(op.rhs)
        if isinstance(op, arith.SubIOp):
            return self.scalar(op.lhs) - self.scalar(op.rhs)
        if isinstance(op, arith.MulIOp):
            return self.scalar(op.lhs) * self.scalar(op.rhs)
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
                splat = attr.splat_value
                if isinstance(splat, int):
                    return _splat(shape, IndexExpr.constant(splat))
            return None
        if isinstance(op, tt.SplatOp):
            return _splat(shape, self.scalar(op.src))
        if isinstance(op, arith.ExtSIOp | arith.ExtUIOp | arith.TruncIOp):
            return self.offsets(op.operands[0])
        if isinstance(op, arith.AddIOp | arith.SubIOp | arith.MulIOp):
            return self._binary(op, shape)
        return self._shape_op(op, shape, self.offsets)

    def _binary(self, op, shape) -> Strided | None:
        lhs, rhs = self.offsets(op.lhs), self.offsets(op.rhs)
        if lhs is None or rhs is None:
            return None
        if isinstance(op, arith.AddIOp):
            return lhs + rhs
        if isinstance(op, arith.SubIOp):
            return lhs - rhs
        if rhs.is_uniform:
            return lhs.scaled(rhs.start)
        if lhs.is_uniform:
            return rhs.scaled(lhs.start)
        return None

    def _shape_op(self, op, shape, state_of):
        """expand_dims, broadcast and trans, on integer or pointer blocks alike."""
        if isinstance(op, tt.ExpandDimsOp):
            src = state_of(op.src)
            if src is None:
                return None
            return _expand(src, op.axis.value, shape)
        if isinstance(op, tt.BroadcastOp):
            src = state_of(op.src)
            if src is None:
                return None
            return _map_offsets(src, lambda s: Strided(shape, s.start, s.strides))
        if isinstance(op, tt.TransOp):
            src = state_of(op.src)
            if src is None:
                return None
            order = list(op.order.values)
            return _map_offsets(
                src, lambda s: Strided(shape, s.start, tuple(s.strides[d] for d in order))
            )
        return None

    # -- pointers -----------------------------------------------------------------------------

    def pointer(self, value: Value) -> PointerState | None:
        """The structured state of a pointer or pointer block, or None."""
        if value in self._pointers:
            return self._pointers[value]
        self._pointers[value] = None
        state = self._pointer(value)
        if state is not None:
            state = PointerState(state.base, state.offsets.normalized())
        self._pointers[value] = state
        return state

    def _pointer(self, value: Value) -> PointerState | None:
        shape = _shape(value)
        op = value.defining_op
        base = self.base_of(value)
        if base is None:
            return None
        if value is base:  # a kernel argument
            return PointerState(base, _splat(shape, ZERO))
        if op is None:
            # A scalar pointer carried by a loop is carried as its offset, a leaf; a carried
            # block of pointers is not structured.
            return None if shape else PointerState(base, Strided((), IndexExpr.leaf(value), ()))
        if isinstance(op, tt.AddPtrOp):
            ptr, offsets = self.pointer(op.ptr), self.offsets(op.offset)
            if ptr is None or offsets is None:
                return None
            if not ptr.offsets.shape and shape:  # a scalar pointer plus a block: broadcast
                return PointerState(ptr.base, _splat(shape, ptr.offsets.start) + offsets)
            return PointerState(ptr.base, ptr.offsets + offsets)
        if isinstance(op, tt.SplatOp):
            src = self.pointer(op.src)
            return None if src is None else PointerState(src.base, _splat(shape, src.offsets.start))
        if isinstance(op, tt.BitcastOp):
            return self.pointer(op.src)
        return self._shape_op(op, shape, self.pointer)

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


def _expand(state, axis: int, shape):
    def insert(s: Strided) -> Strided:
        strides = list(s.strides)
        strides.insert(axis, ZERO)
        return Strided(tuple(shape), s.start, tuple(strides))

    return _map_offsets(state, insert)


def _map_offsets(state, function):
    if isinstance(state, PointerState):
        return PointerState(state.base, function(state.offsets))
    return function(state)
