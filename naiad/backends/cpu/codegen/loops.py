"""Counted loops in llvmlite IR, the shape LLVM's loop passes expect.

    with counted_loop(b, start, stop) as i:      # for (i = start; i < stop; ++i)
        ...                                       # b is positioned in the body

The loop is rotated (a guard, then a do-while body whose latch tests `i + step < stop`), with
the induction variable a phi in the body header: the canonical form the loop vectorizer and
unroller recognize without having to rotate it themselves. A loop whose bounds are constants
that make it empty branches past its body, which is then unreachable.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from llvmlite import ir

I64 = ir.IntType(64)


def as_value(value) -> ir.Value:
    """An i64 constant for a Python int; an llvmlite value unchanged."""
    return ir.Constant(I64, value) if isinstance(value, int) else value


@contextmanager
def counted_loop(
    b: ir.IRBuilder, start, stop, step: int = 1, name: str = "i", at_least_once: bool = False
) -> Iterator[ir.Value]:
    """A loop over `start <= i < stop` by `step` (> 0); `b` ends after the loop. Where the
    caller knows `start < stop` (`at_least_once`), the body is entered unguarded, so that it
    dominates the code after the loop, which may use the values of its last iteration."""
    start, stop = as_value(start), as_value(stop)
    function = b.function
    body = function.append_basic_block(f"{name}.body")
    done = function.append_basic_block(f"{name}.done")
    entry = b.block
    if at_least_once:
        b.branch(body)
    elif not (isinstance(start, ir.Constant) and isinstance(stop, ir.Constant)):
        b.cbranch(b.icmp_signed("<", start, stop), body, done)
    elif start.constant < stop.constant:
        b.branch(body)
    else:
        # Known never to run (an empty box): the body is still made, since the caller's code
        # goes there, but nothing enters it, so the phi names no entry (LLVM requires one
        # entry per predecessor) and the unreachable body is deleted by LLVM.
        b.branch(done)
        entry = None
    b.position_at_end(body)
    i = b.phi(I64, name=name)
    if entry is not None:
        i.add_incoming(start, entry)
    yield i
    following = b.add(i, ir.Constant(I64, step), name=f"{name}.next", flags=("nsw",))
    i.add_incoming(following, b.block)
    b.cbranch(b.icmp_signed("<", following, stop), body, done)
    b.position_at_end(done)


def carrying_loop(b: ir.IRBuilder, start, stop, carried: list[list], step, name: str) -> list:
    """A counted loop over `start <= i < stop`, which the caller knows runs, carrying the
    values of `carried` (lists of values) in phis: `step(i, current)` gives their next values
    from the current ones, list for list. Returns their values after the last iteration."""
    entry = b.block
    with counted_loop(b, start, stop, name=name, at_least_once=True) as i:
        phis = [[b.phi(v.type) for v in values] for values in carried]
        for phi_list, values in zip(phis, carried):
            for phi, value in zip(phi_list, values):
                phi.add_incoming(value, entry)
        updated = step(i, phis)
        latch = b.block
        for phi_list, values in zip(phis, updated):
            for phi, value in zip(phi_list, values):
                phi.add_incoming(value, latch)
    return updated


@contextmanager
def loop_nest(b: ir.IRBuilder, sizes, name: str = "d") -> Iterator[list[ir.Value]]:
    """Nested counted loops over `0 <= i_k < sizes[k]`, the last dimension innermost."""
    indices: list[ir.Value] = []

    @contextmanager
    def level(k: int):
        if k == len(sizes):
            yield indices
            return
        with counted_loop(b, 0, sizes[k], name=f"{name}{k}") as i:
            indices.append(i)
            with level(k + 1) as inner:
                yield inner
            indices.pop()

    with level(0) as all_indices:
        yield all_indices


@contextmanager
def if_then(b: ir.IRBuilder, condition: ir.Value, name: str = "then") -> Iterator[None]:
    """`if (condition) { ... }`; `b` continues after it."""
    function = b.function
    then = function.append_basic_block(name)
    after = function.append_basic_block(f"{name}.end")
    b.cbranch(condition, then, after)
    b.position_at_end(then)
    yield
    if not b.block.is_terminated:
        b.branch(after)
    b.position_at_end(after)


def trip_count(b: ir.IRBuilder, lower, upper, step, unsigned: bool) -> ir.Value:
    """The iterations of a loop from `lower` below `upper` by `step`, as an i64: what a
    store in its body is counted by when the launch decides to stream (streaming.py). The
    divisor is at least 1, so that a step of 0 divides nothing."""
    extend = b.zext if unsigned else b.sext
    if lower.type != I64:
        lower, upper, step = (extend(v, I64) for v in (lower, upper, step))
    below = b.icmp_unsigned("<", lower, upper) if unsigned else b.icmp_signed("<", lower, upper)
    one = ir.Constant(I64, 1)
    step = b.select(b.icmp_signed(">", step, one), step, one)
    span = b.sub(b.add(b.sub(upper, lower), step), one)
    return b.select(below, b.udiv(span, step), ir.Constant(I64, 0))


@dataclass(frozen=True)
class ForLoop:
    """An `scf.for` whose body is being lowered, for what its ops ask of it: its trips (a
    store deciding whether to stream) or its next induction value (a load prefetching), made
    where they are asked from its bounds, which dominate the body; nothing is made for a loop
    that no one asks (a kernel's IR length decides how LLVM optimizes it: compiler.py)."""

    op: object  # the scf.for
    iv: ir.Value
    lower: ir.Value
    upper: ir.Value
    step: ir.Value
    unsigned: bool
    interleaved: bool = False  # one iteration a call, programs in turn (interleave.py)

    def trips(self, b: ir.IRBuilder) -> ir.Value:
        return trip_count(b, self.lower, self.upper, self.step, self.unsigned)

    def following(self, b: ir.IRBuilder) -> ir.Value:
        """The next iteration's induction value."""
        return b.add(self.iv, self.step)

    def runs(self, b: ir.IRBuilder, iv: ir.Value) -> ir.Value:
        """Whether an iteration with induction value `iv` runs (i1)."""
        if self.unsigned:
            return b.icmp_unsigned("<", iv, self.upper)
        return b.icmp_signed("<", iv, self.upper)
