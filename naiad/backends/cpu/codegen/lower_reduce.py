"""`linalg.reduce` with independent partial accumulators, so reductions vectorize.

A sequential fold `acc = f(acc, x_i)` is one dependence chain: LLVM may not reorder it (float
addition is not associative) and it runs at the latency of `f`. The language leaves the order
of a reduction unspecified (a GPU reduces as a tree), so the back end folds each run of
`LANES` consecutive elements into `LANES` partial accumulators — lane j takes elements
j, j + LANES, j + 2·LANES, ... — then folds the partials into the initial value, lane by lane.
The `LANES` chains are independent and the same ops, so the SLP vectorizer turns each step into
one vector operation. Any combine region works this way (argmax's pair, Welford's triple), as
the region is just lowered `LANES` times per step.

Reductions over several dimensions, or too short to fill the lanes twice, fold sequentially
(lower_linalg.lower_structured).
"""

from __future__ import annotations

from llvmlite import ir

from .function import I64, FunctionLowering, lowers
from .loops import counted_loop, loop_nest
from .lower_linalg import _lower_body, destination, lower_structured

LANES = 16


@lowers("linalg.reduce")
def _reduce(fl: FunctionLowering, op) -> None:
    inputs, inits = list(op.inputs), list(op.inits)
    block = op.body
    dims = list(op.dimensions.values)
    views = [fl.value(v) for v in inputs]
    length = views[0].sizes[dims[0]] if len(dims) == 1 else None
    if not isinstance(length, int) or length < 2 * LANES:
        lower_structured(fl, op, inputs, inits, op.maps(), block, _lower_body(fl, block))
        return
    axis = dims[0]
    outs = [destination(fl, v, reads=True) for v in inits]
    b = fl.builder
    parallel = [n for d, n in enumerate(views[0].sizes) if d != axis]
    with loop_nest(b, parallel) as outer:

        def position(i):
            index = list(outer)
            index.insert(axis, i)
            return index

        def combine(accumulated, elements):
            for argument, value in zip(block.arguments, [*elements, *accumulated]):
                fl.bind(argument, value)
            return _lower_body(fl, block)()

        def load_all(i):
            return [view.load(b, position(i)) for view in views]

        # Lanes start from the first LANES elements; full steps fold LANES more each.
        partials = [load_all(j) for j in range(LANES)]
        steps = length // LANES
        entry = b.block
        with counted_loop(b, 1, steps, name="step") as step:
            phis = [[b.phi(v.type) for v in lane] for lane in partials]
            for phi_lane, lane in zip(phis, partials):
                for phi, value in zip(phi_lane, lane):
                    phi.add_incoming(value, entry)
            base = b.mul(step, ir.Constant(I64, LANES))
            updated = [
                combine(phi_lane, load_all(b.add(base, ir.Constant(I64, j))))
                for j, phi_lane in enumerate(phis)
            ]
            latch = b.block
            for phi_lane, lane in zip(phis, updated):
                for phi, value in zip(phi_lane, lane):
                    phi.add_incoming(value, latch)
        partials = updated  # steps >= 2: the loop runs, and its exit follows only its latch
        # The tail (length % LANES elements) into lane 0, then the lanes into the initial value.
        for i in range(steps * LANES, length):
            partials[0] = combine(partials[0], load_all(i))
        accumulated = [out.load(b, list(outer)) for out in outs]
        for lane in partials:
            accumulated = combine(accumulated, lane)
        for out, value in zip(outs, accumulated):
            out.store(b, value, list(outer))
    for result, out in zip(op.results, outs):
        fl.bind(result, out)
