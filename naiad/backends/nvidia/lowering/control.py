"""`scf.for`, `scf.if` and `scf.while` as LLVM blocks and phis.

A value carried by a loop or merged by an `if` is a list of registers (carried_values.py: a
buffer view's is its slot offset, a token's is empty), so it becomes one phi per register.
The phis of a loop head are written when the head is entered and filled once the body has
been lowered (the block that branches back is only known then). `scf.for` compares with
`slt`, as MLIR's scf.for on signless integers does.
"""

from __future__ import annotations

from .carried_values import bind, carried, check_same_buffers, phi_type, views_of
from .context import Context, lowers
from .emitter import llvm_type


def _fill_phis(ctx: Context, names, lines, types, incoming) -> None:
    """Write phi `names[i]` of type `types[i]` at `lines[i]` from [(values, block), ...]."""
    for i, (name, line, kind) in enumerate(zip(names, lines, types)):
        sources = ", ".join(f"[ {values[i]}, %{block} ]" for values, block in incoming)
        ctx.em.fill(line, f"{name} = phi {kind} {sources}")


def _flatten(lists: list[list[str]]) -> list[str]:
    return [x for registers in lists for x in registers]


def lower_region(ctx: Context, block, arguments: list[list[str]], views=None) -> list[list[str]]:
    """Lower a region's block with its arguments bound (a buffer view to its `views` entry at
    the slot its registers give); return its terminator's operands' registers."""
    views = views or [None] * len(arguments)
    for arg, registers, view in zip(block.arguments, arguments, views):
        bind(ctx, arg, registers, view)
    for op in block.ops:
        if op.name in ("scf.yield", "scf.condition", "tt.map_elementwise.return"):
            return [carried(ctx, v) for v in op.operands]
        ctx.lower_op(op)
    return []


def _loop_hints(ctx: Context, op) -> str:
    """The loop metadata of a loop's back edge: `llvm.licm.disable` for a loop marked
    `tt.disable_licm` (`tl.range(..., disable_licm=True)`, `tl.condition(...)`), as Triton
    attaches it, so LLVM hoists nothing out of it either; else nothing."""
    if "tt.disable_licm" not in op.attributes:
        return ""
    disable = ctx.em.metadata('!"llvm.licm.disable"')
    return f", !llvm.loop {ctx.em.metadata(f'$self, {disable}', distinct=True)}"


@lowers("scf.for")
def _for(ctx: Context, op) -> None:
    em = ctx.em
    (lower,) = ctx[op.lowerBound]
    (upper,) = ctx[op.upperBound]
    (step,) = ctx[op.step]
    kind = llvm_type(op.lowerBound.type)
    inits = [carried(ctx, v) for v in op.initArgs]
    views = views_of(ctx, op.initArgs)
    head, body, exit_ = em.label("for.head"), em.label("for.body"), em.label("for.exit")
    before = em.block
    em.emit(f"br label %{head}")
    em.start_block(head)
    iv = em.fresh("iv")
    iv_line = em.placeholder()
    names = [[em.fresh("phi") for _ in registers] for registers in inits]
    types = [phi_type(v) for v, regs in zip(op.initArgs, inits) for _ in regs]
    lines = [em.placeholder() for _ in _flatten(names)]
    go_on = em.op(f"icmp slt {kind} {iv}, {upper}")
    em.emit(f"br i1 {go_on}, label %{body}, label %{exit_}")
    em.start_block(body)
    block = op.region.block
    yielded = lower_region(ctx, block, [[iv]] + names, [None, *views])
    check_same_buffers(op, views, views_of(ctx, block.terminator.operands))
    nxt = em.op(f"add {kind} {iv}, {step}")
    latch = em.block
    em.emit(f"br label %{head}{_loop_hints(ctx, op)}")
    em.fill(iv_line, f"{iv} = phi {kind} [ {lower}, %{before} ], [ {nxt}, %{latch} ]")
    _fill_phis(
        ctx, _flatten(names), lines, types, [(_flatten(inits), before), (_flatten(yielded), latch)]
    )
    em.start_block(exit_)
    for result, registers, view in zip(op.results, names, views):
        bind(ctx, result, registers, view)


@lowers("scf.if")
def _if(ctx: Context, op) -> None:
    em = ctx.em
    (condition,) = ctx[op.condition]
    then, other, merge = em.label("if.then"), em.label("if.else"), em.label("if.end")
    em.emit(f"br i1 {condition}, label %{then}, label %{other}")
    arms = []
    for label, region in ((then, op.thenRegion), (other, op.elseRegion)):
        em.start_block(label)
        yielded = lower_region(ctx, region.block, []) if region.blocks else []
        arms.append((_flatten(yielded), em.block))
        em.emit(f"br label %{merge}")
    em.start_block(merge)
    if not op.results:
        return
    yields = [region.block.terminator.operands for region in (op.thenRegion, op.elseRegion)]
    views = views_of(ctx, yields[0])
    check_same_buffers(op, views, views_of(ctx, yields[1]))
    offset = 0
    for result, value, view in zip(op.results, yields[0], views):
        registers = []
        for i in range(offset, offset + len(carried(ctx, value))):  # none for a token
            sources = ", ".join(f"[ {values[i]}, %{block} ]" for values, block in arms)
            registers.append(em.op(f"phi {phi_type(result)} {sources}", "phi"))
        offset += len(registers)
        bind(ctx, result, registers, view)


@lowers("scf.while")
def _while(ctx: Context, op) -> None:
    """before(args) -> condition(c, next...); if c: after(next...) -> yield(args'), loop."""
    em = ctx.em
    inits = [carried(ctx, v) for v in op.inits]
    views = views_of(ctx, op.inits)
    head, body, exit_ = em.label("while.head"), em.label("while.body"), em.label("while.exit")
    before = em.block
    em.emit(f"br label %{head}")
    em.start_block(head)
    names = [[em.fresh("phi") for _ in registers] for registers in inits]
    types = [phi_type(v) for v, regs in zip(op.inits, inits) for _ in regs]
    lines = [em.placeholder() for _ in _flatten(names)]
    condition_block = op.before.block
    forwarded = lower_region(ctx, condition_block, names, views)
    (go_on,) = forwarded[0]
    em.emit(f"br i1 {go_on}, label %{body}, label %{exit_}")
    results = forwarded[1:]
    result_views = views_of(ctx, condition_block.terminator.operands[1:])
    em.start_block(body)
    yielded = lower_region(ctx, op.after.block, results, result_views)
    check_same_buffers(op, views, views_of(ctx, op.after.block.terminator.operands))
    latch = em.block
    em.emit(f"br label %{head}{_loop_hints(ctx, op)}")
    _fill_phis(
        ctx, _flatten(names), lines, types, [(_flatten(inits), before), (_flatten(yielded), latch)]
    )
    em.start_block(exit_)
    for result, registers, view in zip(op.results, results, result_views):
        bind(ctx, result, registers, view)
