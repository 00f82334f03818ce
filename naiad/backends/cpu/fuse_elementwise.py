"""`cpu-fuse-elementwise`: elementwise producers computed inside their consumers.

Each `linalg.generic` of the Linalg form writes a whole block, so a chain `x - m`, `exp(...)`,
`* w` is three passes over memory. This pass folds producers into the `linalg.generic` that reads
them: the consumer reads the producers' inputs instead (their indexing maps composed with the map
it read each producer through) and computes the producers' bodies first, in its own body:

    %p = linalg.generic ins(%a, %b) { %s = arith.subf %a, %b ; yield %s }
    %c = linalg.generic ins(%p) { %e = math.exp %p ; yield %e }
  becomes
    %c = linalg.generic ins(%a, %b) { %s = arith.subf %a, %b ; %e = math.exp %s ; yield %e }

A `linalg.fill` producer becomes the scalar itself, read from outside the body. Legal when the
producer is all-parallel with an identity output map and a pure body that does not read its init
(its `linalg.index`es only when read through the identity, so the indices mean the same), and
either the fused op is its only reader, through one map that reads each element once (not a
broadcast: `log(total)[None, :]` fused under a tile of 32 rows ran its log 32 times an element),
or it is cheap enough to compute again (a fill, or at most three arithmetic ops) for each
reader or point, from its own inputs: the producers a recomputed producer reads stay whole, so
no more than its few ops are ever done twice. Upstream
MLIR's linalg-fuse-elementwise-ops does the same.

A consumer takes its whole tree of producers at once, each producer's body cloned once per map it
is read through, and consumers are visited last first, so a chain of N generics costs O(N) clones.
(Fusing one pair at a time re-cloned the growing body at each step: O(N²), 20,000 clones for a
chain of 200 `sin`s.) A fused body stops growing at `max_body_weight` (a `math` op weighs as much
as the library code it becomes): LLVM's loop vectorizer, instruction selection and register
allocator take time superlinear in the size of one loop body, so a longer chain becomes several
loops, each reading the block the one before it wrote.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from ...dialects import linalg
from ...ir import Builder, Operation, Pure, register_pass
from ...ir.passes import Pass

_CHEAP_OPS = 3
# A math op becomes a call of the math library (mathlib/), inlined: tens of LLVM instructions.
_MATH_WEIGHT = 16
# The largest fused body, in weight: 32 math ops. Compiling 200 unrolled sins on x86-64
# (bench/compile/unrolled_chain.py), CPU ms per sin: 16 in loops of 16 sins, 16 in loops of 32,
# 21 of 64, 37 of 128, 60 in one loop of 200. 32 keeps `tl.randn` (two Philox rounds and
# Box-Muller, weight 357) in one loop.
MAX_BODY_WEIGHT = 32 * _MATH_WEIGHT


def _body_ops(op) -> list:
    return [inner for inner in op.body if inner.name != "linalg.yield"]


def _weight(op) -> int:
    """What computing one element of `op` costs, in body ops (see `_MATH_WEIGHT`)."""
    if op.name == "linalg.fill":
        return 0
    return sum(_MATH_WEIGHT if o.name.startswith("math.") else 1 for o in _body_ops(op))


def _elementwise(producer) -> bool:
    """Whether one element of `producer` can be computed inside a consumer's body."""
    if producer.name == "linalg.fill":
        return True
    if producer.name != "linalg.generic" or len(producer.results) != 1:
        return False
    if any(t.value != "parallel" for t in producer.iterator_types):
        return False
    if not producer.maps()[-1].is_identity or producer.body.arguments[-1].has_uses:
        return False
    return all(
        inner.has_trait(Pure) or inner.name in ("linalg.yield", "linalg.index")
        for inner in producer.body
    )


def _cheap(producer) -> bool:
    """A producer computed again for each reader rather than kept whole."""
    if producer.name == "linalg.fill":
        return True
    ops = _body_ops(producer)
    return len(ops) <= _CHEAP_OPS and not any(o.name.startswith("math.") for o in ops)


def _loop_sizes(op) -> dict:
    """The static trip counts of `op`'s loops that its operands' shapes give, by position."""
    sizes = {}
    for value, read in zip([*op.inputs, *op.outputs], op.maps()):
        for size, expr in zip(getattr(value.type, "shape", ()), read.results):
            position = getattr(expr, "position", None)
            if position is not None and isinstance(size, int) and size >= 0:
                sizes.setdefault(position, size)
    return sizes


def _spread(consumer, read) -> bool:
    """Whether `consumer` reads each element of a producer through `read` at more than one
    point of its loops (a broadcast: `log(total)[None, :]` under a tile of rows), so that the
    producer's body, fused in, would run that many times an element. Loops of one trip do
    not count."""
    used = {getattr(expr, "position", None) for expr in read.results}
    sizes = _loop_sizes(consumer)
    return any(
        sizes.get(loop) != 1 for loop in range(len(consumer.iterator_types)) if loop not in used
    )


def _indexed(producer) -> bool:
    return producer.name == "linalg.generic" and any(
        inner.name == "linalg.index" for inner in producer.body
    )


@dataclass
class _Group:
    """A consumer and the producers fused into it: each producer with the maps, over the
    consumer's loops, that its elements are read through (one computation per map)."""

    consumer: Operation
    reads: dict  # producer -> tuple of AffineMaps
    weight: int
    kept: set  # producers others read too: they stay, and are computed again here

    def read_maps(self, op) -> list:
        """The maps of `op`'s instances: the consumer's are None (its own loops)."""
        return [None] if op is self.consumer else list(self.reads[op])

    def readers(self, producer):
        """(maps `producer` is read through by the group, whether anything else reads it)."""
        maps, outside = [], False
        for owner, index in producer.results[0].uses:
            if owner is not self.consumer and owner not in self.reads:
                outside = True
            elif index >= len(owner.inputs):
                outside = True  # an init: the value itself is needed, not its elements
            else:
                outside = outside or owner in self.kept  # the kept reader still reads it
                read = owner.maps()[index]
                for through in self.read_maps(owner):
                    composed = read if through is None else read.compose(through)
                    if composed not in maps:
                        maps.append(composed)
        return maps, outside


