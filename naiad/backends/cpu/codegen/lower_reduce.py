"""`linalg.reduce` over vectors of partial accumulators, so reductions run at vector speed.

A sequential fold `acc = f(acc, x_i)` is one dependence chain: LLVM may not reorder it (float
addition is not associative) and it runs at the latency of `f`. The language leaves the order
of a reduction unspecified (a GPU reduces as a tree), so the back end keeps up to `CHAINS`
vectors of `LANES` partial accumulators: a step loads the next `CHAINS · LANES` elements as
vectors and folds each into its chain lane by lane; afterwards the chains fold into one vector,
the vector folds in halves (LANES/2 lanes, then LANES/4, ...) into one value, the few elements
left over fold into that, and the result into the initial value.

A combine region of plain arithmetic, comparisons and selects on f32 / f64 / integers
(`_VECTOR_OPS`) is lowered on the vectors themselves: its scalar lowering is written for any
LLVM type. Any other region (argmax with constants, Welford's triple, f16 held as bits) is
lowered once per lane on elements extracted from the vectors, the results inserted back: always
correct, and vectorized as far as the SLP vectorizer manages. Left to the SLP vectorizer alone,
scalar lanes were not enough: it grouped a maximum's lanes by two as soon as a tree of halves
followed the loop.

An f32 `maxnumf` / `minnumf` (tl.max, tl.min) folds the elements' bits as integers first: one
signed maximum and one unsigned minimum (a maximum: any element with its sign clear makes the
signed maximum non-negative, and it is then the largest such value; else the unsigned minimum
is the negative value nearest zero) or one unsigned maximum and minimum (a minimum), two vector
operations per 16 lanes where the float rules (-0 below +0, a NaN losing to a number) take six;
-0 and +0 order by their bits. Where a NaN could decide the result (the integer candidate is a
NaN), the float fold runs after all, so every result is the one the float rules give
(`_Fold.integer_extremum`). On a Zen 3 core the softmax's row maximum took 24 % of its time.
A `maximumf` / `minimumf` (a NaN wins: naiad.ops' amax, tl.maximum with propagate_nan) keeps a
third accumulator, the other way round (unsigned maximum for a maximum, signed maximum for a
minimum): the signed maximum is above +inf's bits when a NaN with its sign clear is there, the
unsigned maximum above -inf's when one with its sign set is, and then the float fold runs; with
no NaN the two float rules agree (amax over rows of 1024: 7 vector ops per 16 lanes took 2.2x
torch's time, 3 integer ones about 1.1x).

The middle layer reduces a tensor `t` without a neutral element as "`t` without its first slice,
into that first slice"; the lanes then start from `t` itself (`_split_first`), which keeps the
loads aligned and leaves no one-element-short tail. A line too short to fill the lanes twice is
one vector whose neighbours combine level by level (`_Fold.neighbours`, the interpreter's
order); one whose length is not a power of two, and reductions over several dimensions, fold
sequentially (lower_linalg.lower_structured).
"""

from __future__ import annotations

from llvmlite import ir

from ....ir import IntegerType, f32, f64
from .function import I32, I64, FunctionLowering, lowers
from .loops import carrying_loop, loop_nest
from .lower_linalg import _lower_body, destination, lower_structured
from .lower_reduce_columns import lower_columns, takes_columns
from .views import add, element_bytes

LANES = 16
CHAINS = 4  # independent vectors: the latency of one combine hides behind the others

# Combine-region ops whose scalar lowering (lower_scalar/) is written for any LLVM value type,
# so that it applies to whole vectors of f32 / f64 / integer lanes.
_VECTOR_OPS = {
    "arith.addf",
    "arith.subf",
    "arith.mulf",
    "arith.maximumf",
    "arith.minimumf",
    "arith.maxnumf",
    "arith.minnumf",
    "arith.addi",
    "arith.subi",
    "arith.muli",
    "arith.andi",
    "arith.ori",
    "arith.xori",
    "arith.cmpi",
    "arith.cmpf",
    "arith.select",
}


