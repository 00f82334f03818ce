"""Reductions, scans and dot products of the interpreter.

A reduction combines neighbours pairwise, level by level, calling the user's combine function on
whole slices at once (fast, and the left operand is always the earlier elements). A scan doubles
its stride the same way (Hillis-Steele). If a combine function needs a single Python value per call
(control flow on its arguments), both fall back to one element at a time.
"""

from __future__ import annotations

import numpy as np

from ...language.semantic.program import BlockHasNoScalarValue
from .floats import to_float64


def _along(array, axis, index):
    key = [slice(None)] * array.ndim
    key[axis] = index
    return array[tuple(key)]


def reduce(values, axis, combine):
    arrays = [np.asarray(v) for v in values]
    try:
        return _pairwise_reduce(arrays, axis, combine)
    except BlockHasNoScalarValue:
        return _sequential_reduce(arrays, axis, combine)


def _pairwise_reduce(arrays, axis, combine):
    while arrays[0].shape[axis] > 1:
        n = arrays[0].shape[axis]
        if n % 2:
            raise ValueError(f"reduction length {n} is not a power of 2")
        lhs = [_along(a, axis, slice(0, None, 2)) for a in arrays]
        rhs = [_along(a, axis, slice(1, None, 2)) for a in arrays]
        arrays = [np.asarray(h) for h in combine(lhs, rhs, lhs[0].shape)]
    return [_along(a, axis, 0) for a in arrays]


def _sequential_reduce(arrays, axis, combine):
    moved = [np.moveaxis(a, axis, -1) for a in arrays]
    outer = moved[0].shape[:-1]
    results = [np.empty(outer, a.dtype) for a in arrays]
    for index in np.ndindex(*outer):
        acc = [m[index + (0,)] for m in moved]
        for j in range(1, moved[0].shape[-1]):
            acc = combine(acc, [m[index + (j,)] for m in moved], ())
        for r, value in zip(results, acc):
            r[index] = value
    return results


def scan(values, axis, reverse, combine):
    arrays = [np.asarray(v) for v in values]
    if reverse:
        arrays = [np.flip(a, axis) for a in arrays]
    try:
        arrays = _doubling_scan(arrays, axis, combine)
    except BlockHasNoScalarValue:
        arrays = _sequential_scan(arrays, axis, combine)
    return [np.flip(a, axis) if reverse else a for a in arrays]


def _doubling_scan(arrays, axis, combine):
    n = arrays[0].shape[axis]
    stride = 1
    while stride < n:
        lhs = [_along(a, axis, slice(0, n - stride)) for a in arrays]
        rhs = [_along(a, axis, slice(stride, n)) for a in arrays]
        combined = [np.asarray(h) for h in combine(lhs, rhs, lhs[0].shape)]
        arrays = [
            np.concatenate([_along(a, axis, slice(0, stride)), c.astype(a.dtype)], axis)
            for a, c in zip(arrays, combined)
        ]
        stride *= 2
    return arrays


def _sequential_scan(arrays, axis, combine):
    moved = [np.moveaxis(a, axis, -1).copy() for a in arrays]
    for index in np.ndindex(*moved[0].shape[:-1]):
        acc = [m[index + (0,)] for m in moved]
        for j in range(1, moved[0].shape[-1]):
            acc = combine(acc, [m[index + (j,)] for m in moved], ())
            for m, value in zip(moved, acc):
                m[index + (j,)] = value
    return [np.moveaxis(m, -1, axis) for m in moved]


def _round_to_tf32(x: np.ndarray) -> np.ndarray:
    """fp32 -> tf32 as tensor cores read it (`cvt.rna.tf32.f32`: 10 mantissa bits, ties away)."""
    bits = x.astype(np.float32).view(np.uint32)
    finite = np.isfinite(x)
    rounded = ((bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).astype(np.uint32)
    return np.where(finite, rounded, bits).view(np.float32)


def dot(lhs, rhs, acc, input_precision, out_dtype):
    """lhs @ rhs + acc: integers exactly (wrapping to int32), floats in fp64 then rounded once.
    A uint8 operand holds fp8e4b15's bit patterns (float_formats.py): the language refuses dots
    of uint8 integers, so those bits are decoded, never multiplied as integers."""
    lhs, rhs = (to_float64(x, "fp8e4b15") if x.dtype == np.uint8 else x for x in (lhs, rhs))
    if np.issubdtype(lhs.dtype, np.integer):
        product = np.matmul(lhs.astype(np.int64), rhs.astype(np.int64))
        return (product + acc.astype(np.int64)).astype(out_dtype)
    if lhs.dtype == np.float32 and input_precision == "tf32":
        lhs, rhs = _round_to_tf32(lhs), _round_to_tf32(rhs)
    product = one_thread_matmul(lhs.astype(np.float64), rhs.astype(np.float64))
    return (product + acc.astype(np.float64)).astype(out_dtype)


# OpenBLAS gives a product of more than 2**18 multiply-adds (M * N * K) several threads. A
# kernel's dots are often just past that (128 x 64 x 64), where the threads' start costs more
# than they save, and on a busy machine (a compile, torch's threads) they wait for a core: 10 to
# 100 times slower than one thread. Up to 4 blocks of rows; past that each block repacks the
# whole right operand, and a product that large may gain from threads.
_ONE_THREAD_MACS = 1 << 18
_MAX_BLOCKS = 4
_MIN_ROWS = 16  # a dot's least M: fewer rows would be other BLAS calls (a matrix-vector one)


def one_thread_matmul(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """`np.matmul` of float64 blocks (..., M, K) @ (..., K, N), made of products of row blocks
    small enough for one thread. Each element is the same dot product of its row and column
    either way (threads and blocks split the rows and columns, never K). A BLAS may take
    another kernel for a smaller block (OpenBLAS's small-matrix kernels on some CPUs), which
    can move a float64 sum's last bit: far below the rounding of a 32-bit or narrower
    result."""
    m, k = lhs.shape[-2:]
    n = rhs.shape[-1]
    rows = m
    while rows * n * k > _ONE_THREAD_MACS and rows % 2 == 0 and rows > _MIN_ROWS:
        rows //= 2
    if rows == m or m // rows > _MAX_BLOCKS:
        return np.matmul(lhs, rhs)
    blocks = lhs.reshape(*lhs.shape[:-2], m // rows, rows, k)
    return np.matmul(blocks, rhs[..., None, :, :]).reshape(*lhs.shape[:-2], m, n)
