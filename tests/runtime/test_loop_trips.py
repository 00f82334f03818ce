"""A kernel's loop trip counts read from its TTIR and a launch's integer arguments
(runtime/loop_trips.py), which tiering's estimate of a launch's work uses: checked against
Python's own count of the same `range`s."""

import functools

import numpy as np

import naiad
import naiad.language as tl
from naiad.runtime import loop_trips


@naiad.jit
def nested_sums(x, out, start, n, m, BLOCK: tl.constexpr):
    total = tl.zeros([BLOCK], tl.float32)
    for i in range(start, tl.cdiv(n, BLOCK)):
        for j in range(0, m, 3):
            total += tl.load(x + i * BLOCK + tl.arange(0, BLOCK)) * j
    for k in range(4):
        total += k
    for _ in range(tl.load(x).to(tl.int32)):  # a bound read from memory: not known at launch
        total += 1.0
    tl.store(out + tl.arange(0, BLOCK), total)


@functools.cache
def _ttir() -> str:
    compiled = nested_sums.warmup(
        "*fp32", "*fp32", "i32", "i32", "i32", grid=(1,), BLOCK=16, target="cpu"
    )
    return compiled.asm["ttir"]


def test_trip_counts_follow_the_arguments():
    ttir = _ttir()
    rng = np.random.default_rng(16)
    for _ in range(20):
        start, n, m = (int(v) for v in rng.integers([-40, 2, -5], [40, 5000, 200]))
        expected = [len(range(start, -(-n // 16))), len(range(0, m, 3)), 4, None]
        arguments = {"x": object(), "out": object(), "start": start, "n": n, "m": m}
        assert loop_trips.trip_counts(ttir, arguments) == expected


@naiad.jit
def persistent_sums(x, out, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    total = tl.zeros([BLOCK], tl.float32)
    for tile in range(pid, tl.cdiv(n, BLOCK), tl.num_programs(0)):  # longest at pid 0
        total += tl.load(x + tile * BLOCK + tl.arange(0, BLOCK))
    for k in range(0, pid):  # longest at the last program
        total += k
    tl.store(out + pid * BLOCK + tl.arange(0, BLOCK), total)


def test_program_ids_and_counts_come_from_the_grid():
    ttir = persistent_sums.warmup("*fp32", "*fp32", "i32", grid=(1,), BLOCK=16, target="cpu").asm[
        "ttir"
    ]
    rng = np.random.default_rng(17)
    for _ in range(10):
        n, programs = int(rng.integers(2, 5000)), int(rng.integers(1, 40))
        tiles = -(-n // 16)
        expected = [
            max(len(range(pid, tiles, programs)) for pid in range(programs)),
            programs - 1,
        ]
        grid = (programs, 1, 1)
        assert loop_trips.trip_counts(ttir, {"n": n}, grid) == expected
    assert loop_trips.trip_counts(ttir, {"n": 100}) == [None, None]


def test_bounds_without_their_arguments_are_unknown():
    assert loop_trips.trip_counts(_ttir(), {"n": 100, "m": True}) == [None, None, 4, None]


def test_enclosing_loops_follow_the_source():
    """`nested_sums`: the loop over j sits in the loop over i; the two others stand alone."""
    assert loop_trips.enclosing_loops(_ttir()) == [None, 0, None, None]
