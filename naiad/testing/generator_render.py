"""A generated kernel as Python source, and the arguments of one launch of it.

The source is a whole module: a `@naiad.jit` function whose parameters are the input arrays
`X<i>`, the output arrays `OUT<i>`, the sizes (`m` rows and `n` columns in 2-D, `n` lanes in
1-D), the runtime scalars `s0` (int), `f0` (float), `flag` and `trips` (the loop's trip count),
then the constexpr block sizes. In 2-D, program `pid` covers rows `pid * BLOCK_M ...` and every
column (`n <= BLOCK_N`); a block array is `m x n`, a row array holds `n` elements and a column
array `m`. Outputs of row shape hold one row per program, scalar outputs one element per program.
"""

from __future__ import annotations

import numpy as np

from . import generator_dots
from .generator_arrays import numpy_dtype, random_array
from .generator_dots import DotLoop
from .generator_graph import Assign, Branch, KernelSpec, Load, Loop, Store, Value, join

_INDENT = "    "

# Index expressions, bounds masks and address offsets per (rank, shape).
_OFFSETS = {
    (2, "block"): "rows[:, None] * n + cols[None, :]",
    (2, "row"): "cols",
    (2, "col"): "rows",
    (1, "block"): "offs",
}
_MASKS = {
    (2, "block"): "mask",
    (2, "row"): "cols < n",
    (2, "col"): "rows < m",
    (1, "block"): "mask",
}
# A load in a loop: lanes past `extent - k` read `other`, or addresses rotate by k.
_MOVING_MASKS = {
    (2, "block"): "mask & (cols[None, :] < n - k)",
    (2, "row"): "cols < n - k",
    (2, "col"): "rows < m - k",
    (1, "block"): "offs < n - k",
}
_MOVING_OFFSETS = {
    (2, "block"): "rows[:, None] * n + (cols[None, :] + k) % n",
    (2, "row"): "(cols + k) % n",
    (2, "col"): "(rows + k) % m",
    (1, "block"): "(offs + k) % n",
}
_STORE_OFFSETS = {
    **_OFFSETS,
    (2, "row"): "pid * n + cols",
    (2, "scalar"): "pid",
    (1, "scalar"): "pid",
}

_PROLOGUE = {
    1: ("pid = tl.program_id(0)", "offs = pid * BLOCK + tl.arange(0, BLOCK)", "mask = offs < n"),
    2: (
        "pid = tl.program_id(0)",
        "rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)",
        "cols = tl.arange(0, BLOCK_N)",
        "mask = (rows[:, None] < m) & (cols[None, :] < n)",
    ),
}


def render(spec: KernelSpec) -> str:
    """The source of the module holding `spec`'s kernel."""
    dots = dot_loops(spec)
    arrays = [i.name for i in spec.inputs] + [s.output for s in spec.stores]
    arrays += [name for loop in dots for name in loop.arrays]
    sizes = ["m", "n"] if spec.rank == 2 else ["n"]
    sizes += [name for loop in dots for name in loop.scalars]
    blocks = {**spec.blocks, **{k: v for loop in dots for k, v in loop.blocks.items()}}
    constexprs = [f"{name}: tl.constexpr" for name in blocks]
    lines = [
        f'"""Kernel {spec.name}, made by naiad.testing.generator from seed {spec.seed}."""',
        "",
        "import naiad",
        "import naiad.language as tl",
        "",
        "",
        "@naiad.jit",
        f"def {spec.name}(",
        _INDENT + ", ".join(arrays) + ",",
        _INDENT + ", ".join([*sizes, "s0", "f0", "flag", "trips"]) + ",",
        _INDENT + ", ".join(constexprs) + ",",
        "):",
    ]
    lines += [_INDENT + line for line in _PROLOGUE[spec.rank]]
    _statements(spec, spec.body, 1, lines)
    for store in spec.stores:
        lines.append(_INDENT + _store(spec, store))
    return "\n".join(lines) + "\n"


def _statements(spec: KernelSpec, statements, depth: int, lines: list) -> None:
    pad = _INDENT * depth
    for statement in statements:
        if isinstance(statement, Assign):
            lines.append(pad + _assign(spec, statement))
        elif isinstance(statement, Load):
            lines.append(pad + _load(spec, statement))
        elif isinstance(statement, Loop):
            _statements(spec, statement.inits, depth, lines)
            lines.append(pad + "for k in range(0, trips):")
            _statements(spec, statement.body, depth + 1, lines)
        elif isinstance(statement, DotLoop):
            lines += [pad + line for line in generator_dots.source(statement)]
        elif isinstance(statement, Branch):
            lines.append(pad + f"if {statement.condition}:")
            _statements(spec, statement.then, depth + 1, lines)
            lines.append(pad + "else:")
            _statements(spec, statement.orelse, depth + 1, lines)
        else:
            raise TypeError(f"not a statement of a generated kernel: {statement!r}")


