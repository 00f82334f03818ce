"""A `@jit` function whose paths return different things: Python numbers merge as a tensor of
their type (`return -1` / `return 1`), and a path that falls off the end where another returns
gives undefined values of their types (`ub.poison`), as Triton's code generator makes them."""

import numpy as np
from memory_helpers import assert_exact, poisoned, rng

import naiad
import naiad.language as tl


@naiad.jit
def sign(x):
    if x < 0:
        return -1
    return 1


@naiad.jit
def doubled_if_positive(x, flag):
    if flag > 0:
        return x * 2


@naiad.jit
def signs(x_ptr, out_ptr, N: tl.constexpr):
    for i in tl.static_range(N):
        tl.store(out_ptr + i, sign(tl.load(x_ptr + i)))


@naiad.jit
def doubled(x_ptr, out_ptr, flag, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, doubled_if_positive(tl.load(x_ptr + offs), flag))


def test_numbers_returned_on_two_paths_merge_as_int32():
    x = rng(19).standard_normal(8).astype(np.float32)
    out = poisoned(8, np.int32)
    signs[(1,)](x, out, N=8)
    assert_exact(out, np.where(x < 0, -1, 1).astype(np.int32))


def test_a_path_without_return_is_undefined_where_another_returns():
    x = rng(20).standard_normal(64).astype(np.float32)
    out = poisoned(64, np.float32)
    doubled[(1,)](x, out, 3, BLOCK=64)  # the returning path: its values
    assert_exact(out, x * np.float32(2))
    ttir = doubled.warmup(x, out, 3, BLOCK=64, grid=(1,), target="cpu").asm["ttir"]
    assert "ub.poison" in ttir and "scf.if" in ttir