def _gather(consumer, order: dict, budget: int) -> _Group:
    """The producers to fuse into `consumer`: candidates from the last to the first, so that
    every reader of a candidate in the group is decided before it."""
    group = _Group(consumer, {}, _weight(consumer), set())
    heap: list = []
    queued: set = set()

    def enqueue(op):
        for value in op.inputs:
            producer = value.defining_op
            if producer is not None and producer not in queued and _elementwise(producer):
                queued.add(producer)
                heapq.heappush(heap, (-order[producer], id(producer), producer))

    enqueue(consumer)
    while heap:
        producer = heapq.heappop(heap)[2]
        maps, outside = group.readers(producer)
        if not maps or (_indexed(producer) and not all(m.is_identity for m in maps)):
            continue
        if not _cheap(producer) and (outside or len(maps) > 1 or _spread(consumer, maps[0])):
            continue
        cost = _weight(producer) * len(maps)
        if group.weight + cost > budget:
            continue
        group.reads[producer] = tuple(maps)
        group.weight += cost
        if outside:
            group.kept.add(producer)
        enqueue(producer)
    return group


def _fused_inputs(group: _Group, order: dict) -> list:
    """The (value, map) pairs the fused op reads: the consumer's unfused inputs, then those of
    its producers (maps composed), each pair once."""
    pairs: dict = {}  # ordered, each pair once
    members = [group.consumer, *sorted(group.reads, key=order.__getitem__)]
    for op in members:
        if op.name == "linalg.fill":
            continue
        for value, read in zip(op.inputs, op.maps()):
            if value.defining_op in group.reads:
                continue
            for through in group.read_maps(op):
                pairs[(value, read if through is None else read.compose(through))] = None
    return list(pairs)


def _build(group: _Group, order: dict) -> tuple[Operation, int]:
    """The consumer with its group's producers computed in its body; the number of ops cloned."""
    consumer = group.consumer
    pairs = _fused_inputs(group, order)
    arguments = {pair: i for i, pair in enumerate(pairs)}
    count = len(consumer.inputs)
    fused = linalg.GenericOp(
        [value for value, _ in pairs],
        list(consumer.outputs),
        [read for _, read in pairs] + consumer.maps()[count:],
        [t.value for t in consumer.iterator_types],
        [r.type for r in consumer.results],
    )
    fused.location = consumer.location
    block = fused.body
    computed: dict = {}  # (producer, map) -> its element in the fused body

    def element(value, read):
        producer = value.defining_op
        if producer in group.reads:
            if producer.name == "linalg.fill":
                return producer.inputs[0]
            return computed[(producer, read)]
        return block.arguments[arguments[(value, read)]]

    cloned = 0
    builder = Builder()
    with builder.at_end(block):
        for producer in sorted(group.reads, key=order.__getitem__):
            if producer.name == "linalg.fill":
                continue
            for through in group.reads[producer]:
                mapping = {
                    arg: element(value, read.compose(through))
                    for arg, value, read in zip(
                        producer.body.arguments, producer.inputs, producer.maps()
                    )
                }
                for inner in producer.body:
                    if inner.name == "linalg.yield":
                        computed[(producer, through)] = mapping.get(
                            inner.operands[0], inner.operands[0]
                        )
                        break
                    builder.insert(inner.clone(mapping))
                    cloned += 1
        mapping = {
            arg: element(value, read)
            for arg, value, read in zip(consumer.body.arguments, consumer.inputs, consumer.maps())
        }
        for k, arg in enumerate(consumer.body.arguments[count:]):
            mapping[arg] = block.arguments[len(pairs) + k]
        for inner in consumer.body:
            builder.insert(inner.clone(mapping))
            cloned += 1
    return fused, cloned


def _replace(group: _Group, fused: Operation, order: dict) -> None:
    """`fused` instead of the consumer; the producers nothing reads any more erased."""
    consumer = group.consumer
    order[fused] = order[consumer]
    consumer.parent.insert_before(fused, consumer)
    for old, new in zip(consumer.results, fused.results):
        old.replace_all_uses_with(new)
    consumer.erase()
    # Readers first: a producer is dead once its readers in the group are gone.
    for producer in sorted(group.reads, key=order.__getitem__, reverse=True):
        if not producer.results[0].has_uses:
            producer.erase()


def fuse_elementwise(module: Operation, max_body_weight: int = MAX_BODY_WEIGHT) -> int:
    """Fuse every elementwise producer into its consumers (see the module); the number of body
    ops cloned, linear in the ops of the fused chains."""
    order = {op: i for i, op in enumerate(module.walk())}
    cloned = 0
    for consumer in reversed(list(order)):
        if consumer.name != "linalg.generic" or consumer.parent is None:
            continue
        group = _gather(consumer, order, max_body_weight)
        if not group.reads:
            continue
        fused, n = _build(group, order)
        _replace(group, fused, order)
        cloned += n
    return cloned


@register_pass("cpu-fuse-elementwise")
@dataclass(frozen=True)
class FuseElementwise(Pass):
    """Fold elementwise producers into the generics that read them (see the module)."""

    max_body_weight: int = MAX_BODY_WEIGHT

    def run(self, module: Operation) -> None:
        fuse_elementwise(module, self.max_body_weight)