@lowers("linalg.reduce")
def _reduce(fl: FunctionLowering, op) -> None:
    inputs, inits = list(op.inputs), list(op.inits)
    block = op.body
    dims = list(op.dimensions.values)
    whole = _split_first(op, dims[0]) if len(dims) == 1 else None
    views = [fl.value(v) for v in (whole or inputs)]
    length = views[0].sizes[dims[0]] if len(dims) == 1 else None
    if length is not None and _columns(fl, op, block, views, inits, whole, dims[0]):
        return
    if not isinstance(length, int) or (length < 2 * LANES and not _power_of_two(length)):
        lower_structured(fl, op, inputs, inits, op.maps(), block, _lower_body(fl, block))
        return
    outs = [destination(fl, v, reads=whole is None) for v in inits]
    fold = _Fold(fl, block, views, dims[0])
    parallel = [n for d, n in enumerate(views[0].sizes) if d != dims[0]]
    with loop_nest(fl.builder, parallel) as outer:
        fold.outer = list(outer)
        accumulated = fold.run(length) if length >= 2 * LANES else fold.neighbours(length)
        if whole is None:
            accumulated = fold.combine(
                [out.load(fl.builder, fold.outer) for out in outs], accumulated
            )
        for out, value in zip(outs, accumulated):
            out.store(fl.builder, value, fold.outer)
    for result, out in zip(op.results, outs):
        fl.bind(result, out)


def _columns(fl: FunctionLowering, op, block, views, inits, whole, axis: int) -> bool:
    """Lower the reduction by whole vectors of its kept last axis (lower_reduce_columns.py)
    where it takes them and its combine region computes on vectors; whether it did."""
    if not _on_vectors(block) or not takes_columns(views, axis, LANES):
        return False
    outs = [destination(fl, v, reads=whole is None) for v in inits]
    fold = _Fold(fl, block, views, axis)
    lower_columns(fl.builder, views, outs, axis, LANES, fold.combine_lanes, whole is not None)
    for result, out in zip(op.results, outs):
        fl.bind(result, out)
    return True


