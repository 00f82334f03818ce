"""The `scf` dialect (SCFOps.td): structured loops and conditionals with values flowing through
`scf.yield` / `scf.condition`.

`scf.for`, `scf.if` and `scf.while` are printed by hand-written C++ upstream (`custom_syntax`).
ODS names the result group (and `scf.yield`'s operands) `results`, which is Operation's own
attribute here, so those fields are `outs` / `values`; `scf.yield`'s format says `$values`.

    loop = ForOp(lb, ub, step, [acc0])       # body block: (iv, acc), results like the inits
    with builder.at_end(loop.body): ... YieldOp([acc1])
"""

from __future__ import annotations

from ...ir import (
    Block,
    Constraint,
    HasParent,
    IndexType,
    IntegerType,
    LoopLike,
    Operation,
    Pure,
    RecursiveMemoryEffects,
    Region,
    ReturnLike,
    SingleBlock,
    Terminator,
    irdl_op,
    operand,
    opt_attribute,
    region,
    var_operand,
    var_result,
)
from ..base import I1, UnitAttrC, fail

AnySignlessIntegerOrIndex = Constraint(
    "signless integer or index", lambda t: isinstance(t, IntegerType | IndexType)
)


def _types(values) -> list:
    return [v.type for v in values]


def _check_types(op, what: str, actual: list, expected: list) -> None:
    if len(actual) != len(expected):
        fail(op, f"{what}: {len(actual)} values where {len(expected)} are expected")
    for i, (a, e) in enumerate(zip(actual, expected)):
        if a is not e:
            fail(op, f"{what}: type #{i} '{a}' should match '{e}'")


def _terminator(op, region: Region, name: str, what: str):
    block = region.entry_block
    last = None if block is None else block.last_op
    if last is None or last.name != name:
        fail(op, f"expects the '{what}' region to terminate with '{name}'")
    return last


@irdl_op
class ForOp(Operation):
    """`for iv = lowerBound; iv < upperBound; iv += step`, carrying `initArgs` through the body
    (block arguments after the induction variable) to the results."""

    name = "scf.for"
    traits = frozenset({LoopLike, RecursiveMemoryEffects, SingleBlock})
    lowerBound = operand(AnySignlessIntegerOrIndex)  # the ODS names
    upperBound = operand(AnySignlessIntegerOrIndex)
    step = operand(AnySignlessIntegerOrIndex)
    initArgs = var_operand()
    unsignedCmp = opt_attribute(UnitAttrC)
    outs = var_result()
    region = region(single_block=True)
    custom_syntax = True

    def __init__(self, lower, upper, step, init_args=(), **fields):
        init_args = list(init_args)
        fields.setdefault("outs", _types(init_args))
        if "region" not in fields:
            fields["region"] = Region([Block([lower.type, *_types(init_args)])])
        super().__init__(lower, upper, step, init_args, **fields)

    @property
    def body(self) -> Block:
        return self.region.blocks[0]

    @property
    def induction_var(self):
        return self.body.arguments[0]

    @property
    def region_iter_args(self) -> tuple:
        return self.body.arguments[1:]

    def verify_(self) -> None:
        t = self.lowerBound.type
        if not (self.upperBound.type is t and self.step.type is t):
            fail(self, "failed to verify that all of {lowerBound, upperBound, step} have same type")
        if len(self.initArgs) != len(self.outs):
            fail(self, "mismatch in number of loop-carried values and defined values")
        if not self.region.blocks:
            fail(self, "expects a body block")
        args = self.body.arguments
        if not args or args[0].type is not t:
            fail(self, "expected induction variable to be same type as bounds and step")
        if len(args) - 1 != len(self.outs):
            fail(self, "mismatch in number of basic block args and defined values")
        for i, (init, arg, out) in enumerate(zip(self.initArgs, args[1:], self.outs)):
            if init.type is not out.type:
                fail(self, f"types mismatch between {i}th iter operand and defined value")
            if arg.type is not out.type:
                fail(self, f"types mismatch between {i}th iter region arg and defined value")
        yielded = _terminator(self, self.region, "scf.yield", "body")
        _check_types(self, "scf.yield of the body", _types(yielded.operands), _types(self.outs))


