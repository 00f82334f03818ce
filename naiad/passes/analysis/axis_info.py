"""AxisInfo: divisibility, contiguity and constancy of every integer and pointer value, the facts
both back ends use to choose vector widths and coalesced layouts (Triton's AxisInfoAnalysis).

    analysis = AxisInfoAnalysis(module)
    analysis.info(ptrs)                    # AxisInfo(divisibility=(16,), contiguity=(1024,), ...)
    analysis.max_vector_width(ptrs)        # 4: a thread may load 4 f32 as one 128-bit access

A sparse forward dataflow over the whole module, as MLIR's SparseForwardDataFlowAnalysis runs
Triton's: a worklist of ops, each computing its results' facts from its operands' with the
rules of axis_info_rules.py and joining them (gcd-like, see axis_info_lattice.join) into what
was known, so facts only weaken and the iteration ends. Where control flow merges the facts
join: `scf.for` iteration arguments and results (the initial values and every `scf.yield`),
`scf.if` and `scf.while` results, block arguments of `cf` branches, and the arguments of a
`tt.func` over its call sites. Function arguments start from their `tt.divisibility`,
`tt.contiguity` and `tt.constancy` attributes (the JIT's "divisible by 16" specialization), and
any op's `tt.*` hint attributes (`tl.multiple_of`, `tl.max_contiguous`, `tl.max_constancy`)
replace what its rule computed.
"""

from __future__ import annotations

from collections import deque

from ...dialects import scf, tt
from ...dialects.base import bit_width
from ...ir import Block, Operation, RankedTensorType, Value, element_type, is_pointer_like
from . import axis_info_shape_rules  # noqa: F401  (registers the shape rules)
from .axis_info_constants import evaluate_constant, integer_width
from .axis_info_lattice import (
    HINTS,
    K_MAX_DIVISOR,
    AxisInfo,
    constant_state,
    entry_state,
    gcd,
    join,
    pessimistic,
    shape_of,
    with_hints,
)
from .axis_info_rules import RULES

__all__ = ["AxisInfo", "AxisInfoAnalysis", "order_from_contiguity", "transfer"]


def transfer(op: Operation, infos: list[AxisInfo]) -> AxisInfo | None:
    """The facts of `op`'s single result from its operands' (None: no rule knows the op)."""
    constant = evaluate_constant(op, infos)
    if constant is not None:
        return constant_state(op.results[0].type, constant)
    rule = RULES.get(type(op))
    info = None if rule is None else rule(op, infos)
    if info is not None and info.constant is not None:
        # A shape op forwarded a known splat: give it its strongest form for the new shape.
        if integer_width(op.results[0].type) is not None:
            return constant_state(op.results[0].type, info.constant)
        return info.replace(constant=None)
    return info


def order_from_contiguity(contiguity) -> list[int]:
    """Dimensions fastest first, as Triton's coalescing orders them: by contiguity, longest
    first, ties going to the later dimension (row-major when nothing is known)."""
    dims = list(range(len(contiguity) - 1, -1, -1))
    return sorted(dims, key=lambda d: -contiguity[d])  # sorted is stable


