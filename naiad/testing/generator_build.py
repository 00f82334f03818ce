"""Growing a random kernel from a seed: `random_kernel(seed)` draws every choice from one
`random.Random(seed)`, so a seed always gives the same graph and the same source.

The kernel loads one to three inputs, then runs a few statements (operations, reductions, at
most one loop and one branch), then stores every value nothing else read. Operands are drawn
among the values visible at that point, recent ones more often, so the graph grows deep rather
than wide; an operand of the wrong dtype is cast first, which also exercises every cast.
"""

from __future__ import annotations

import random

from . import generator_ops as ops
from .generator_casts import add_narrowed_access
from .generator_dots import add_dot_loop
from .generator_graph import Assign, Branch, Input, KernelSpec, Load, Loop, Store, Value, fits, join

# Scalars every kernel has: the program id and two runtime arguments.
_PID = Value("pid", "int32", "scalar")
_S0 = Value("s0", "int32", "scalar")
_F0 = Value("f0", "float32", "scalar")

# Runtime conditions of the branch: the last one differs between the programs of one launch.
_CONDITIONS = ("flag > 0", "s0 % 3 == 0", "f0 > 0.0", "pid % 2 == 0")

# The loop's induction variable; the updates that change every element of a value, and all.
_K = Value("k", "int32", "scalar")
_CHANGING = ("add", "sub", "mul", "xor")
_UPDATES = tuple(u.name for u in ops.UPDATES)

# How often each kind of statement is drawn (loop and branch bodies skip the inexact ones).
_FAMILIES = {
    "arithmetic": 30,
    "literal": 10,
    "compare": 10,
    "where": 6,
    "unary": 6,
    "conversion": 8,
    "reinterpret": 3,
    "math": 14,
    "reduce": 14,
    "constant": 5,
}

_MAX_STORES = 8

# How often a loop also carries a tensor read through a view before its update (carried_view).
_CARRIED_VIEW_RATE = 0.5


def random_kernel(seed: int) -> KernelSpec:
    """The kernel of `seed`: the same graph, hence the same source, for the same seed."""
    return _Builder(seed).build()