@irdl_op
class IfOp(Operation):
    """`if condition` with a then region and an optional else region, both yielding the
    results."""

    name = "scf.if"
    traits = frozenset({RecursiveMemoryEffects, SingleBlock})
    condition = operand(I1)
    outs = var_result()
    thenRegion = region(single_block=True)  # the ODS names
    elseRegion = region(single_block=True)
    custom_syntax = True

    def __init__(self, condition, result_types=(), with_else: bool | None = None, **fields):
        """The then block is made; the else block too when there are results or
        `with_else`."""
        result_types = list(result_types)
        if with_else is None:
            with_else = bool(result_types)
        fields.setdefault("thenRegion", Region([Block()]))
        fields.setdefault("elseRegion", Region([Block()] if with_else else []))
        super().__init__(condition, outs=result_types, **fields)

    @property
    def then_block(self) -> Block:
        return self.thenRegion.blocks[0]

    @property
    def else_block(self) -> Block | None:
        return self.elseRegion.entry_block

    def verify_(self) -> None:
        expected = _types(self.outs)
        if expected and not self.elseRegion.blocks:
            fail(self, "must have an else block if defining values")
        for body, what in ((self.thenRegion, "then"), (self.elseRegion, "else")):
            if body.blocks:
                yielded = _terminator(self, body, "scf.yield", what)
                _check_types(
                    self, f"scf.yield of the {what} region", _types(yielded.operands), expected
                )


@irdl_op
class WhileOp(Operation):
    """`while`: the `before` region takes the carried values and ends in `scf.condition`,
    which either exits with its arguments (the results) or passes them to the `after` region,
    whose `scf.yield` feeds `before` again."""

    name = "scf.while"
    traits = frozenset({LoopLike, RecursiveMemoryEffects, SingleBlock})
    inits = var_operand()
    outs = var_result()
    before = region(single_block=True)
    after = region(single_block=True)
    custom_syntax = True

    def __init__(self, inits, result_types=None, **fields):
        inits = list(inits)
        result_types = _types(inits) if result_types is None else list(result_types)
        fields.setdefault("before", Region([Block(_types(inits))]))
        fields.setdefault("after", Region([Block(result_types)]))
        super().__init__(inits, outs=result_types, **fields)

    def verify_(self) -> None:
        condition = _terminator(self, self.before, "scf.condition", "before")
        yielded = _terminator(self, self.after, "scf.yield", "after")
        carried = _types(self.inits)
        _check_types(
            self, "the 'before' region's arguments", _types(self.before.block.arguments), carried
        )
        results = _types(self.outs)
        _check_types(self, "scf.condition's arguments", _types(condition.args), results)
        _check_types(
            self, "the 'after' region's arguments", _types(self.after.block.arguments), results
        )
        _check_types(self, "scf.yield of the 'after' region", _types(yielded.operands), carried)


@irdl_op
class ConditionOp(Operation):
    """End of a `while`'s `before` region: continue with `args` if `condition`, else exit with
    them."""

    name = "scf.condition"
    traits = frozenset({Pure, Terminator, HasParent("scf.while")})
    condition = operand(I1)
    args = var_operand()
    assembly_format = "`(` $condition `)` attr-dict ($args^ `:` type($args))?"

    def __init__(self, condition, args=(), **fields):
        super().__init__(condition, list(args), **fields)


@irdl_op
class YieldOp(Operation):
    """End of an `scf` region, passing `values` to the parent op."""

    name = "scf.yield"
    traits = frozenset(
        {
            Pure,
            Terminator,
            ReturnLike,
            HasParent("scf.for", "scf.if", "scf.while", "scf.execute_region", "scf.index_switch"),
        }
    )
    values = var_operand()
    assembly_format = "attr-dict ($values^ `:` type($values))?"

    def __init__(self, values=(), **fields):
        super().__init__(list(values), **fields)


def in_loop(block) -> bool:
    """Whether `block` lies in the body of an `scf.for` or `scf.while`, at any depth."""
    op = block.parent_op()
    while op is not None:
        if isinstance(op, ForOp | WhileOp):
            return True
        op = op.parent_op()
    return False


def carrying_more(loop: ForOp, extra_inits) -> ForOp:
    """`loop` rebuilt in its place to carry `extra_inits` too, after its own values: its body
    (moved, not copied) gets their arguments, and the caller appends their yielded values to
    the body's `scf.yield`. The old loop's results are replaced by the new loop's first ones."""
    extra_inits = list(extra_inits)
    for value in extra_inits:
        loop.body.add_argument(value.type, loop.location)
    new = ForOp(
        loop.lowerBound,
        loop.upperBound,
        loop.step,
        [*loop.initArgs, *extra_inits],
        attributes=dict(loop.attributes),
        location=loop.location,
        region=Region(),
    )
    new.region.take_body(loop.region)
    loop.parent.insert_before(new, loop)
    for old, result in zip(loop.outs, new.outs):
        old.replace_all_uses_with(result)
    loop.erase()
    return new