class AxisInfoAnalysis:
    """Axis facts of every value under `root` (a module or a function), solved on
    construction. Values of any type have facts; those of integer and pointer values are the
    ones that mean something."""

    def __init__(self, root: Operation):
        self._infos: dict[Value, AxisInfo] = {}
        self._pending: deque[Operation] = deque()
        self._queued: set[Operation] = set()
        self._funcs = {op.sym_name.value: op for op in root.walk() if isinstance(op, tt.FuncOp)}
        self._called = {
            self._funcs.get(op.callee.root) for op in root.walk() if isinstance(op, tt.CallOp)
        }
        for op in root.walk():
            self._push(op)
            for region in op.regions:
                for index, block in enumerate(region.blocks):
                    self._seed_arguments(op, block, index)
        self._solve()

    # -- queries

    def info(self, value: Value) -> AxisInfo:
        """The facts of `value`; for a value the analysis never reached (dead code), what its
        own declaration says."""
        found = self._infos.get(value)
        return found if found is not None else entry_state(value)

    def order(self, value: Value) -> list[int]:
        """`value`'s dimensions, fastest first, as coalescing would lay them out."""
        return order_from_contiguity(self.info(value).contiguity)

    def max_vector_width(
        self, ptr: Value, element_bits: int | None = None, dim: int | None = None
    ) -> int:
        """How many elements one thread can access as a single vector through `ptr` (a tensor
        of pointers, or of offsets when `element_bits` is given): along `dim` (by default the
        fastest, `order(ptr)[0]`), min(contiguity, divisibility in elements, the dimension's
        size), at most 128 bits (Triton's getNumElementsPerThread, which the coalescing pass
        and the ld/st.v4 lowering use). Elements narrower than a byte count as bytes."""
        t = ptr.type
        if not isinstance(t, RankedTensorType):
            return 1
        pointer = is_pointer_like(t)
        if element_bits is None:
            if not pointer:
                raise ValueError("element_bits is needed for a tensor of offsets")
            element_bits = bit_width(element_type(t).pointee_type)
        element_bits = max(element_bits, 8)
        info = self.info(ptr)
        d = self.order(ptr)[0] if dim is None else dim
        divisibility = info.divisibility[d]
        if pointer:
            divisibility = max(divisibility // (element_bits // 8), 1)
        aligned = min(divisibility, info.contiguity[d], t.shape[d])
        return max(1, min(aligned, 128 // element_bits))

    def mask_alignment(self, mask: Value, dim: int | None = None) -> int:
        """How many neighbouring lanes of `mask` agree along `dim` (Triton's getMaskAlignment):
        a masked vector access needs that many. Pass the pointer's fastest dimension; by
        default the last one (a mask has no runs to order it by)."""
        if not isinstance(mask.type, RankedTensorType):
            return 1
        info = self.info(mask)
        return max(1, info.constancy[info.rank - 1 if dim is None else dim])

    # -- solving

    def _push(self, op: Operation) -> None:
        if op not in self._queued:
            self._queued.add(op)
            self._pending.append(op)

    def _update(self, value: Value, info: AxisInfo | None) -> None:
        if info is None:
            return
        if info.rank != len(shape_of(value.type)):
            info = pessimistic(value.type)  # a rule's slip must not spread a wrong rank
        old = self._infos.get(value)
        new = join(old, info)
        if new != old:
            self._infos[value] = new
            for user in value.users:
                self._push(user)

    def _seed_arguments(self, op: Operation, block: Block, index: int) -> None:
        """Facts of block arguments that no incoming edge provides."""
        if index > 0 or isinstance(op, scf.ForOp | scf.WhileOp):
            return  # they come from branches, loop entries and yields
        if isinstance(op, tt.FuncOp) and op in self._called:
            for arg in block.arguments:  # the callers say; the attributes bound them
                attrs = op.arg_attrs[arg.index] if op.arg_attrs is not None else None
                if attrs is not None and any(attrs.get(name) is not None for name in HINTS):
                    self._update(arg, with_hints(pessimistic(arg.type), attrs, K_MAX_DIVISOR))
            return
        for arg in block.arguments:
            self._update(arg, entry_state(arg))

    def _solve(self) -> None:
        while self._pending:
            op = self._pending.popleft()
            self._queued.discard(op)
            self._visit(op)

    def _visit(self, op: Operation) -> None:
        if isinstance(op, scf.ForOp):
            self._visit_for(op)
        elif isinstance(op, scf.WhileOp):
            self._flow(op.inits, op.before.block.arguments)
        elif isinstance(op, scf.YieldOp | scf.ConditionOp):
            self._visit_region_exit(op)
        elif op.successors:
            for i, successor in enumerate(op.successors):
                self._flow(op.successor_operands(i) or (), successor.arguments)
        elif isinstance(op, tt.CallOp):
            self._visit_call(op)
        elif op.results and not isinstance(op, scf.IfOp):
            self._visit_plain(op)

    def _flow(self, sources, targets) -> None:
        for source, target in zip(sources, targets):
            self._update(target, self._infos.get(source))

    def _visit_for(self, op: scf.ForOp) -> None:
        lower, step = self._infos.get(op.lowerBound), self._infos.get(op.step)
        if lower is not None and step is not None:
            # lb + k * step: divisible by what divides both.
            iv = pessimistic(op.induction_var.type)
            divisibility = (gcd(lower.divisibility[0], step.divisibility[0]),)
            self._update(op.induction_var, iv.replace(divisibility=divisibility))
        self._flow(op.initArgs, op.region_iter_args)
        self._flow(op.initArgs, op.outs)  # a loop that runs zero times

    def _visit_region_exit(self, op: Operation) -> None:
        parent = op.parent_op()
        if isinstance(parent, scf.ForOp):
            self._flow(op.operands, parent.region_iter_args)
            self._flow(op.operands, parent.outs)
        elif isinstance(parent, scf.IfOp):
            self._flow(op.operands, parent.outs)
        elif isinstance(parent, scf.WhileOp) and isinstance(op, scf.ConditionOp):
            self._flow(op.args, parent.after.block.arguments)
            self._flow(op.args, parent.outs)
        elif isinstance(parent, scf.WhileOp):
            self._flow(op.operands, parent.before.block.arguments)

    def _visit_call(self, op: tt.CallOp) -> None:
        callee = self._funcs.get(op.callee.root)
        if callee is not None and not callee.is_declaration:
            self._flow(op.args, callee.arguments)
        for result in op.results:  # the callee's returns are not followed (as Triton)
            self._update(result, entry_state(result))

    def _visit_plain(self, op: Operation) -> None:
        infos = [self._infos.get(v) for v in op.operands]
        if any(info is None for info in infos):
            return  # an operand is not reached yet: it will bring the op back
        info = transfer(op, infos) if len(op.results) == 1 else None
        for result in op.results:
            self._update(result, with_hints(info or pessimistic(result.type), op.attributes))
