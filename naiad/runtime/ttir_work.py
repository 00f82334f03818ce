"""A launch's work estimated from its kernel's TTIR text, the grid and its integer arguments:
what tiering decides from where the AST does not tell (cpu_tiering.py; cpu_first_launch.py
reads the AST). The text is read, not a module: a TTIR from the disk cache has none."""

from __future__ import annotations

import math
import re

from . import loop_trips
from .cpu_tiering import LOOP_TRIPS_GUESS, SMALL_BODY, SMALL_PROGRAMS, SMALL_WORK, WORK_PER_OP

_TENSOR_SHAPE = re.compile(r"tensor<((?:\d+x)+)")
_OPERATION = re.compile(r"^\s*(?:%\S+(?:, %\S+)* = )?\"?[a-z_]+\.[a-z_.]+", re.MULTILINE)
_WHILE = re.compile(r"\bscf\.while\b")
_FUNCTION = re.compile(r"\btt\.func\b")


def estimated_work(
    ttir: str, n_programs: int, arguments: dict | None = None, grid: tuple | None = None
) -> int:
    """Programs x the elements of the kernel's largest block (at least `SMALL_BODY`) x the
    loop bodies a program runs: each loop's trips times those of the loops that hold it, summed
    over its loops (a kernel of several functions, whose calls may sit in loops, multiplies
    every loop's trips: an estimate that errs towards compiling). A `scf.for` counts the trips
    its bounds give with the launch's `arguments` (by parameter name) and 3-D `grid`, at least
    one; any other loop counts `LOOP_TRIPS_GUESS`, and a `scf.while` multiplies the whole."""
    work = n_programs * max(largest_block(ttir), SMALL_BODY)
    work *= LOOP_TRIPS_GUESS ** len(_WHILE.findall(ttir))
    trips = [
        LOOP_TRIPS_GUESS if count is None else max(1, count)
        for count in loop_trips.trip_counts(ttir, arguments or {}, grid)
    ]
    if len(_FUNCTION.findall(ttir)) > 1:  # a call in a loop may run a loop of another function
        return work * math.prod(trips)
    # Each trip of each loop runs a body once: a loop runs its trips times each trip of the
    # loop that holds it, and loops one after another add up.
    runs: list[int] = []
    for count, parent in zip(trips, loop_trips.enclosing_loops(ttir)):
        runs.append(count * (1 if parent is None else runs[parent]))
    return work * max(1, sum(runs))


def largest_block(ttir: str) -> int:
    """The elements of the largest tensor of `ttir` (1 where it has none)."""
    largest = 1
    for match in _TENSOR_SHAPE.finditer(ttir):
        elements = 1
        for size in match.group(1).split("x")[:-1]:
            elements *= int(size)
        largest = max(largest, elements)
    return largest


def operations(ttir: str) -> int:
    """The operations of `ttir` (its lines that begin one: `%x = arith.addf ...`, `tt.store`,
    `scf.yield`; the functions' own lines too)."""
    return len(_OPERATION.findall(ttir))


def is_small(
    ttir: str, n_programs: int, arguments: dict | None = None, grid: tuple | None = None
) -> bool:
    """Whether the interpreter runs this launch, with these `arguments` (by parameter name) over
    this `grid`, sooner than the compiler builds it: at most `SMALL_PROGRAMS`, and at most
    `SMALL_WORK` of work, or `WORK_PER_OP` a TTIR operation for a kernel that large."""
    if n_programs > SMALL_PROGRAMS:
        return False
    limit = max(SMALL_WORK, WORK_PER_OP * operations(ttir))
    return estimated_work(ttir, n_programs, arguments, grid) <= limit
