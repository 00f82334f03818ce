"""Tuples as kernel arguments, on every back end: a tuple (nested, a NamedTuple, with None,
`tl.constexpr` and jit-function leaves) passed for a parameter that is not constexpr is its
leaves, each specialized as an argument of its own (runtime/tuple_arguments.py). Values against
NumPy on random inputs."""

from typing import NamedTuple

import numpy as np
from memory_helpers import assert_exact, poisoned, rng

import naiad
import naiad.language as tl
from naiad.tools.tensor_descriptor import TensorDescriptor


@naiad.jit
def scaled_sum(out_ptr, ptrs, scales, BLOCK: tl.constexpr):
    """out = sum_i ptrs[i] * scales[i]; `scales` has a None at its end that must stay None."""
    tl.static_assert(scales[len(scales) - 1] is None)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in tl.static_range(len(ptrs)):
        acc += tl.load(ptrs[i] + offs) * scales[i]
    tl.store(out_ptr + offs, acc)


def test_pointers_and_numbers_in_tuples():
    """Three arrays of three dtypes, scales of three kinds: fp32, int32, and an int equal to
    1 (a constant of the compiled specialization, as Triton specializes it)."""
    gen = rng(161)
    arrays = (
        gen.standard_normal(64).astype(np.float32),
        gen.standard_normal(64).astype(np.float16),
        gen.integers(-100, 100, 64).astype(np.int32),
    )
    for scales in ((0.75, -3, 1, None), (-1.5, 7, 5, None)):
        out = poisoned(64, np.float32)
        scaled_sum[(1,)](out, arrays, scales, BLOCK=64)
        expected = np.zeros(64, np.float32)
        for a, s in zip(arrays, scales):  # each product in its array's type, as the kernel's
            expected += (a * a.dtype.type(s)).astype(np.float32)
        np.testing.assert_allclose(out, expected, rtol=1e-6)


@naiad.jit
def nested_reads(out_ptr, tree, n):
    """tree = (x, ((y, k), tl.constexpr(c)), m): out[0:n] = x * k + y * c + m."""
    x, ((y, k), c), m = tree
    tl.static_assert(c == 3)
    offs = tl.arange(0, 32)
    mask = offs < n
    total = tl.load(x + offs, mask=mask) * k + tl.load(y + offs, mask=mask) * c + m
    tl.store(out_ptr + offs, total, mask=mask)


def test_nested_tuples_with_a_constexpr_leaf():
    gen = rng(162)
    x = gen.integers(-50, 50, 32).astype(np.int64)
    y = gen.integers(-50, 50, 32).astype(np.int64)
    for n, k, m in ((32, 5, 2**40), (19, -4, -7)):  # an int64 leaf, then an int32 one
        out = poisoned(32, np.int64)
        nested_reads[(1,)](out, (x, ((y, k), tl.constexpr(3)), m), n)
        assert_exact(out[:n], x[:n] * k + y[:n] * 3 + m)
        assert (out[n:] == poisoned(32 - n, np.int64)).all()


class View(NamedTuple):
    ptr: object
    shape: tuple
    stride: tuple


class Closure(NamedTuple):
    fn: object
    captured: tuple


@naiad.jit
def scaled_by(x, scale_ptr):
    return x * tl.load(scale_ptr)


@naiad.jit
def apply_to_view(closure, src, dst, BM: tl.constexpr, BN: tl.constexpr):
    """dst[:M, :N] = closure.fn(src[:M, :N], *closure.captured), views read by field name."""
    rows = tl.arange(0, BM)[:, None]
    cols = tl.arange(0, BN)[None, :]
    mask = (rows < dst.shape[0]) & (cols < dst.shape[1])
    x = tl.load(src.ptr + rows * src.stride[0] + cols * src.stride[1], mask=mask)
    y = closure.fn(x, *closure.captured)
    tl.store(dst.ptr + rows * dst.stride[0] + cols * dst.stride[1], y, mask=mask)


def test_namedtuples_read_by_field_with_a_jit_function_leaf():
    """A NamedTuple holding a jit function (a constant) and a tuple of arrays; views whose
    stride is 1 along columns (a constant) and whose shapes are not multiples of 16."""
    gen = rng(163)
    src = gen.standard_normal((24, 40)).astype(np.float32)
    dst = poisoned((20, 36), np.float32)
    scale = gen.standard_normal(1).astype(np.float32)
    closure = Closure(scaled_by, (scale,))
    apply_to_view[(1,)](
        closure,
        View(src, src.shape, (src.strides[0] // 4, 1)),
        View(dst, dst.shape, (dst.strides[0] // 4, 1)),
        BM=32,
        BN=64,
    )
    assert_exact(dst, src[:20, :36] * scale[0])


@naiad.jit
def repeat_add(out_ptr, pair, steps):
    """out = pair[0] + steps * pair[1], a leaf of the tuple carried through a runtime loop."""
    acc = tl.load(pair[0] + tl.arange(0, 16))
    for _ in range(steps):
        acc += pair[1]
    tl.store(out_ptr + tl.arange(0, 16), acc)


def test_a_leaf_used_in_a_loop_and_new_values_each_launch():
    gen = rng(164)
    x = gen.integers(-1000, 1000, 16).astype(np.int32)
    for step, steps in ((3, 5), (-11, 2), (1, 9)):
        out = poisoned(16, np.int32)
        repeat_add[(1,)](out, (x, step), steps)
        assert_exact(out, x + step * steps)


@naiad.jit
def copy_tiles(descs, BM: tl.constexpr, BN: tl.constexpr):
    src, dst = descs
    pm = tl.program_id(0)
    dst.store([pm * BM, 0], src.load([pm * BM, 0]) * 2)


def test_a_tensor_descriptor_in_a_tuple():
    gen = rng(165)
    src = gen.standard_normal((48, 32)).astype(np.float32)
    dst = poisoned((48, 32), np.float32)
    descs = (
        TensorDescriptor.from_tensor(src, [16, 32]),
        TensorDescriptor.from_tensor(dst, [16, 32]),
    )
    copy_tiles[(3,)](descs, BM=16, BN=32)
    assert_exact(dst, src * 2)
