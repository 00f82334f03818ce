"""Regions and returns: `scf.for`, `scf.if`, `scf.while` as LLVM control flow, `return`, and
`cf.assert` as a failure recorded in the launch's status record.

Scalars carried by a region become phi nodes. A tensor carried by a loop lives in a buffer the
loop owns: the initial value is copied in before the loop, each `scf.yield` copies the next
value in (through a temporary when the next value is a view of one of the loop's own buffers,
so that a swap of two carried tensors stays correct), and the loop's results are those buffers.
An `scf.if` with tensor results copies each branch's value into one result buffer. The
generic that makes a carried tensor's next value may write the loop's buffer in place when no
read of the old value, through any view, comes after it (in_place.py).

An accumulator that starts as a splat (`acc = tl.zeros(...)`) and is updated in place by one
elementwise op (`acc += f(x)`) is not filled before an `scf.for`: its only reader takes the
splat on the first iteration and the buffer after (`FirstIterationView`), and the splat is
copied in at the exit only when the loop ran no iteration. Filling it cost a row of a layer
norm a fifth of its time (64 vector stores per 4 KiB accumulator, each row twice).
"""

from __future__ import annotations

from llvmlite import ir

from ....ir import RankedTensorType
from ....middle.linalg.bounds_checks import BOUNDS_ATTRIBUTE
from ..abi import FAULT_ASSERT, FAULT_BOUNDS
from .amx_carried import carried_tiles
from .chunked_loads import enter_chunked_load
from .failures import fail_site, record_failure
from .function import FunctionLowering, lowers
from .in_place import deferred_inits, update_in_place
from .loops import ForLoop
from .lower_linalg import copy_view
from .views import View


def _is_tensor(value) -> bool:
    return isinstance(value.type, RankedTensorType)


def _carried_buffers(fl: FunctionLowering, values) -> list:
    """A loop-owned buffer for each tensor among `values` (None for scalars)."""
    return [fl.buffer(v.type.shape, v.type.element_type) if _is_tensor(v) else None for v in values]


def _copy_into(fl: FunctionLowering, buffers, views) -> None:
    """Parallel copy of `views` into `buffers` (where a buffer is None, a scalar is carried:
    skipped)."""
    owned = {id(buf.pointer) for buf in buffers if buf is not None}
    staged = []
    for buf, view in zip(buffers, views):
        if buf is None or view is buf:
            staged.append(None)
            continue
        if id(view.pointer) in owned:  # may overlap a buffer written below: stage it
            temp = fl.buffer(view.sizes, None, element=view.element)
            copy_view(fl, view, temp)
            view = temp
        staged.append(view)
    for buf, view in zip(buffers, staged):
        if view is not None:
            copy_view(fl, view, buf)


def _enter_loop(fl: FunctionLowering, inits, deferred=frozenset()) -> list:
    """The loop-owned buffers of the carried tensors (None for scalars), holding the inits but
    for the positions in `deferred` (in_place.deferred_inits)."""
    buffers = _carried_buffers(fl, inits)
    views = [fl.value(v) for v in inits]
    kept = [None if i in deferred else buf for i, buf in enumerate(buffers)]
    _copy_into(fl, kept, views)
    return buffers


class FirstIterationView(View):
    """A carried buffer whose elements, on a loop's first iteration, are those of `initial`
    (a splat view) instead: `first` is the loop's i1 "no iteration has run yet"."""

    def __init__(self, buffer: View, initial: View, first: ir.Value):
        super().__init__(
            buffer.pointer, buffer.element, buffer.offset, buffer.sizes, buffer.strides
        )
        self.initial = initial
        self.first = first

    def load(self, b: ir.IRBuilder, indices) -> ir.Value:
        return b.select(self.first, self.initial.load(b, indices), super().load(b, indices))


def _carried(fl: FunctionLowering, inits, buffers, preheader) -> list:
    """At the loop's head: a phi per carried scalar (its init from `preheader`), the buffer
    per carried tensor."""
    carried = []
    for value, buf in zip(inits, buffers):
        if buf is None:
            phi = fl.builder.phi(fl.value(value).type)
            phi.add_incoming(fl.value(value), preheader)
            carried.append(phi)
        else:
            carried.append(buf)
    return carried


