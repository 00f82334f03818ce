"""Grid-stride loops run in row order: one iteration of every program in turn.

Tutorial 02's softmax launches 64 programs, each walking every 64th row
(`for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0))`). A CPU thread runs its
programs one after another, so program 0 reads rows 0, 64, 128, ..., each 256 KiB from the
last, its output scattered as far: on one Zen 4 core 2.96-3.11 ms for 4096 x 1024 f32, where
the same kernel on 4096 programs of one row (rows in order) took 1.85-1.90 (torch 2.49-2.56),
although each next row was prefetched (prefetch.py).

Programs run concurrently in the language: any interleaving of their operations that keeps
each program's own order is an execution of the kernel. So where a kernel is one such loop, the
entry point runs iteration 0 of each program of its range, then iteration 1 of each, and so
on: rows 0, 1, 2, ... on one thread (the pool's launching thread sizes its groups of programs
so that after the first they span most of a short launch: pool_caller_ir.py). The program is
called once per iteration with the iteration's index (`j`): it computes what comes before the
loop again (plain arithmetic and casts of views, cheap), takes `iv = lower + j · step`, runs
the body if `iv < upper`, and tells the entry point whether it did. In one process, one
thread: 2.71-2.87 -> 2.13-2.24 ms (torch 2.49-2.58). A kernel qualifies when its body is that
arithmetic, then one `scf.for` that carries nothing, then the return; the loop's lower bound
comes from the program id and its step from the number of programs (a loop over a row's
columns in a one-row program would be walked column block by column block across rows, worse
than before); and nothing in the loop is an atomic or a print (a spin on another program's
later iteration could wait forever; prints would come in another order than the
one-program-at-a-time order users read).
"""

from __future__ import annotations

from llvmlite import ir

from ....ir import Block
from .loops import ForLoop
from .lower_control import _lower_until_yield

I1 = ir.IntType(1)
I64 = ir.IntType(64)
PROGRAM_IDS = slice(-3, None)  # the kernel's trailing arguments (module.PROGRAM_ARGUMENTS)
PROGRAM_COUNTS = slice(-6, -3)
_REFUSED = ("atomic", "print")
_PURE = ("arith.", "memref.cast")  # what may come before the loop: computed again each call


def grid_stride_loop(func_op):
    """The `scf.for` that makes up `func_op`'s body, where it qualifies (module docstring)."""
    block = func_op.entry_block
    ops = list(block)
    if len(ops) < 2 or ops[-1].name != "func.return" or ops[-1].operands:
        return None
    loop = ops[-2]
    if loop.name != "scf.for" or list(loop.initArgs) or list(loop.results):
        return None
    if not all(not op.regions and op.name.startswith(_PURE) for op in ops[:-2]):
        return None
    arguments = list(block.arguments)
    if not _derived(loop.lowerBound, arguments[PROGRAM_IDS], block):
        return None
    if not _derived(loop.step, arguments[PROGRAM_COUNTS], block):
        return None
    return None if _refused(loop.body) else loop


def _derived(value, sources, block: Block) -> bool:
    """Whether `value` is one of `sources` or computed from one by the block's arithmetic."""
    if any(value is source for source in sources):
        return True
    op = value.defining_op
    if op is None or op.parent is not block:
        return False
    return any(_derived(operand, sources, block) for operand in op.operands)


def _refused(block: Block) -> bool:
    for op in block:
        if any(word in op.name for word in _REFUSED):
            return True
        if op.name == "func.call" and "print" in str(op.attributes.get("callee", "")):
            return True
        if any(_refused(inner) for region in op.regions for inner in region.blocks):
            return True
    return False


def lower_iteration(fl, loop, iteration: ir.Value, ran: ir.Value) -> None:
    """Lower iteration `iteration` (i64) of `loop` alone; store whether it runs into `ran`."""
    b = fl.builder
    lower, upper, step = (fl.value(v) for v in (loop.lowerBound, loop.upperBound, loop.step))
    unsigned = loop.unsignedCmp is not None
    extend = b.zext if unsigned else b.sext
    wide = [v if v.type == I64 else extend(v, I64) for v in (lower, upper, step)]
    at = b.add(wide[0], b.mul(iteration, wide[2]))
    runs = b.icmp_unsigned("<", at, wide[1]) if unsigned else b.icmp_signed("<", at, wide[1])
    b.store(runs, ran)
    with b.if_then(runs):
        iv = at if lower.type == I64 else b.trunc(at, lower.type)
        fl.bind(loop.induction_var, iv)
        fl.loops.append(ForLoop(loop, iv, lower, upper, step, unsigned, interleaved=True))
        _lower_until_yield(fl, loop.body)
        fl.loops.pop()
