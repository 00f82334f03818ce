"""The reference evaluator: runs a `tt.func` of a TTIR module op by op on NumPy.

    results = evaluate(module, "add_kernel", [x, y, out, n], grid=(4,))

Every program of the grid runs to its end before the next starts, in increasing linear program
id (x fastest), as the interpreter and every back end start them. Values live in one dictionary
per function call (SSA values are distinct objects, so nested regions share it); control flow
(`scf.for/if/while`, `cf.br/cond_br` between blocks, `tt.call`, `tt.return`) is here, the
meaning of every other op in the handler table filled by `elementwise`, `memory_ops`,
`shared_ops` and `tensor_ops`. Memory is the interpreter's: its `Memory`, `Buffer`s and builder.
"""

from __future__ import annotations

import numpy as np

from ...dialects.tt.func import FuncOp
from ...ir import file_line_col, lookup_symbol
from ...language.semantic.program import BlockHasNoScalarValue
from ..interpreter.builder import InterpreterBuilder
from ..interpreter.memory import Memory
from . import elementwise, memory_ops, shared_ops, tensor_ops  # noqa: F401 (they fill HANDLERS)
from .arguments import HostCopies, bind_arguments
from .errors import HANDLERS, EvaluationError, UnsupportedOpError, handles
from .values import int_width, scalar_value

# Terminators that leave their region, giving their operands to the op that ran it.
_EXITS = frozenset(
    {
        "scf.yield",
        "scf.condition",
        "tt.return",
        "tt.reduce.return",
        "tt.scan.return",
        "tt.map_elementwise.return",
        "ttg.warp_yield",
        "ttg.warp_return",
    }
)


def evaluate(module, func_name: str, args, grid=(1,), *, debug: bool = False, out=print):
    """Run `@func_name` of `module` once per program of `grid`, on NumPy.

    Args:
        module: a `builtin.module` holding the function (and any function it calls).
        func_name: the `tt.func`'s symbol name.
        args: one value per function argument, in order (or a mapping by argument name):
            arrays (NumPy, torch tensors, anything the interpreter accepts) for pointers,
            Python numbers for scalars, `TensorDescriptor`s for `!tt.tensordesc`.
        grid: the launch grid, 1 to 3 sizes.
        debug: check `llvm.intr.assume` conditions (`tt.assert` is always checked).
        out: where `tt.print` writes its lines.

    Returns:
        What each program returned (a tuple of values, empty for a kernel), in program order.
        Stores went to the argument arrays, exactly as the interpreter writes them.

    Raises:
        UnsupportedOpError for an op the evaluator has no meaning for (it names the op);
        EvaluationError for a module or arguments it cannot run; the interpreter's errors
        (an out-of-bounds access naming the argument, a failed assert) with a note naming the
        op and its location.
    """
    func = lookup_symbol(module, func_name)
    if not isinstance(func, FuncOp):
        raise EvaluationError(f"the module has no tt.func named @{func_name}")
    grid = _grid(grid)
    memory, copies = Memory(), HostCopies()
    values = bind_arguments(func, args, memory, copies)
    evaluator = Evaluator(module, memory, grid, debug, out)
    results = []
    with np.errstate(all="ignore"):
        try:
            for z in range(grid[2]):
                for y in range(grid[1]):
                    for x in range(grid[0]):
                        evaluator.builder.pid = (x, y, z)
                        results.append(tuple(evaluator.call(func, values)))
        finally:
            copies.write_back()
    return results


def _grid(grid) -> tuple[int, int, int]:
    sizes = (grid,) if isinstance(grid, int) else tuple(int(g) for g in grid)
    if not 1 <= len(sizes) <= 3 or any(g < 0 for g in sizes):
        raise EvaluationError(f"a grid has 1 to 3 non-negative sizes, got {grid!r}")
    return (*sizes, 1, 1)[:3]


