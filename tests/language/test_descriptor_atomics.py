"""Tensor descriptor block atomics (`desc.atomic_add/min/max/and/or/xor(offsets, value)`): every
program combines its block into memory; elements outside the tensor are left alone. The element
types each reduction takes are Triton's, and the others are errors."""

import numpy as np
import pytest
from fixture_kernels.descriptors import products_added
from fixture_kernels.half_extremes import assert_same, race_into_block, reference, special_values
from helpers import cpu_rules
from memory_helpers import assert_exact, kernel_error, random_array, rng

import naiad
import naiad.language as tl
from naiad.errors import CompilationError
from naiad.tools.tensor_descriptor import TensorDescriptor


@naiad.jit
def _reduce_tiles(
    dst, src, M, N, off_m, off_n, OP: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr
):
    """Program p combines its own [BM, BN] block of `src` at (off_m, off_n): every program
    targets the same block, so the atomics race."""
    d = tl.make_tensor_descriptor(dst, [M, N], [N, 1], [BM, BN])
    p = tl.program_id(0)
    rows = tl.arange(0, BM)[:, None]
    cols = tl.arange(0, BN)[None, :]
    value = tl.load(src + p * BM * BN + rows * BN + cols)
    if OP == "add":
        d.atomic_add([off_m, off_n], value)
    elif OP == "min":
        d.atomic_min([off_m, off_n], value)
    elif OP == "max":
        d.atomic_max([off_m, off_n], value)
    elif OP == "and":
        d.atomic_and([off_m, off_n], value)
    elif OP == "or":
        d.atomic_or([off_m, off_n], value)
    else:
        d.atomic_xor([off_m, off_n], value)


_COMBINE = {
    "add": np.add,
    "min": np.minimum,
    "max": np.maximum,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
}


def _expected(dst, src, off_m, off_n, op):
    """`dst` with every program's block combined in at (off_m, off_n), inside `dst` only."""
    out = dst.copy()
    m, n = dst.shape
    bm, bn = src.shape[1:]
    r0, c0 = max(off_m, 0), max(off_n, 0)
    r1, c1 = min(off_m + bm, m), min(off_n + bn, n)
    for block in src:
        part = block[r0 - off_m : r1 - off_m, c0 - off_n : c1 - off_n]
        out[r0:r1, c0:c1] = _COMBINE[op](out[r0:r1, c0:c1], part)
    return out


def _inputs(op, dtype, gen, shape, programs, bm, bn):
    if op in ("and", "or", "xor"):
        info = np.iinfo(dtype)
        dst = gen.integers(0, info.max, shape, dtype=dtype, endpoint=True)
        src = gen.integers(0, info.max, (programs, bm, bn), dtype=dtype, endpoint=True)
        return dst, src
    if dtype == np.float32:  # small integers: the sum is exact in any order
        low, high = -64, 64
        dst = random_array(shape, np.int32, gen, low, high).astype(dtype)
        src = random_array((programs, bm, bn), np.int32, gen, low, high).astype(dtype)
        return dst, src
    low = 0 if np.dtype(dtype).kind == "u" else -1000
    return (
        random_array(shape, dtype, gen, low, 1000),
        random_array((programs, bm, bn), dtype, gen, low, 1000),
    )


@pytest.mark.parametrize(
    "op, dtype, off_m, off_n",
    [
        ("add", np.float32, 9, -4),
        ("min", np.int32, 10, 14),
        ("and", np.int64, 0, 16),
        ("xor", np.int32, -5, -7),
        pytest.param("add", np.uint64, -3, 12, marks=pytest.mark.full),
        pytest.param("max", np.uint32, -2, 0, marks=pytest.mark.full),
        pytest.param("or", np.uint32, 8, 8, marks=pytest.mark.full),
    ],
)
def test_block_atomics_combine_every_program_inside_the_tensor(op, dtype, off_m, off_n):
    gen = rng(21)
    m, n, bm, bn, programs = 14, 20, 8, 8, 3
    dst, src = _inputs(op, dtype, gen, (m, n), programs, bm, bn)
    expected = _expected(dst, src, off_m, off_n, op)
    _reduce_tiles[(programs,)](dst, src, m, n, off_m, off_n, op, bm, bn)
    assert_exact(dst, expected)


