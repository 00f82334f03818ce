"""Atomics of `memref` (MemRefOps.td): `memref.atomic_rmw` with a fixed combining kind, and
`memref.generic_atomic_rmw` whose body computes the new value (`memref.atomic_yield`).

    %old = memref.atomic_rmw addf %v, %buf[%i] : (f32, memref<1024xf32>) -> f32
    %new = memref.generic_atomic_rmw %buf[%i] : memref<1024xf32> {
    ^bb0(%current: f32):
      %m = arith.maxnumf %current, %v : f32
      memref.atomic_yield %m : f32
    }
"""

from __future__ import annotations

from ...ir import (
    Block,
    Constraint,
    FloatType,
    HasParent,
    IntegerType,
    MemoryRead,
    MemoryWrite,
    MemRefType,
    Operation,
    Pure,
    RecursiveMemoryEffects,
    Region,
    Terminator,
    attribute,
    i64,
    irdl_op,
    operand,
    region,
    result,
    var_operand,
)
from ..base import EnumAttr, Index, check_type, fail


def _int_or_float(t) -> bool:
    return isinstance(t, IntegerType | FloatType)


IntOrFloat = Constraint("signless integer or floating-point", _int_or_float)
MemRefOfIntOrFloat = Constraint(
    "memref of signless integer or floating-point values",
    lambda t: isinstance(t, MemRefType) and _int_or_float(t.element_type),
)

AtomicRMWKind = EnumAttr(
    "AtomicRMWKind",
    {
        "addf": 0,
        "addi": 1,
        "andi": 2,
        "assign": 3,
        "maximumf": 4,
        "maxnumf": 5,
        "maxs": 6,
        "maxu": 7,
        "minimumf": 8,
        "minnumf": 9,
        "mins": 10,
        "minu": 11,
        "mulf": 12,
        "muli": 13,
        "ori": 14,
        "xori": 15,
    },
    type=i64,
)
"""Upstream's arith::AtomicRMWKind (ArithBase.td), with its current numbering."""

_FLOAT_KINDS = frozenset({"addf", "maximumf", "maxnumf", "minimumf", "minnumf", "mulf"})
_INTEGER_KINDS = frozenset({"addi", "andi", "maxs", "maxu", "mins", "minu", "muli", "ori", "xori"})


@irdl_op
class AtomicRMWOp(Operation):
    """Atomically combine `value` into the element of `memref` at `indices` by `kind`; the
    result is the element's previous value."""

    name = "memref.atomic_rmw"
    traits = frozenset({MemoryRead, MemoryWrite})
    kind = attribute(AtomicRMWKind)
    value = operand(IntOrFloat)
    memref = operand(MemRefOfIntOrFloat)
    indices = var_operand(Index)
    result = result(IntOrFloat)
    assembly_format = (
        "$kind $value `,` $memref `[` $indices `]` attr-dict `:` `(` type($value) `,` "
        "type($memref) `)` `->` type($result)"
    )

    def __init__(self, kind, value, memref, indices=(), **fields):
        """`kind`: a keyword (`"addf"`) or the attribute."""
        fields.setdefault("result", value.type)
        super().__init__(value, memref, list(indices), kind=AtomicRMWKind.get(kind), **fields)

    def verify_(self) -> None:
        t = self.memref.type
        if len(self.indices) != t.rank:
            fail(self, "expects the number of subscripts to be equal to memref rank")
        check_type(
            self, self.value.type, t.element_type, "value type matches element type of memref"
        )
        check_type(self, self.result.type, self.value.type, "all of {value, result} have same type")
        kind = AtomicRMWKind.keyword(self.kind)
        if kind in _FLOAT_KINDS and not isinstance(self.value.type, FloatType):
            fail(self, f"with kind '{kind}' expects a floating-point type")
        if kind in _INTEGER_KINDS and not isinstance(self.value.type, IntegerType):
            fail(self, f"with kind '{kind}' expects an integer type")


@irdl_op
class GenericAtomicRMWOp(Operation):
    """Atomically replace the element of `memref` at `indices` by what the body yields from
    its current value (the body's one argument); the result is the value stored. The body
    must be free of side effects."""

    name = "memref.generic_atomic_rmw"
    traits = frozenset({MemoryRead, MemoryWrite})
    memref = operand(MemRefOfIntOrFloat)
    indices = var_operand(Index)
    result = result(IntOrFloat)
    atomic_body = region()
    custom_syntax = True

    def __init__(self, memref, indices=(), **fields):
        """The body gets its block, whose argument is the current value: append the ops and
        a `memref.atomic_yield`."""
        element = memref.type.element_type
        fields.setdefault("atomic_body", Region([Block([element])]))
        super().__init__(memref, list(indices), result=element, **fields)

    @property
    def body(self) -> Block:
        return self.atomic_body.blocks[0]

    @property
    def current_value(self):
        return self.body.arguments[0]

    def verify_(self) -> None:
        check_type(
            self,
            self.result.type,
            self.memref.type.element_type,
            "result type matches element type of memref",
        )
        blocks = self.atomic_body.blocks
        if len(blocks) != 1 or len(blocks[0].arguments) != 1:
            fail(self, "expected single number of entry block arguments")
        if blocks[0].arguments[0].type is not self.result.type:
            fail(self, "expected block argument of the same type result type")
        for op in _walk(self):
            if Pure not in op.traits and RecursiveMemoryEffects not in op.traits:
                fail(
                    self,
                    "body of 'memref.generic_atomic_rmw' should contain only operations with no "
                    "side effects",
                )


def _walk(op):
    """The ops nested in `op`, not `op` itself."""
    for r in op.regions:
        for block in r.blocks:
            for inner in block:
                yield from inner.walk()


@irdl_op
class AtomicYieldOp(Operation):
    """The value a `memref.generic_atomic_rmw` stores."""

    name = "memref.atomic_yield"
    traits = frozenset({Pure, HasParent("memref.generic_atomic_rmw"), Terminator})
    result = operand()
    assembly_format = "$result attr-dict `:` type($result)"

    def verify_(self) -> None:
        parent = self.parent_op()
        if isinstance(parent, GenericAtomicRMWOp) and parent.result.type is not self.result.type:
            fail(
                self,
                f"types mismatch between yield op: {self.result.type} and its parent: "
                f"{parent.result.type}",
            )