class _Builder:
    """Grows a KernelSpec statement by statement, keeping the values each point can read."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        if self.rng.random() < 0.4:
            rank, blocks = 1, {"BLOCK": self.rng.choice((16, 32, 64, 128))}
        else:
            rank = 2
            blocks = {
                "BLOCK_M": self.rng.choice((2, 4, 8, 16)),
                "BLOCK_N": self.rng.choice((4, 8, 16, 32)),
            }
        self.spec = KernelSpec(seed, rank, blocks)
        self.out: list = self.spec.body  # where statements go now (a loop or branch body)
        self.scopes: list[list[Value]] = [[_PID, _S0, _F0]]
        self.used: set[str] = set()
        self.final: list[Value] = []  # values of inexact operations: only ever stored
        self.exact_only = False  # inside a loop or branch body
        self.count = 0
        # carried_view's choices draw from a stream of their own (as generator_casts.py's do)
        # and make values nothing else reads, so every seed keeps the kernel it had (the seeds
        # that tests and issues name), with those statements added.
        self.side = random.Random(f"naiad-generator-side-{seed}")
        self.side_stores: list[Value] = []

    def build(self) -> KernelSpec:
        self.load_inputs()
        statements = self.rng.randint(5, 12)
        loop_at = self.rng.randrange(statements) if self.rng.random() < 0.6 else None
        branch_at = self.rng.randrange(statements) if self.rng.random() < 0.5 else None
        for i in range(statements):
            if i == loop_at:
                self.loop()
            elif i == branch_at:
                self.branch()
            else:
                self.statement()
        self.store_leaves()
        add_narrowed_access(self.spec)
        add_dot_loop(self.spec)
        return self.spec

    # -- values -----------------------------------------------------------------------------------
    def fresh(self, dtype, shape, row="load", k=None, prefix="v") -> Value:
        self.count += 1
        return Value(f"{prefix}{self.count}", dtype, shape, row, k)

    def emit(self, statement, target: Value) -> Value:
        self.out.append(statement)
        if target.exact:
            self.scopes[-1].append(target)
        else:
            self.final.append(target)
        return target

    def pick(self, accept=lambda v: True) -> Value | None:
        """A visible value that `accept`s: recent ones much more likely (so the graph grows
        deep, and a loop's body reads the load it starts with), and blocks more than scalars."""
        choices = [v for scope in self.scopes for v in scope if accept(v)]
        if not choices:
            return None
        weights = [(i + 1) ** 2 * (1 if v.shape == "scalar" else 3) for i, v in enumerate(choices)]
        value = self.rng.choices(choices, weights)[0]
        self.used.add(value.name)
        return value

    def other_than(self, value: Value, accept=lambda v: True) -> Value:
        """A visible value other than `value` (itself when no other one is accepted)."""
        return self.pick(lambda v: v is not value and accept(v)) or value

    def operand(self, dtypes, accept=lambda v: True) -> Value:
        """A visible value of one of `dtypes`, else any visible value cast to one of them."""
        value = self.pick(lambda v: v.dtype in dtypes and accept(v))
        if value is None:
            value = self.cast(self.pick(accept), self.rng.choice(dtypes))
        return value

    def cast(self, value: Value, dtype: str) -> Value:
        if value.dtype == dtype:
            return value
        target = self.fresh(dtype, value.shape, "cast")
        return self.emit(Assign(target, ops.CAST, (value,), {"dtype": dtype}), target)

    def apply(self, op: ops.OpKind, operands, **params) -> Value:
        """Emit `op` on `operands` (all of the op's dtype, a condition first for `where`)."""
        dtype = operands[-1].dtype
        if op.literal:
            params["c"] = ops.literal(op.literal, dtype, self.rng)
        shape = join(*(v.shape for v in operands))
        target = self.fresh(op.result_dtype(dtype), shape, op.result_row(dtype))
        return self.emit(Assign(target, op, tuple(operands), params), target)

    # -- statements ------------------------------------------------------------------------------
    def statement(self) -> None:
        families = [f for f in _FAMILIES if not (self.exact_only and f == "math")]
        family = self.rng.choices(families, [_FAMILIES[f] for f in families])[0]
        getattr(self, family)()

    def arithmetic(self, choices=ops.ARITHMETIC + ops.COMPARISONS):
        op = self.rng.choice(choices)
        a = self.operand(op.takes)
        if self.exact_only and not ops.is_exact(op.result_row(a.dtype)):
            op = ops.ARITHMETIC[0]  # fp32 `/` is the one inexact binary operation: add instead
        b = self.cast(self.other_than(a), a.dtype)
        self.apply(op, [a, b])

    def compare(self):
        self.arithmetic(ops.COMPARISONS)

    def literal(self):
        op = self.rng.choice(ops.WITH_LITERAL)
        self.apply(op, [self.operand(op.takes)])

    def where(self):
        condition = self.pick(lambda v: v.dtype == ops.BOOL)
        if condition is None:
            self.compare()
            condition = self.pick(lambda v: v.dtype == ops.BOOL)
        a = self.operand(ops.WHERE.takes)
        b = self.cast(self.other_than(a), a.dtype)
        self.apply(ops.WHERE, [condition, a, b])

    def unary(self):
        op = self.rng.choice(ops.UNARY)
        self.apply(op, [self.operand(op.takes)])

    def conversion(self):
        value = self.pick()
        dtype = self.rng.choice([d for d in ops.CAST.takes if d != value.dtype])
        self.cast(value, dtype)

    def reinterpret(self):
        value = self.operand(tuple(ops.BITCASTS))
        dtype = self.rng.choice(ops.BITCASTS[value.dtype])
        target = self.fresh(dtype, value.shape, "bitcast")
        self.emit(Assign(target, ops.BITCAST, (value,), {"dtype": dtype}), target)

    def constant(self):
        dtype = self.rng.choice(ops.DTYPES)
        shape = self.rng.choice(self.shapes())
        target = self.fresh(dtype, shape, ops.FULL.row)
        params = {"shape": self.shape_text(shape), "dtype": dtype}
        params["c"] = ops.edge_literal(dtype, self.rng)
        self.emit(Assign(target, ops.FULL, (), params), target)

    def shapes(self) -> tuple[str, ...]:
        return ("block", "row", "col", "scalar") if self.spec.rank == 2 else ("block", "scalar")

    def math(self):
        op = self.rng.choice(ops.MATH)
        self.apply(op, [self.operand(op.takes)])

    def reduce(self):
        op = self.rng.choice(ops.REDUCTIONS)
        if self.exact_only and op.name == "sum":
            takes = ops.INTS  # a float sum's order differs between back ends
        else:
            takes = op.takes
        value = self.pick(lambda v: v.shape != "scalar" and v.dtype in takes)
        if value is None:
            value = self.operand(takes, lambda v: v.shape != "scalar")
        if value.shape == "scalar":  # nothing but scalars is visible yet
            self.literal()
            return
        axis, shape, k = self.reduction_axis(value.shape)
        dtype = value.dtype
        target = self.fresh(op.result_dtype(dtype), shape, op.result_row(dtype), k)
        self.emit(Assign(target, op, (value,), {"axis": axis}), target)

    def reduction_axis(self, shape: str) -> tuple[int, str, int]:
        """(axis, result shape, reduction length) of reducing a value of `shape`."""
        blocks = self.spec.blocks
        if self.spec.rank == 1:
            return 0, "scalar", blocks["BLOCK"]
        if shape == "block":
            if self.rng.random() < 0.5:
                return 0, "row", blocks["BLOCK_M"]
            return 1, "col", blocks["BLOCK_N"]
        return 0, "scalar", blocks["BLOCK_N" if shape == "row" else "BLOCK_M"]

    def shape_text(self, shape: str) -> str:
        blocks = {"block": "BLOCK_M, BLOCK_N", "row": "BLOCK_N", "col": "BLOCK_M"}
        if self.spec.rank == 1:
            blocks["block"] = "BLOCK"
        return f"[{blocks[shape]}]" if shape != "scalar" else "[]"

    # -- inputs, loop, branch, stores ------------------------------------------------------------
    def load_inputs(self) -> None:
        shapes = ("block", "row", "col") if self.spec.rank == 2 else ("block",)
        for i in range(self.rng.randint(1, 3)):
            dtype = self.rng.choice(ops.DTYPES)
            sign = "-" if dtype not in ops.UNSIGNED and self.rng.random() < 0.3 else ""
            other = sign + ops.literal("small", dtype, self.rng)
            source = Input(f"X{i}", dtype, "block" if i == 0 else self.rng.choice(shapes), other)
            self.spec.inputs.append(source)
            target = self.fresh(dtype, source.shape, prefix="x")
            self.emit(Load(target, source), target)

    def loop(self) -> None:
        """A loop over `trips` with one or two accumulators, each updated once per trip."""
        accumulators = []
        inits = []
        for _ in range(self.rng.randint(1, 2)):
            dtype = self.rng.choice(ops.NUMBERS)
            update = self.rng.choice(ops.updates_for(dtype))
            shape = self.rng.choice(self.shapes())
            acc = self.fresh(dtype, shape, update.result_row(dtype), prefix="acc")
            params = {"shape": self.shape_text(shape), "dtype": dtype}
            params["c"] = ops.literal("small", dtype, self.rng)
            inits.append(Assign(acc, ops.FULL, (), params))
            accumulators.append((acc, update))
        outer, self.out = self.out, []
        self.scopes.append([Value("k", "int32", "scalar"), *(acc for acc, _ in accumulators)])
        source = self.rng.choice(self.spec.inputs)
        moving = self.rng.choice(("mask", "address"))
        target = self.fresh(source.dtype, source.shape, prefix="x")
        self.emit(Load(target, source, moving), target)
        self.exact_only = True
        for _ in range(self.rng.randint(1, 3)):
            self.statement()
        for acc, update in accumulators:
            step = self.other_than(acc, lambda v, a=acc: fits(v.shape, a.shape))
            step = self.cast(step, acc.dtype)
            self.out.append(Assign(acc, update, (acc, step)))
        if self.spec.rank == 2 and self.side.random() < _CARRIED_VIEW_RATE:
            self.carried_view(inits, target)
        body, self.out = self.out, outer
        self.scopes.pop()
        self.exact_only = False
        self.out.append(Loop(tuple(inits), tuple(body)))
        # After the loop an accumulator is a new value: reads inside the body do not count.
        self.used.difference_update(acc.name for acc, _ in accumulators)
        self.scopes[-1].extend(acc for acc, _ in accumulators)

    def carried_view(self, inits: list, load: Value) -> None:
        """Two more accumulators, at the end of a 2-D loop's body: the vector `viewed` is read
        through a broadcast (`acc[None, :]`, or `tl.expand_dims` and `tl.broadcast_to`) into a
        block that updates `other` only after `viewed`'s own update. That read must see the old
        `viewed`: the CPU back end once updated the carried buffer in place before it, the
        broadcast being fused into `other`'s update (issue 13). (1-D kernels have no such view:
        a reshape of a 1-D block back to itself folds away.)"""
        side = self.side
        vector = side.choice(("row", "col"))
        viewed, change = self.side_accumulator(inits, vector, _CHANGING)
        other, update = self.side_accumulator(inits, "block", _UPDATES)
        step = self.cast(load, viewed.dtype)
        if join(vector, step.shape) == "block" and side.random() < 0.5:
            view = viewed  # read as `acc[None, :]` or `acc[:, None]` (generator_render._ref)
        else:
            target = self.fresh(viewed.dtype, "block", ops.EXPAND_BROADCAST.row)
            params = {"axis": int(vector == "col")}
            view = self.emit(Assign(target, ops.EXPAND_BROADCAST, (viewed,), params), target)
        mixed = self.apply(self.side_update(viewed.dtype, _CHANGING), [view, step])
        # `viewed` changes by k + c (never 0) in every element, so that a stale read shows.
        shift = self.fresh("int32", "scalar", "add")
        c = str(side.choice(ops.SMALL_INTS))
        self.out.append(Assign(shift, ops.WITH_LITERAL[0], (_K,), {"c": c}))
        self.out.append(Assign(viewed, change, (viewed, self.cast(shift, viewed.dtype))))
        self.out.append(Assign(other, update, (other, self.cast(mixed, other.dtype))))
        self.side_stores += [viewed, other]

    def side_accumulator(self, inits: list, shape: str, names) -> tuple[Value, ops.OpKind]:
        """A loop accumulator of `shape` and its update (one of `names`), drawn from the side
        stream; its init joins `inits`."""
        dtype = self.side.choice(ops.NUMBERS)
        update = self.side_update(dtype, names)
        acc = self.fresh(dtype, shape, update.result_row(dtype), prefix="acc")
        params = {"shape": self.shape_text(shape), "dtype": dtype}
        params["c"] = ops.literal("small", dtype, self.side)
        inits.append(Assign(acc, ops.FULL, (), params))
        return acc, update

    def side_update(self, dtype: str, names) -> ops.OpKind:
        """One of the updates `names` that keep `dtype`, drawn from the side stream."""
        return self.side.choice([u for u in ops.updates_for(dtype) if u.name in names])

    def branch(self) -> None:
        """`if` on a runtime scalar; each side updates one or two results its own way."""
        bases = [self.operand(ops.NUMBERS) for _ in range(self.rng.randint(1, 2))]
        results = [self.fresh(b.dtype, b.shape, "select", prefix="r") for b in bases]
        sides = []
        for _ in range(2):
            outer, self.out = self.out, []
            self.scopes.append([])
            self.exact_only = True
            for _ in range(self.rng.randint(0, 2)):
                self.statement()
            for base, result in zip(bases, results):
                update = self.rng.choice(ops.updates_for(base.dtype))
                step = self.other_than(base, lambda v, b=base: fits(v.shape, b.shape))
                step = self.cast(step, base.dtype)
                self.out.append(Assign(result, update, (base, step)))
            sides.append(tuple(self.out))
            self.out = outer
            self.scopes.pop()
            self.exact_only = False
        self.out.append(Branch(self.rng.choice(_CONDITIONS), *sides))
        self.scopes[-1].extend(results)

    def store_leaves(self) -> None:
        """Store the inexact values and the values nothing read (at most _MAX_STORES)."""
        leaves = [v for v in self.scopes[0][3:] if v.name not in self.used]
        for i, value in enumerate((self.final + leaves)[:_MAX_STORES]):
            extra = None
            if value.shape != "scalar" and self.rng.random() < 0.25:
                extra = self.pick(lambda v, s=value.shape: v.dtype == ops.BOOL and fits(v.shape, s))
            self.spec.stores.append(Store(value, f"OUT{i}", extra))
        for value in self.side_stores:
            self.spec.stores.append(Store(value, f"OUT{len(self.spec.stores)}"))