def _next_iteration(fl: FunctionLowering, carried, buffers, yielded) -> None:
    """The yielded values become the next iteration's: copied into the buffers, or fed to the
    phis from the current block."""
    _copy_into(fl, buffers, yielded)
    for phi, buf, value in zip(carried, buffers, yielded):
        if buf is None:
            phi.add_incoming(value, fl.builder.block)


@lowers("scf.for")
def _for(fl: FunctionLowering, op) -> None:
    b = fl.builder
    lower, upper, step = (fl.value(v) for v in (op.lowerBound, op.upperBound, op.step))
    inits = list(op.initArgs)
    deferred = deferred_inits(fl, op)
    buffers = _enter_loop(fl, inits, deferred)
    tiles = carried_tiles(fl, op, buffers)
    if tiles is not None:
        tiles.load(fl)
    function = b.function
    header = function.append_basic_block("for.header")
    body = function.append_basic_block("for.body")
    exit_block = function.append_basic_block("for.exit")
    preheader = b.block
    b.branch(header)
    b.position_at_end(header)
    iv = b.phi(lower.type, name="iv")
    iv.add_incoming(lower, preheader)
    first = b.phi(ir.IntType(1), name="first")
    first.add_incoming(ir.Constant(ir.IntType(1), 1), preheader)
    phis = _carried(fl, inits, buffers, preheader)
    if tiles is not None:
        tiles.enter(fl, preheader)
    unsigned = op.unsignedCmp is not None
    below = b.icmp_unsigned("<", iv, upper) if unsigned else b.icmp_signed("<", iv, upper)
    b.cbranch(below, body, exit_block)
    b.position_at_end(body)
    fl.bind(op.induction_var, iv)
    update_in_place(fl, op.body, op.region_iter_args, buffers)
    for i, (argument, carried) in enumerate(zip(op.region_iter_args, phis)):
        if i in deferred:
            carried = FirstIterationView(carried, fl.value(inits[i]), first)
        fl.bind(argument, carried)
    fl.loops.append(ForLoop(op, iv, lower, upper, step, unsigned))
    yielded = _lower_until_yield(fl, op.body)
    fl.loops.pop()
    _next_iteration(fl, phis, buffers, yielded)
    if tiles is not None:
        tiles.next_iteration(fl)
    iv.add_incoming(b.add(iv, step), b.block)
    first.add_incoming(ir.Constant(ir.IntType(1), 0), b.block)
    _mark_back_edge(op, b.branch(header))
    b.position_at_end(exit_block)
    if tiles is not None:
        tiles.leave(fl)
    if deferred:
        _fill_if_never_ran(fl, first, [(buffers[i], fl.value(inits[i])) for i in sorted(deferred)])
    for result, carried in zip(op.results, phis):
        fl.bind(result, carried)


def _fill_if_never_ran(fl: FunctionLowering, first, pairs) -> None:
    """At a loop's exit: copy each deferred init into its buffer if no iteration ran."""
    b = fl.builder
    with b.if_then(first, likely=False):
        for buffer, initial in pairs:
            copy_view(fl, initial, buffer)


def _lower_until_yield(fl: FunctionLowering, block) -> list:
    """Lower a region's ops; the lowered operands of its terminator (`scf.yield`)."""
    for inner in block:
        if inner is block.last_op and inner.name in ("scf.yield", "scf.condition"):
            return [fl.value(v) for v in inner.operands]
        fl.lower_op(inner)
    return []


@lowers("scf.if")
def _if(fl: FunctionLowering, op) -> None:
    b = fl.builder
    results = list(op.results)
    buffers = _carried_buffers(fl, results)
    function = b.function
    then_block = function.append_basic_block("if.then")
    else_block = function.append_basic_block("if.else")
    merge = function.append_basic_block("if.end")
    b.cbranch(fl.value(op.condition), then_block, else_block)
    incoming = []
    for block, region_block in ((then_block, op.then_block), (else_block, op.else_block)):
        b.position_at_end(block)
        yielded = [] if region_block is None else _lower_until_yield(fl, region_block)
        if yielded:
            _copy_into(fl, buffers, yielded)
        incoming.append((b.block, yielded))
        b.branch(merge)
    b.position_at_end(merge)
    for i, (result, buf) in enumerate(zip(results, buffers)):
        if buf is not None:
            fl.bind(result, buf)
            continue
        phi = b.phi(incoming[0][1][i].type)
        for block, yielded in incoming:
            phi.add_incoming(yielded[i], block)
        fl.bind(result, phi)


