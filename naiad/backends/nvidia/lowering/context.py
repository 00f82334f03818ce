"""The state of one function's lowering, and the table of op lowerings.

Every IR value maps to a list of LLVM operands: one per register of its tensor's layout, or one
for a scalar. An op family registers its lowerings with `@lowers("arith.addf", ...)`; a lowering
reads its operands with `ctx[value]` and records its results with `ctx[result] = registers`.
"""

from __future__ import annotations

from collections.abc import Callable

from naiad.ir import RankedTensorType

from ....passes.diagnostics import unsupported
from .emitter import Emitter
from .indexing import layout_of

LOWERINGS: dict[str, Callable] = {}


def lowers(*names: str):
    """Register the decorated `fn(ctx, op)` as the lowering of ops named `names`."""

    def register(fn):
        for name in names:
            LOWERINGS[name] = fn
        return fn

    return register


class Context:
    """One function's lowering: the emitter, the values, and what the module says."""

    def __init__(self, num_warps: int, capability: int, axis_info):
        self.em = Emitter()
        self.num_warps = num_warps
        self.capability = capability
        self.axis_info = axis_info
        self.values: dict = {}
        self.shared_bytes = 0  # the largest scratch any op needs

    def __getitem__(self, value) -> list[str]:
        return self.values[value]

    def __setitem__(self, value, registers: list[str]) -> None:
        self.values[value] = list(registers)

    def need_shared(self, nbytes: int) -> None:
        """Ask for `nbytes` of the shared scratch (one region, reused by every op: each
        user ends with a barrier before the next may write)."""
        self.shared_bytes = max(self.shared_bytes, nbytes)

    def lower_op(self, op) -> None:
        fn = LOWERINGS.get(op.name)
        if fn is None:
            unsupported(op, f"the NVIDIA back end cannot lower `{op.name}` yet")
        fn(self, op)

    def lower_block(self, block) -> None:
        for op in block.ops:
            self.lower_op(op)


def register_count(t) -> int:
    """How many registers per thread hold a value of type `t` (1 for a scalar)."""
    if isinstance(t, RankedTensorType):
        return layout_of(t).in_dim_size("register")
    return 1
