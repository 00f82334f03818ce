"""The state of one function's lowering, and the table of op lowerings.

Every IR value maps to a list of LLVM operands: one per register of its tensor's layout, or one
for a scalar. An op family registers its lowerings with `@lowers("arith.addf", ...)`; a lowering
reads its operands with `ctx[value]` and records its results with `ctx[result] = registers`.
"""

from __future__ import annotations

from ....errors import InternalError
from ....ir import RankedTensorType
from ....ir.op_table import OpTable
from ....passes.diagnostics import unsupported
from . import barriers
from .emitter import Emitter
from .indexing import layout_of

LOWERINGS = OpTable("NVIDIA lowering")
lowers = LOWERINGS.rule  # the decorator: `fn(ctx, op)` lowers the ops it names


class Context:
    """One function's lowering: the emitter, the values, and what the module says."""

    def __init__(self, num_warps: int, capability: int, axis_info, allocated: int | None = None):
        self.em = Emitter()
        self.num_warps = num_warps
        self.capability = capability
        self.axis_info = axis_info
        self.fp_fusion = True  # float adds and multiplies may fuse into fma (enable_fp_fusion)
        self.values: dict = {}
        # The bytes allocate-shared-memory gave the module (None: the pass did not run, and
        # every scratch starts at 0), and the bytes of shared memory the kernel needs.
        self.allocated = allocated
        self.shared_bytes = allocated or 0
        self._op = None  # the op being lowered
        self.barrier_owed = False  # a reduction's scratch is still being read (barriers.py)
        self.stores_pending = False  # shared buffers stored, not yet behind a barrier
        self.async_proxy_stores = False  # some of them into buffers wgmma reads (barriers.py)
        # Rings whose slots mbarriers hand back to a warp-specialized producer (partitions.py):
        # a dot reading only them owes no barrier.
        self.handed_back: frozenset = frozenset()
        self.buffer_offsets: dict = {}  # local_alloc -> offset, when the pass did not run
        self.bounds = None  # debug mode's bounds checks (bounds.py), when compiled with debug
        # The kernel gets a memory-bound floor on CTAs per SM, a register cap (occupancy.py).
        self.register_floor = False
        self.lines = None  # the source lines of the instructions (lines.py), with line info

    def __getitem__(self, value) -> list[str]:
        return self.values[value]

    def __setitem__(self, value, registers: list[str]) -> None:
        self.values[value] = list(registers)

    def need_shared(self, nbytes: int) -> None:
        """Ask for `nbytes` of shared scratch for the op being lowered; its accesses
        (`em.shared_address`) then start where allocate-shared-memory placed it. An op the
        pass did not place (it sets no `allocation.size`) gets room above every
        allocation (scratch users are bracketed by barriers, so they may share that room).
        Without the pass, every scratch starts at 0."""
        base = 0
        if self.allocated is not None:
            base = self._allocated_offset(nbytes)
        self.em.scratch_base = base
        self.shared_bytes = max(self.shared_bytes, base + nbytes)

    def _allocated_offset(self, nbytes: int) -> int:
        op = self._op
        offset = op.attributes.get("allocation.offset")
        if offset is None:  # unsized, or placed after the pass ran: above every buffer
            return self.allocated
        size = op.attributes.get("allocation.size")
        planned = None if size is None else size.value
        if planned is None or nbytes > planned:
            raise InternalError(
                f"`{op.name}` needs {nbytes} bytes of shared scratch; "
                f"allocate-shared-memory planned {planned}"
            )
        return int(offset.value)

    def lower_op(self, op) -> None:
        fn = LOWERINGS.get(op.name)
        if fn is None:
            unsupported(op, f"the NVIDIA back end cannot lower `{op.name}` yet")
        outer, self._op = self._op, op
        if self.lines is None:
            barriers.lower(self, op, fn)
        else:
            outer_dbg = self.lines.enter(op)
            barriers.lower(self, op, fn)
            if self.lines.variables:
                self.lines.describe(self, op)
            self.em.dbg = outer_dbg
        self._op = outer

    def lower_block(self, block) -> None:
        for op in block.ops:
            self.lower_op(op)


def register_count(t) -> int:
    """How many registers per thread hold a value of type `t` (1 for a scalar)."""
    if isinstance(t, RankedTensorType):
        return layout_of(t).in_dim_size("register")
    return 1