class _Fold:
    """The reduction of one line of `views` (along `axis`, at the `outer` parallel indices)."""

    def __init__(self, fl: FunctionLowering, block, views, axis: int):
        self.fl, self.b, self.block = fl, fl.builder, block
        self.views, self.axis = views, axis
        self.outer: list = []
        self.on_vectors = _on_vectors(block)

    def position(self, i) -> list:
        index = list(self.outer)
        index.insert(self.axis, i)
        return index

    def combine(self, accumulated, elements) -> list:
        """The combine region on scalars: (accumulated, elements) -> accumulated."""
        for argument, value in zip(self.block.arguments, [*elements, *accumulated]):
            self.fl.bind(argument, value)
        return _lower_body(self.fl, self.block)()

    def combine_lanes(self, accumulated, elements, width: int) -> list:
        """The combine region lane by lane on vectors of `width` lanes: on the vectors
        themselves where it can, else on each lane's elements (extracted, then inserted)."""
        if self.on_vectors:
            return self.combine(accumulated, elements)
        b = self.b
        results = [ir.Constant(v.type, ir.Undefined) for v in accumulated]
        for j in range(width):
            lane = ir.Constant(I32, j)
            values = self.combine(
                [b.extract_element(v, lane) for v in accumulated],
                [b.extract_element(v, lane) for v in elements],
            )
            results = [b.insert_element(r, v, lane) for r, v in zip(results, values)]
        return results

    def load_lanes(self, start, width: int = LANES) -> list:
        """Elements start .. start + width of each view, as vectors."""
        b = self.b
        loaded = []
        for view in self.views:
            vector_type = ir.VectorType(view.element, width)
            if view.strides[self.axis] == 1 and element_bytes(view.element):
                address = view.address(b, self.position(start))
                size = element_bytes(view.element)
                loaded.append(b.load(address, typ=vector_type, align=size))
                continue
            vector = ir.Constant(vector_type, ir.Undefined)
            for j in range(width):
                element = view.load(b, self.position(add(b, start, j)))
                vector = b.insert_element(vector, element, ir.Constant(I32, j))
            loaded.append(vector)
        return loaded

    def run(self, length: int) -> list:
        b = self.b
        chains = CHAINS if self.on_vectors else 1  # lane by lane, more chains cost code size
        while chains > 1 and length < 2 * chains * LANES:
            chains //= 2
        span = chains * LANES
        steps = length // span
        extremum = _integer_extremum_kind(self.block, self.views)
        if extremum is None:
            accumulated = self.fold_vectors(chains, steps)
        else:
            # Two or three accumulators a chain; integer compares take one cycle, so two
            # chains hide them, and four (32 registers of AVX2 lanes) spilled to the stack.
            pairs = min(chains, 2)
            accumulated = self.integer_extremum(extremum, pairs, steps * chains // pairs)
        for i in range(steps * span, length):
            accumulated = self.combine(
                accumulated, [v.load(b, self.position(i)) for v in self.views]
            )
        return accumulated

    def integer_extremum(self, kind: tuple, chains: int, steps: int) -> list:
        """The f32 extremum (`kind`: _integer_extremum_kind's) of the first `steps` spans of
        `chains` vectors, folded on the elements' bits, or by `fold_vectors` where a NaN could
        decide it (see the module)."""
        b = self.b
        is_max, propagates = kind
        bits_type = ir.VectorType(I32, LANES)
        # (signed, keeps the larger) per accumulator: a maximum keeps the signed maximum, a
        # minimum the unsigned one; both the unsigned minimum; a NaN-propagating one the other
        # maximum too (the module says why).
        folds = [(is_max, True), (False, False)] + ([(not is_max, True)] if propagates else [])

        def fold_bits(accumulated, elements, _width) -> list:
            kept = []
            for (signed, larger), held, x in zip(folds, accumulated, elements, strict=True):
                compare = b.icmp_signed if signed else b.icmp_unsigned
                kept.append(b.select(compare(">" if larger else "<", x, held), x, held))
            return kept

        def loaded_bits(start) -> list:
            bits = b.bitcast(self.load_lanes(start)[0], bits_type)
            return [bits] * len(folds)

        vectors = self.chained_fold(chains, steps, loaded_bits, fold_bits)
        first, smallest, *other = (b.extract_element(v, ir.Constant(I32, 0)) for v in vectors)
        return self.bits_or_float_fold(is_max, first, smallest, other, chains, steps)

    def bits_or_float_fold(self, is_max, first, smallest, other, chains, steps) -> list:
        """The extremum from the folded bits, or the float fold's where a NaN may decide it.

        A maximum: the signed maximum when some element's sign is clear, else the unsigned
        minimum; a minimum: the unsigned maximum when some element's sign is set, else the
        unsigned minimum. `other`: [the other maximum] of a NaN-propagating fold, which then
        takes the float fold wherever a NaN is among the elements; else []."""
        b = self.b
        zero = ir.Constant(I32, 0)
        first_wins = b.icmp_signed(">=", first, zero) if is_max else b.icmp_signed("<", first, zero)
        candidate = b.select(first_wins, first, smallest)
        magnitude = b.and_(candidate, ir.Constant(I32, 0x7FFFFFFF))
        is_nan = b.icmp_unsigned(">", magnitude, ir.Constant(I32, 0x7F800000))
        if other:
            signed_max, unsigned_max = (first, other[0]) if is_max else (other[0], first)
            positive_nan = b.icmp_signed(">", signed_max, ir.Constant(I32, 0x7F800000))
            negative_nan = b.icmp_unsigned(">", unsigned_max, ir.Constant(I32, 0xFF800000))
            is_nan = b.or_(positive_nan, negative_nan)
        value = b.bitcast(candidate, self.views[0].element)
        fast_block = b.block
        with b.if_then(is_nan):
            exact = self.fold_vectors(chains, steps)[0]
            exact_block = b.block
        result = b.phi(value.type)
        result.add_incoming(value, fast_block)
        result.add_incoming(exact, exact_block)
        return [result]

    def fold_vectors(self, chains: int, steps: int) -> list:
        """The combine region over the first `steps` spans of `chains` vectors, folded into
        one value per result."""
        b = self.b
        vectors = self.chained_fold(chains, steps, self.load_lanes, self.combine_lanes)
        return [b.extract_element(v, ir.Constant(I32, 0)) for v in vectors]

    def chained_fold(self, chains: int, steps: int, load, combine) -> list:
        """`chains` independent accumulators (lists of vectors: `load(start)` gives one
        chain's at element `start`) folded with `combine(accumulated, loaded, width)` over the
        first `steps` spans of `chains` vectors, then into one another and lane by lane
        halves: element 0 of each returned vector holds a result. `steps` >= 2: the loop runs,
        and its exit follows only its latch."""
        b = self.b
        partials = [load(c * LANES) for c in range(chains)]

        def fold_span(step, current) -> list:
            base = b.mul(step, ir.Constant(I64, chains * LANES))
            return [
                combine(chain, load(add(b, base, c * LANES)), LANES)
                for c, chain in enumerate(current)
            ]

        updated = carrying_loop(b, 1, steps, partials, fold_span, name="step")
        vectors = updated[0]
        for chain in updated[1:]:
            vectors = combine(vectors, chain, LANES)
        width = LANES
        while width > 1:
            width //= 2
            low = [_lanes(b, v, 0, width) for v in vectors]
            high = [_lanes(b, v, width, width) for v in vectors]
            vectors = combine(low, high, width)
        return vectors

    def neighbours(self, length: int) -> list:
        """A line shorter than two vectors (`length` a power of two): its elements as one
        vector, combined with their neighbours level by level (lanes 2i and 2i + 1, the
        earlier on the left), the interpreter's order (runtime/interpreter/regions.py). A
        combine whose result depends on the order (an argmax meeting a NaN) then agrees with
        it; a fold from the left did not (Triton's test_argmax_argmin_with_nan: argmax([3, 5,
        nan, -inf]) gave the -inf's index; the interpreter gives 5's, as the test asks)."""
        b = self.b
        vectors = self.load_lanes(0, length)
        while length > 1:
            length //= 2
            even = [_lanes(b, v, 0, length, step=2) for v in vectors]
            odd = [_lanes(b, v, 1, length, step=2) for v in vectors]
            vectors = self.combine_lanes(even, odd, length)
        return [b.extract_element(v, ir.Constant(I32, 0)) for v in vectors]


# The f32 extrema folded on bits: (is a maximum, lets a NaN win).
_BIT_EXTREMA = {
    "arith.maxnumf": (True, False),
    "arith.minnumf": (False, False),
    "arith.maximumf": (True, True),
    "arith.minimumf": (False, True),
}


def _integer_extremum_kind(block, views) -> tuple | None:
    """(is a maximum, lets a NaN win) for a region that is one f32 extremum of its two
    arguments over one view (`_BIT_EXTREMA`), None for anything else (see the module)."""
    ops = list(block)
    if len(views) != 1 or views[0].element != ir.FloatType() or len(ops) != 2:
        return None
    op = ops[0]
    if op.name not in _BIT_EXTREMA:
        return None
    if set(op.operands) != set(block.arguments) or list(ops[1].operands) != list(op.results):
        return None
    return _BIT_EXTREMA[op.name]


def _power_of_two(n: int) -> bool:
    return n >= 1 and n & (n - 1) == 0


def _on_vectors(block) -> bool:
    """Whether the combine region computes on vectors as written: ops of `_VECTOR_OPS` on
    f32 / f64 / integer values of the region itself (no constants, nothing from outside)."""
    inside = set(block.arguments)
    for op in block:
        if op is block.last_op:
            break
        if op.name not in _VECTOR_OPS or op.regions or any(v not in inside for v in op.operands):
            return False
        if op.name == "arith.cmpf" and op.predicate_name in ("false", "true"):
            return False
        inside.update(op.results)
    return all(
        isinstance(v.type, IntegerType) or v.type in (f32, f64) for v in [*block.arguments, *inside]
    )


def _lanes(b: ir.IRBuilder, vector, first: int, count: int, step: int = 1):
    """`count` lanes of `vector` from lane `first`, `step` apart, as a vector."""
    mask = ir.Constant(
        ir.VectorType(I32, count), [ir.Constant(I32, first + j * step) for j in range(count)]
    )
    return b.shuffle_vector(vector, ir.Constant(vector.type, ir.Undefined), mask)


def _split_first(op, axis: int) -> list | None:
    """The tensors `t` such that each input is `t` without its first slice along `axis` and
    each init is that first slice, or None (see the module)."""
    whole = []
    for rest_value, first_value in zip(op.inputs, op.inits):
        rest, first = rest_value.defining_op, first_value.defining_op
        if rest is None or first is None:
            return None
        if rest.name != "tensor.extract_slice" or first.name != "tensor.extract_slice":
            return None
        source = rest.operands[0]
        if first.operands[0] is not source:
            return None
        shape = list(source.type.shape)
        starts = [int(d == axis) for d in range(len(shape))]
        expected = {
            rest: (starts, [n - s for n, s in zip(shape, starts)]),
            first: ([0] * len(shape), [1 if s else n for n, s in zip(shape, starts)]),
        }
        for piece, (offsets, sizes) in expected.items():
            if (
                list(piece.static_offsets.values) != offsets
                or list(piece.static_sizes.values) != sizes
                or any(x != 1 for x in piece.static_strides.values)
            ):
                return None
        whole.append(source)
    return whole