def _mark_back_edge(op, branch) -> None:
    """A loop marked `tt.disable_licm` (`tl.range(..., disable_licm=True)`,
    `tl.condition(..., disable_licm=True)`) keeps LLVM's loop-invariant code motion out too:
    its back edge carries the loop ID `!{self, !{"llvm.licm.disable"}}`, as on the GPU."""
    if "tt.disable_licm" not in op.attributes:
        return
    module = branch.module
    disable = module.add_metadata([ir.MetaDataString(module, "llvm.licm.disable")])
    # A loop ID names itself, so it is made apart from `add_metadata`, which shares equal tuples.
    loop_id = ir.values.MDValue(module, [], name=str(len(module.metadata)))
    loop_id.operands = (loop_id, disable)
    branch.set_metadata("llvm.loop", loop_id)


@lowers("scf.while")
def _while(fl: FunctionLowering, op) -> None:
    b = fl.builder
    inits = list(op.inits)
    buffers = _enter_loop(fl, inits)
    for inner in op.after.block:
        if inner in fl.plan.chunked:  # a load's runs, the first maybe the whole block
            enter_chunked_load(fl, fl.plan.chunked[inner])
    function = b.function
    before = function.append_basic_block("while.before")
    after = function.append_basic_block("while.after")
    exit_block = function.append_basic_block("while.exit")
    preheader = b.block
    b.branch(before)
    b.position_at_end(before)
    carried = _carried(fl, inits, buffers, preheader)
    for argument, value in zip(op.before.block.arguments, carried):
        fl.bind(argument, value)
    forwarded = _lower_until_yield(fl, op.before.block)
    condition = fl.value(op.before.block.last_op.condition)
    b.cbranch(condition, after, exit_block)
    b.position_at_end(after)
    for argument, value in zip(op.after.block.arguments, forwarded[1:]):
        fl.bind(argument, value)
    yielded = _lower_until_yield(fl, op.after.block)
    _next_iteration(fl, carried, buffers, yielded)
    _mark_back_edge(op, b.branch(before))
    b.position_at_end(exit_block)
    for result, value in zip(op.results, forwarded[1:]):
        fl.bind(result, value)


@lowers("func.return")
def _return(fl: FunctionLowering, op) -> None:
    b = fl.builder
    b.ret_void()
    # Ops after a return (none in converted kernels) would need a block of their own.
    b.position_at_end(b.function.append_basic_block("after.return"))


@lowers("llvm.intr.assume")
def _assume(fl: FunctionLowering, op) -> None:
    """`llvm.assume`: LLVM may fold what the kernel promised (`tl.assume`)."""
    fl.builder.assume(fl.value(op.operands[0]))


@lowers("cf.assert")
def _assert(fl: FunctionLowering, op) -> None:
    """A failed assert claims the status record (first failure wins) and ends the program; a
    bounds check (middle/linalg/bounds_checks.py) reports an out-of-bounds access, with the
    values its report call left in the program's info slots (failures.py)."""
    b = fl.builder
    message = op.msg.value if hasattr(op.msg, "value") else str(op.msg)
    bounds = BOUNDS_ATTRIBUTE in op.attributes
    site = fail_site(fl, op, message, template=bounds)
    failed = b.not_(fl.value(op.operands[0]))
    function = b.function
    fail_block = function.append_basic_block("assert.fail")
    ok_block = function.append_basic_block("assert.ok")
    b.cbranch(failed, fail_block, ok_block)
    b.position_at_end(fail_block)
    with_info = bounds and fl.fault_info is not None
    record_failure(fl, FAULT_BOUNDS if bounds else FAULT_ASSERT, site, with_info)
    b.ret_void()
    b.position_at_end(ok_block)
