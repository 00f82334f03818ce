"""The expression graph of a generated kernel: values, the statements that make them, and the
whole kernel (`KernelSpec`). Plain data: `generator_build` grows it from a seed,
`generator_render` writes it as source.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .generator_ops import OpKind, is_exact


@dataclass(frozen=True, eq=False)
class Value:
    """A named value of the kernel: its dtype (tl's name), its shape ("block"; in 2-D kernels
    also "row", one element per column, and "col", one per row; or "scalar"), and the tolerance
    row of the operation that made it (with `k`, the reduction length, for norm-wise rows)."""

    name: str
    dtype: str
    shape: str
    row: str = "load"
    k: int | None = None

    @property
    def exact(self) -> bool:
        return is_exact(self.row)


@dataclass(frozen=True)
class Input:
    """An array argument `name` of `dtype`, laid out like a value of `shape`, and the literal
    its masked-off lanes read as."""

    name: str
    dtype: str
    shape: str
    other: str


@dataclass(frozen=True)
class Assign:
    """`target = op(operands)`: one node of the graph; `params` fill the op's template beyond
    its operands (`dtype` of a cast, `axis` of a reduction, `c` of a literal)."""

    target: Value
    op: OpKind
    operands: tuple[Value, ...] = ()
    params: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Load:
    """`target = tl.load(...)` of `source` under its bounds mask. In a loop, `moving` makes the
    mask ("mask": lanes past `n - k` read `other`) or the addresses ("address": rotated by `k`)
    depend on the induction variable `k`."""

    target: Value
    source: Input
    moving: str | None = None


@dataclass(frozen=True)
class Loop:
    """`for k in range(0, trips)`: `inits` run before it and make the accumulators, which the
    last statements of `body` update."""

    inits: tuple[Assign, ...]
    body: tuple


@dataclass(frozen=True)
class Branch:
    """`if condition:` `then` `else:` `orelse`; both sides end by assigning every result."""

    condition: str
    then: tuple
    orelse: tuple


@dataclass(frozen=True)
class Store:
    """Store `value` to the output argument `output` under its bounds mask, narrowed by
    `extra_mask` (an int1 value) when given."""

    value: Value
    output: str
    extra_mask: Value | None = None


@dataclass
class KernelSpec:
    """One generated kernel: its statements, array inputs and stores, the constexpr block
    sizes, and whether it is 1-D (`BLOCK`) or 2-D (`BLOCK_M` x `BLOCK_N`)."""

    seed: int
    rank: int
    blocks: dict[str, int]
    inputs: list[Input] = field(default_factory=list)
    body: list = field(default_factory=list)
    stores: list[Store] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"generated_{self.seed}"


def join(*shapes: str) -> str:
    """The shape of an elementwise result of operands of `shapes` (row with col is a block)."""
    kinds = set(shapes) - {"scalar"}
    if not kinds:
        return "scalar"
    return kinds.pop() if len(kinds) == 1 else "block"


def fits(shape: str, target: str) -> bool:
    """True when a value of `shape` broadcasts to `target` without widening it."""
    return join(shape, target) == target