@pytest.mark.full
@pytest.mark.parametrize(
    "op, dtype",
    [("add", d) for d in (np.int32, np.uint32, "float16", "bfloat16")]
    + [(op, d) for op in ("min", "max") for d in (np.uint64, np.int64)]
    + [(op, d) for op in ("and", "or", "xor") for d in (np.uint64, np.int32)],
)
def test_block_atomics_every_element_type(op, dtype):
    gen = rng(22)
    m, n, bm, bn, programs = 12, 24, 4, 16, 4
    if dtype in ("float16", "bfloat16"):  # small integers, exact in 16-bit floats
        dst = random_array((m, n), np.int32, gen, -8, 8).astype(random_array(1, dtype, gen).dtype)
        src = random_array((programs, bm, bn), np.int32, gen, -8, 8).astype(dst.dtype)
    else:
        dst, src = _inputs(op, dtype, gen, (m, n), programs, bm, bn)
    expected = _expected(dst, src, 10, 15, op)
    _reduce_tiles[(programs,)](dst, src, m, n, 10, 15, op, bm, bn)
    assert_exact(dst, expected)


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_float_extremes_are_ieee_maximum_and_minimum(op, dtype, gen):
    """fp16/bf16 min and max, which Triton does with Hopper's bulk tensor reduction: IEEE
    754-2019's maximum / minimum (a NaN wins, -0 < +0) whatever order the racing programs come
    in, in the interpreter (Hopper's rules) and on the GPU (`-m gpu`). The CPU refuses them,
    as Triton does everywhere but on CUDA from sm_90 on."""
    dst = special_values((20, 40), dtype, gen)
    src = special_values((17, 8, 32), dtype, gen)
    expected = reference(dst, src, -3, 12, op)
    if cpu_rules():
        with pytest.raises(CompilationError, match="bulk tensor reduction"):
            race_into_block[(17,)](None, dst, src, 20, 40, -3, 12, op, 8, 32)
        return
    race_into_block[(17,)](None, dst, src, 20, 40, -3, 12, op, 8, 32)
    assert_same(dst, expected)


# -------------------------------------------------------------------------------------------------
# Triton's argument rules
# -------------------------------------------------------------------------------------------------
@pytest.mark.interpreter_only("the rules are the language's, checked before any back end")
@pytest.mark.parametrize(
    "op, dtype, match",
    [
        ("add", np.int64, "does not support int64"),
        ("add", np.float64, "does not support fp64"),
        ("min", np.float32, "does not support fp32"),
        ("and", np.float32, "does not support fp32"),
        ("xor", np.int16, "does not support int16"),
    ],
)
def test_block_atomics_refuse_the_element_types_triton_refuses(op, dtype, match):
    dst = np.ones((16, 16), dtype)
    with kernel_error(match):
        _reduce_tiles[(1,)](dst, np.ones((1, 8, 16), dtype), 16, 16, 0, 0, op, 8, 16)
    np.testing.assert_array_equal(dst, 1)


@naiad.jit
def _add_mismatched(dst, KIND: tl.constexpr):
    d = tl.make_tensor_descriptor(dst, [16, 16], [16, 1], [8, 8])
    if KIND == "shape":
        d.atomic_add([0, 0], tl.full((1, 8), 1, tl.int32))
    else:
        d.atomic_add([0, 0], tl.full((8, 8), 1, tl.uint32))


@pytest.mark.interpreter_only("the rules are the language's, checked before any back end")
@pytest.mark.parametrize("kind, match", [("shape", "block shape"), ("dtype", "element type")])
def test_block_atomics_take_exactly_the_block(kind, match):
    dst = np.ones((16, 16), np.int32)
    with kernel_error(match):
        _add_mismatched[(1,)](dst, kind)
    np.testing.assert_array_equal(dst, 1)


def test_products_added_step_by_step_through_host_descriptors(gen):
    """A loop adding each step's product into the output by a block atomic (on sm_90 a bulk
    tensor reduction in a pipelined loop): out = its start + sum over programs of x_p @ b."""
    programs, k, n = 3, 192, 64
    x = random_array((programs * 32, 32), "float16", gen, -2, 2)
    b = random_array((k, n), "float16", gen, -2, 2)
    out = random_array((k, n), np.float32, gen, -4, 4)
    expected = out.astype(np.float64)
    for p in range(programs):
        xp = x[p * 32 : (p + 1) * 32].astype(np.float64)
        expected += np.concatenate([xp @ b[r : r + 32].astype(np.float64) for r in range(0, k, 32)])
    products_added[(programs,)](
        TensorDescriptor.from_tensor(x, [32, 32]),
        TensorDescriptor.from_tensor(b, [32, 64]),
        TensorDescriptor.from_tensor(out, [32, 64]),
        k,
        BK=32,
        BN=64,
    )
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-3)
