"""`cpu-fuse-elementwise`: elementwise producers computed inside their consumers.

Each `linalg.generic` of the Linalg form writes a whole block, so a chain `x - m`, `exp(...)`,
`* w` is three passes over memory. This pass folds a producer into the `linalg.generic` that reads
it: the consumer reads the producer's inputs instead (their indexing maps composed with the map it
read the producer through) and computes the producer's body first, in its own body:

    %p = linalg.generic ins(%a, %b) { %s = arith.subf %a, %b ; yield %s }
    %c = linalg.generic ins(%p) { %e = math.exp %p ; yield %e }
  becomes
    %c = linalg.generic ins(%a, %b) { %s = arith.subf %a, %b ; %e = math.exp %s ; yield %e }

A `linalg.fill` producer becomes the scalar itself, read from outside the body. Legal when the
producer is all-parallel with an identity output map and a pure body (its `linalg.index`es only
when the consumer reads it through the identity, so the indices mean the same), and either the
consumer is its only user, or it is cheap enough to compute again (a fill, or at most three
arithmetic ops) for each user. Upstream MLIR's linalg-fuse-elementwise-ops does the same.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...dialects import linalg
from ...ir import Builder, Operation, Pure, register_pass
from ...ir.passes import Pass

_CHEAP_OPS = 3


def _pure_body(op) -> bool:
    return all(
        inner.has_trait(Pure) or inner.name in ("linalg.yield", "linalg.index") for inner in op.body
    )


def _fusible_producer(producer, consumer, index: int) -> bool:
    if producer.name == "linalg.fill":
        return True
    if producer.name != "linalg.generic" or len(producer.results) != 1:
        return False
    if any(t.value != "parallel" for t in producer.iterator_types):
        return False
    if not producer.maps()[-1].is_identity or not _pure_body(producer):
        return False
    indexed = any(inner.name == "linalg.index" for inner in producer.body)
    if indexed and not consumer.maps()[index].is_identity:
        return False
    users = {use[0] for use in producer.results[0].uses}
    if users == {consumer}:
        return True
    cheap = [o for o in producer.body if o.name not in ("linalg.yield",)]
    return len(cheap) <= _CHEAP_OPS and not any(o.name.startswith("math.") for o in cheap)


def _fuse(consumer, index: int) -> Operation:
    """The consumer with its input `index` computed in its body."""
    value = consumer.inputs[index]
    producer = value.defining_op
    inputs = list(consumer.inputs)
    maps = consumer.maps()
    count = len(inputs)
    read_through = maps[index]
    new_inputs, new_maps, sources = [], [], {}
    for i, v in enumerate(inputs):
        if v is value:
            continue
        sources[i] = len(new_inputs)
        new_inputs.append(v)
        new_maps.append(maps[i])
    scalar = None
    producer_args = []
    if producer.name == "linalg.fill":
        scalar = producer.inputs[0]
    else:
        for v, m in zip(producer.inputs, producer.maps()):
            producer_args.append(len(new_inputs))
            new_inputs.append(v)
            new_maps.append(m.compose(read_through))
    new_maps += maps[count:]
    fused = linalg.GenericOp(
        new_inputs,
        list(consumer.outputs),
        new_maps,
        [t.value for t in consumer.iterator_types],
        [r.type for r in consumer.results],
    )
    fused.location = consumer.location
    block = fused.body
    builder = Builder()
    with builder.at_end(block):
        if scalar is None:
            arguments = producer.body.arguments
            mapping = {a: block.arguments[j] for a, j in zip(arguments, producer_args)}
            for inner in producer.body:
                if inner.name == "linalg.yield":
                    computed = mapping.get(inner.operands[0], inner.operands[0])
                    break
                builder.insert(inner.clone(mapping))
        else:
            computed = scalar
        mapping = {}
        for i, arg in enumerate(consumer.body.arguments):
            if i < count and inputs[i] is value:
                mapping[arg] = computed
            elif i < count:
                mapping[arg] = block.arguments[sources[i]]
            else:
                mapping[arg] = block.arguments[len(new_inputs) + i - count]
        for inner in consumer.body:
            builder.insert(inner.clone(mapping))
    return fused


def _fuse_once(func) -> bool:
    for consumer in list(func.walk()):
        if consumer.name != "linalg.generic" or consumer.parent is None:
            continue
        for index, value in enumerate(consumer.inputs):
            producer = value.defining_op
            if producer is None or not _fusible_producer(producer, consumer, index):
                continue
            fused = _fuse(consumer, index)
            consumer.parent.insert_before(fused, consumer)
            for old, new in zip(consumer.results, fused.results):
                old.replace_all_uses_with(new)
            consumer.erase()
            if not producer.results[0].has_uses:
                producer.erase()
            return True
    return False


@register_pass("cpu-fuse-elementwise")
@dataclass(frozen=True)
class FuseElementwise(Pass):
    """Fold elementwise producers into the generics that read them (see the module)."""

    def run(self, module: Operation) -> None:
        while _fuse_once(module):
            pass