class Evaluator:
    """The state of one launch: the interpreter's builder (memory, grid, program id), the
    module (for calls) and the values of the function running now."""

    def __init__(self, module, memory: Memory, grid, debug: bool, out=print):
        self.module = module
        self.memory = memory
        self.builder = InterpreterBuilder(memory, grid, debug, out)
        self.env: dict = {}
        self.constants: dict = {}  # arith.constant op -> its value
        self.combining = 0  # > 0 inside a combine region, where values may be whole slices

    def value(self, v):
        """The value of IR value `v` (None for an absent optional operand)."""
        return None if v is None else self.env[v]

    def call(self, func: FuncOp, args) -> list:
        if func.is_declaration:
            raise EvaluationError(f"@{func.sym_name.value} is a declaration: it has no body")
        caller, self.env = self.env, {}
        try:
            return self.run_region(func.body, args)[1]
        finally:
            self.env = caller

    def run_region(self, region, args):
        """Run `region` from its entry block with `args`, following branches between its
        blocks; returns the exiting terminator and its operands' values."""
        block = region.blocks[0]
        env = self.env
        while True:
            for arg, v in zip(block.arguments, args):
                env[arg] = v
            for op in block:
                name = op.name
                if name == "cf.br":
                    block, args = op.dest, [env[v] for v in op.operands]
                    break
                if name == "cf.cond_br":
                    taken = 0 if self.scalar(env[op.condition], op) else 1
                    block = op.successors[taken]
                    args = [env[v] for v in op.successor_operands(taken)]
                    break
                if name in _EXITS:
                    return op, [env[v] for v in op.operands]
                self.execute(op)
            else:
                raise EvaluationError(f"a block of '{region.parent.name}' has no terminator")

    def execute(self, op) -> None:
        handler = HANDLERS.get(op.name)
        if handler is None:
            raise UnsupportedOpError(
                f"the reference evaluator has no meaning for '{op.name}'{_where(op)}"
            )
        env = self.env
        try:
            result = handler(self, op, [env[v] for v in op.operands])
        except BlockHasNoScalarValue:
            raise
        except Exception as exc:
            if not getattr(exc, "_naiad_evaluated_at", False):
                exc._naiad_evaluated_at = True
                exc.add_note(f"(while the reference evaluator ran '{op.name}'{_where(op)})")
            raise
        results = op.results
        if isinstance(result, list):  # one value per result
            for r, v in zip(results, result):
                env[r] = v
        elif results:
            env[results[0]] = result

    def scalar(self, value, op):
        """A control-flow operand as one Python value: inside a combine region running on
        slices, BlockHasNoScalarValue makes the interpreter retry one element at a time."""
        if np.ndim(value) != 0:
            if self.combining:
                raise BlockHasNoScalarValue()
            raise EvaluationError(
                f"'{op.name}' needs a scalar operand, got shape {np.shape(value)}"
            )
        return np.asarray(value).item()

    def run_combine(self, region, args) -> list:
        """Run a combine (or scalar) region on arrays; its values may be whole slices."""
        self.combining += 1
        try:
            return self.run_region(region, [np.asarray(a) for a in args])[1]
        finally:
            self.combining -= 1

    def combiner(self, region):
        """The interpreter's `combine(lhs, rhs, shape)` for a reduce or scan region."""
        return lambda lhs, rhs, shape: self.run_combine(region, [*lhs, *rhs])


def _where(op) -> str:
    loc = file_line_col(op.location)
    return "" if loc is None else f" at {loc.filename}:{loc.line}:{loc.col}"


# -- structured control flow and calls -------------------------------------------------------------
@handles("scf.for")
def scf_for(ev: Evaluator, op, operands):
    lower, upper, step, *carried = operands
    iv_type = op.lowerBound.type
    width = int_width(iv_type)
    as_unsigned = op.unsignedCmp is not None
    iv, end, step = (ev.scalar(x, op) for x in (lower, upper, step))
    if as_unsigned:
        iv, end = iv % (1 << width), end % (1 << width)
    while iv < end:
        carried = ev.run_region(op.region, [scalar_value(iv, iv_type), *carried])[1]
        iv = int(scalar_value(iv + step, iv_type))  # the increment wraps, as `arith.addi`
        if as_unsigned:
            iv %= 1 << width
    return carried


@handles("scf.if")
def scf_if(ev: Evaluator, op, operands):
    region = op.thenRegion if ev.scalar(operands[0], op) else op.elseRegion
    if not region.blocks:
        return []
    return ev.run_region(region, [])[1]


@handles("scf.while")
def scf_while(ev: Evaluator, op, operands):
    carried = operands
    while True:
        condition, *args = ev.run_region(op.before, carried)[1]
        if not ev.scalar(condition, op):
            return args
        carried = ev.run_region(op.after, args)[1]


@handles("ttg.warp_specialize")
def warp_specialize(ev: Evaluator, op, operands):
    """The default region, then each partition with the captures as its arguments: on a GPU
    they run at once, which gives the same values where they do not race (as the regions of
    a correct kernel do not, or synchronize through memory a program cannot wait on here)."""
    results = ev.run_region(op.defaultRegion, [])[1]
    for block in op.partition_blocks:
        ev.run_region(block.parent, operands)
    return results


@handles("tt.call")
def tt_call(ev: Evaluator, op, operands):
    callee = lookup_symbol(ev.module, op.callee)
    if not isinstance(callee, FuncOp):
        raise EvaluationError(f"'tt.call' of @{op.callee.root}: no such tt.func in the module")
    return ev.call(callee, operands)