def _ref(spec: KernelSpec, value: Value, shape: str) -> str:
    """`value` where an operand of `shape` is read: row and column vectors broadcast into a
    2-D block explicitly, as a user writes them."""
    if spec.rank == 2 and shape == "block" and value.shape in ("row", "col"):
        return value.name + ("[None, :]" if value.shape == "row" else "[:, None]")
    return value.name


def _assign(spec: KernelSpec, node: Assign) -> str:
    shape = join(*(v.shape for v in node.operands)) if node.operands else node.target.shape
    operands = [_ref(spec, v, shape) for v in node.operands]
    return f"{node.target.name} = {node.op.template.format(*operands, **node.params)}"


def _load(spec: KernelSpec, node: Load) -> str:
    key = (spec.rank, node.source.shape)
    offsets, mask = _OFFSETS[key], _MASKS[key]
    if node.moving == "mask":
        mask = _MOVING_MASKS[key]
    elif node.moving == "address":
        offsets = _MOVING_OFFSETS[key]
    source = node.source
    return (
        f"{node.target.name} = tl.load({source.name} + {offsets}, mask={mask}, "
        f"other={source.other})"
    )


def _store(spec: KernelSpec, store: Store) -> str:
    key = (spec.rank, store.value.shape)
    address = f"{store.output} + {_STORE_OFFSETS[key]}"
    mask = None if store.value.shape == "scalar" else _MASKS[key]
    if store.extra_mask is not None:
        extra = _ref(spec, store.extra_mask, store.value.shape)
        mask = f"{mask} & {extra}" if mask == "mask" else f"({mask}) & {extra}"
    masked = "" if mask is None else f", mask={mask}"
    return f"tl.store({address}, {store.value.name}{masked})"


# -- arguments -------------------------------------------------------------------------------------
def dot_loops(spec: KernelSpec) -> list[DotLoop]:
    """The dot loops of `spec` (generator_dots.py), at the top level of its body."""
    return [s for s in spec.body if isinstance(s, DotLoop)]


def programs(spec: KernelSpec, args: dict) -> int:
    """The number of programs of a launch with `args`."""
    if spec.rank == 2:
        return -(-args["m"] // spec.blocks["BLOCK_M"])
    return -(-args["n"] // spec.blocks["BLOCK"])


def arguments(spec: KernelSpec, rng: np.random.Generator) -> dict:
    """Every argument of one launch, by name: random inputs (never zero), sizes with a partial
    last block, outputs zeroed (the harness poisons them) and random scalars."""
    count = int(rng.integers(1, 4))
    if spec.rank == 2:
        block_m, block_n = spec.blocks["BLOCK_M"], spec.blocks["BLOCK_N"]
        m = int(rng.integers((count - 1) * block_m + 1, count * block_m + 1))
        n = int(rng.integers(min(2, block_n), block_n + 1))
        sizes = {"m": m, "n": n}
        extents = {"block": (m, n), "row": (n,), "col": (m,)}
        output_extents = {**extents, "row": (count, n), "scalar": (count,)}
    else:
        block = spec.blocks["BLOCK"]
        n = int(rng.integers((count - 1) * block + 1, count * block + 1))
        sizes = {"n": n}
        extents = {"block": (n,)}
        output_extents = {"block": (n,), "scalar": (count,)}
    args = {i.name: random_array(i.dtype, extents[i.shape], rng) for i in spec.inputs}
    for store in spec.stores:
        shape = output_extents[store.value.shape]
        args[store.output] = np.zeros(shape, numpy_dtype(store.value.dtype))
    args.update(sizes)
    args["s0"] = int(rng.integers(2, 40))  # never 1: the compiler would make a 1 a constant
    args["f0"] = float(np.float32(rng.choice([-1.0, 1.0]) * rng.uniform(0.25, 4.0)))
    args["flag"] = int(rng.choice([-2, 0, 2, 3]))
    args["trips"] = int(rng.choice([0, 2, 3, 4]))
    args.update(spec.blocks)
    for loop in dot_loops(spec):  # drawn last: the arguments of the rest stay as they were
        args.update(generator_dots.arguments(loop, count, rng))
    return args
