"""tl.dot: precisions (ieee, tf32, tf32x3), operand and result dtypes, accumulators, batched 3-D,
and the shape/dtype errors of the strictest target (CUDA Hopper: K >= 16 for 16-bit operands)."""

import dot_kernels as kernels
import ml_dtypes
import numpy as np
import pytest
from helpers import cpu_rules
from memory_helpers import NP_DTYPES, assert_exact, kernel_error, poisoned, random_array, rng

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.runtime.compiled_later import CompiledLater
from naiad.testing import check


def _run_dot(in_dtype, out_dtype, precision, use_acc, m=16, n=32, k=64, seed=0):
    gen = rng(seed)
    a = random_array((m, k), in_dtype, gen)
    b = random_array((k, n), in_dtype, gen)
    out_np = NP_DTYPES.get(
        str(out_dtype).replace("fp", "float").replace("bf16", "bfloat16"), None
    ) or np.dtype(str(out_dtype))
    acc = random_array((m, n), out_np, gen)
    c = poisoned((m, n), out_np)
    kernels.dot[(1,)](a, b, c, acc, m, n, k, precision, out_dtype, use_acc)
    if np.dtype(a.dtype).kind in "iu":
        ref = a.astype(np.int64) @ b.astype(np.int64) + (acc.astype(np.int64) if use_acc else 0)
    else:
        ref = a.astype(np.float64) @ b.astype(np.float64) + (
            acc.astype(np.float64) if use_acc else 0
        )
    return c, ref, k


def test_fp32_ieee_matches_float64():
    c, ref, k = _run_dot(np.float32, tl.float32, "ieee", False, seed=1)
    check("dot", c, ref, "interpreter", np.float32, k=k)


@pytest.mark.parametrize("precision", [None, "tf32", "tf32x3"])
def test_fp32_tf32_within_tf32_tolerance(precision):
    c, ref, k = _run_dot(np.float32, tl.float32, precision, True, seed=2)
    check("dot_tf32", c, ref, "interpreter", np.float32, k=k)


@pytest.mark.parametrize("out_dtype", [tl.float32, tl.float16])
@pytest.mark.parametrize("use_acc", [False, True])
def test_fp16(out_dtype, use_acc):
    c, ref, k = _run_dot(np.float16, out_dtype, None, use_acc, seed=3)
    assert c.dtype == (np.float32 if out_dtype == tl.float32 else np.float16)
    check("dot", c, ref, "interpreter", c.dtype, k=k)


@pytest.mark.parametrize("use_acc", [False, True])
def test_bf16_accumulates_in_fp32(use_acc):
    c, ref, k = _run_dot(NP_DTYPES["bfloat16"], tl.float32, None, use_acc, seed=4)
    check("dot", c, ref, "interpreter", np.float32, k=k)


@pytest.mark.parametrize("use_acc", [False, True])
def test_int8_is_exact_in_int32(use_acc):
    c, ref, _ = _run_dot(np.int8, tl.int32, None, use_acc, seed=5)
    assert_exact(c, ref.astype(np.int32))


def test_fp64():
    c, ref, k = _run_dot(np.float64, tl.float64, "ieee", True, m=16, n=16, k=16, seed=6)
    check("dot", c, ref, "interpreter", np.float64, k=k)


def test_fp8_e5m2():
    c, ref, k = _run_dot(ml_dtypes.float8_e5m2, tl.float32, None, False, m=16, n=16, k=32, seed=7)
    check("dot", c, ref, "interpreter", np.float32, k=k)


@naiad.jit
def _dot_fp8e4b15(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    om, on, ok = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + om[:, None] * K + ok[None, :]).to(tl.float8e4b15, bitcast=True)
    b = tl.load(b_ptr + ok[:, None] * N + on[None, :]).to(tl.float8e4b15, bitcast=True)
    tl.store(c_ptr + om[:, None] * N + on[None, :], tl.dot(a, b))


def _decode_fp8e4b15(bits: np.ndarray) -> np.ndarray:
    """fp8e4b15 (1 sign, 4 exponent bits biased by 15, 3 mantissa bits; no inf or NaN)."""
    sign = np.where(bits & 0x80, -1.0, 1.0)
    exponent, mantissa = (bits >> 3) & 0xF, (bits & 0x7) / 8.0
    normal = (1.0 + mantissa) * np.exp2(exponent.astype(np.float64) - 15)
    return sign * np.where(exponent == 0, mantissa * 2.0**-14, normal)


def test_fp8e4b15_operands(gen):
    """Hopper's tensor cores lack fp8e4b15 (the interpreter checks against them, and Triton
    skips it there); the CPU's dot takes it."""
    m, n, k = 16, 16, 32
    a = gen.integers(0, 256, (m, k), dtype=np.uint8)
    b = gen.integers(0, 256, (k, n), dtype=np.uint8)
    c = poisoned((m, n), np.float32)
    if not cpu_rules():
        with kernel_error("fp8e4b15 is not supported as a dot operand"):
            _dot_fp8e4b15[(1,)](a, b, c, m, n, k)
        return
    _dot_fp8e4b15[(1,)](a, b, c, m, n, k)
    check("dot", c, _decode_fp8e4b15(a) @ _decode_fp8e4b15(b), "interpreter", np.float32, k=k)


def test_fp8e4b15_operands_in_a_tiered_first_launch(backend, gen, fresh_cache):
    """A first launch that tiering runs in the interpreter while its kernel compiles follows the
    CPU's rules, which take fp8e4b15 dots: the interpreter decodes the operands' bits (it once
    multiplied them as integers)."""
    if backend != "cpu":
        pytest.skip("the CPU back end's tiered first launch")
    m, n, k = 16, 32, 64  # (a specialization of its own: its first launch)
    a = gen.integers(0, 256, (m, k), dtype=np.uint8)
    b = gen.integers(0, 256, (k, n), dtype=np.uint8)
    c = poisoned((m, n), np.float32)
    with knobs.override(NAIAD_BACKEND="auto", NAIAD_CPU_TIERING="auto"):
        launched = _dot_fp8e4b15[(1,)](a, b, c, m, n, k)
    assert isinstance(launched, CompiledLater)  # the interpreter ran it
    check("dot", c, _decode_fp8e4b15(a) @ _decode_fp8e4b15(b), "interpreter", np.float32, k=k)


@pytest.mark.full
@pytest.mark.parametrize(
    "m,n,k", [(16, 16, 16), (32, 64, 32), (64, 16, 128), (1, 16, 16), (16, 1, 32)]
)
@pytest.mark.parametrize(
    "in_dtype,out_dtype,precision",
    [
        (np.float32, tl.float32, "ieee"),
        (np.float32, tl.float32, "tf32"),
        (np.float16, tl.float32, None),
        (np.float16, tl.float16, None),
        ("bfloat16", tl.float32, None),
        (np.int8, tl.int32, None),
    ],
)
@pytest.mark.parametrize("use_acc", [False, True])
def test_dot_matrix(m, n, k, in_dtype, out_dtype, precision, use_acc):
    if (
        np.dtype(NP_DTYPES.get(in_dtype, in_dtype) if isinstance(in_dtype, str) else in_dtype)
        == np.int8
        and k < 32
    ):
        k = 32
    in_np = NP_DTYPES[in_dtype] if isinstance(in_dtype, str) else in_dtype
    c, ref, kk = _run_dot(in_np, out_dtype, precision, use_acc, m, n, k, seed=8)
    if np.dtype(in_np).kind == "i":
        assert_exact(c, ref.astype(np.int32))
    else:
        check("dot_tf32" if precision == "tf32" else "dot", c, ref, "interpreter", c.dtype, k=kk)


# -------------------------------------------------------------------------------------------------
# batched, chained, accumulating in a loop
# -------------------------------------------------------------------------------------------------
def test_batched_3d():
    gen = rng(9)
    bsz, m, n, k = 4, 16, 16, 32
    a = random_array((bsz, m, k), np.float32, gen)
    b = random_array((bsz, k, n), np.float32, gen)
    c = poisoned((bsz, m, n), np.float32)
    kernels.dot3d[(1,)](a, b, c, bsz, m, n, k)
    check(
        "dot",
        c,
        np.matmul(a.astype(np.float64), b.astype(np.float64)),
        "interpreter",
        np.float32,
        k=k,
    )


@pytest.mark.parametrize("batch,trans_a", [((2, 4), False), ((2, 2, 2), True)])
def test_batched_over_several_dimensions(batch, trans_a, gen):
    """Batches of any rank (Triton's main folds them into one around a 3-D dot)."""
    shape = (*batch, 16, 16)
    a, b, acc = (random_array(shape, np.float32, gen) for _ in range(3))
    c = poisoned(shape, np.float32)
    kernels.dot_batched[(1,)](a, b, acc, c, batch, a.size, trans_a)
    lhs = np.swapaxes(a, -1, -2) if trans_a else a
    ref = np.matmul(lhs.astype(np.float64), b.astype(np.float64)) + acc
    check("dot", c, ref, "interpreter", np.float32, k=16)


def test_fp16_matmul_loop_with_masked_k():
    gen = rng(10)
    m, n, k = 32, 16, 100
    a = random_array((m, k), np.float16, gen)
    b = random_array((k, n), np.float16, gen)
    c = poisoned((m, n), np.float16)
    kernels.matmul_loop[(1,)](a, b, c, m, n, k, 32)
    check("dot", c, a.astype(np.float64) @ b.astype(np.float64), "interpreter", np.float16, k=k)


def test_chained_dots():
    gen = rng(11)
    m, k = 16, 32
    a, b, d = (random_array((m, k), np.float16, gen) for _ in range(3))
    c = poisoned((m, k), np.float32)
    kernels.chain[(1,)](a, b, d, c, m, k)
    ab = (a.astype(np.float64) @ b.astype(np.float64).T).astype(np.float16)
    check("dot", c, ab.astype(np.float64) @ d.astype(np.float64), "interpreter", np.float32, k=m)


# -------------------------------------------------------------------------------------------------
# errors
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _dot_shapes(
    a_ptr,
    b_ptr,
    M: tl.constexpr,
    K1: tl.constexpr,
    K2: tl.constexpr,
    N: tl.constexpr,
    OUT: tl.constexpr,
    PRECISION: tl.constexpr,
    ALLOW_TF32: tl.constexpr,
):
    a = tl.load(a_ptr + tl.arange(0, M)[:, None] * K1 + tl.arange(0, K1)[None, :])
    b = tl.load(b_ptr + tl.arange(0, K2)[:, None] * N + tl.arange(0, N)[None, :])
    tl.dot(a, b, out_dtype=OUT, input_precision=PRECISION, allow_tf32=ALLOW_TF32)


def _raises(
    match,
    a_dtype,
    b_dtype,
    m=16,
    k1=16,
    k2=16,
    n=16,
    out=tl.float32,
    precision=None,
    allow_tf32=None,
):
    a = np.ones(m * k1, a_dtype)
    b = np.ones(k2 * n, b_dtype)
    with kernel_error(match):
        _dot_shapes[(1,)](a, b, m, k1, k2, n, out, precision, allow_tf32)


def test_k_mismatch_raises():
    _raises("not compatible for matmul", np.float32, np.float32, k1=16, k2=32)


@pytest.mark.interpreter_only("a rule of the CUDA target; the CPU has no minimum dot size")
@pytest.mark.parametrize(
    "dtype,k", [(np.float16, 8), ("bfloat16", 8), (np.int8, 16), (np.float32, 4)]
)
def test_k_below_the_hardware_minimum_raises(dtype, k):
    dtype = NP_DTYPES[dtype] if isinstance(dtype, str) else dtype
    _raises("K >=", dtype, dtype, k1=k, k2=k)


def test_dtype_mismatch_raises():
    _raises("Both operands must be same dtype", np.float16, np.float32)


def test_bf16_out_dtype_raises():
    _raises("out_dtype=bfloat16 is unsupported", np.float16, np.float16, out=tl.bfloat16)


def test_uint8_operands_raise():
    _raises("int8", np.uint8, np.uint8, k1=32, k2=32)


@pytest.mark.parametrize("precision", ["fp32", "TF32X9"])
def test_bad_input_precision_raises(precision):
    _raises("input_precision", np.float32, np.float32, precision=precision)


def test_precision_and_allow_tf32_together_raise():
    _raises(
        "Only one of input_precision and allow_tf32",
        np.float32,
        np.float32,
        precision="ieee",
        allow_tf32=True,
    )


@naiad.jit
def _dot_rank(a_ptr, b_ptr):
    a = tl.load(a_ptr + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :])
    b = tl.load(b_ptr + tl.arange(0, 16))
    tl.dot(a, b)


def test_rank_mismatch_raises():
    with kernel_error("2D or 3D"):
        _dot_rank[(1,)](np.ones(256, np.float32), np.ones(16, np.float32))


@naiad.jit
def _dot_bad_acc(a_ptr, b_ptr, ACC: tl.constexpr, OUT: tl.constexpr):
    o = tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :]
    a = tl.load(a_ptr + o)
    b = tl.load(b_ptr + o)
    tl.dot(a, b, tl.zeros((32, 32), ACC), out_dtype=OUT)


@pytest.mark.parametrize(
    "in_dtype,acc,out",
    [
        (np.float16, tl.float16, tl.float32),  # the accumulator must have the out_dtype
        (np.int8, tl.int32, tl.float32),  # an explicit out_dtype must be the acc's
        (np.float32, tl.float16, tl.float32),
    ],
)
def test_accumulator_dtype_must_match_out_dtype(in_dtype, acc, out):
    with kernel_error("accumulator"):
        _dot_bad_acc[(1,)](np.ones(1024, in_dtype), np.ones(1024, in_dtype), acc, out)


def test_int8_with_int32_accumulator_and_out_dtype():
    _dot_bad_acc[(1,)](np.ones(1024, np.int8), np.ones(1024, np.int8), tl.int32, tl.int32)


@naiad.jit
def _dot_acc_default_out(a_ptr, b_ptr, acc_ptr, c_ptr, N: tl.constexpr):
    o = tl.arange(0, N)[:, None] * N + tl.arange(0, N)[None, :]
    acc = tl.load(acc_ptr + o)
    c = tl.dot(tl.load(a_ptr + o), tl.load(b_ptr + o), acc)
    tl.static_assert(c.dtype == acc.dtype)
    tl.store(c_ptr + o, c)


@pytest.mark.parametrize("in_dtype,acc_dtype", [(np.float16, np.float16), (np.int8, np.int32)])
def test_out_dtype_left_out_is_the_accumulators(in_dtype, acc_dtype):
    """Without `out_dtype` the dot accumulates in `acc`'s dtype (Triton 3.8): an fp16 or int32
    accumulator needs no `out_dtype` beside it."""
    gen, n = rng(11), 32
    a, b = random_array((n, n), in_dtype, gen), random_array((n, n), in_dtype, gen)
    acc = random_array((n, n), acc_dtype, gen)
    c = poisoned((n, n), acc_dtype)
    _dot_acc_default_out[(1,)](a, b, acc, c, n)
    wide = np.int64 if np.dtype(in_dtype).kind == "i" else np.float64
    ref = a.astype(wide) @ b.astype(wide) + acc.astype(wide)
    assert c.dtype == acc_dtype
    if wide is np.int64:
        assert_exact(c, ref.astype(np.int32))
    else:
        check("dot", c, ref, "interpreter", c.dtype, k=n)


@naiad.jit
def _fp8_dot_imprecise(a_ptr, b_ptr, c_ptr, IMPRECISE: tl.constexpr):
    r = tl.arange(0, 16)
    k = tl.arange(0, 32)
    a = tl.load(a_ptr + r[:, None] * 32 + k[None, :])
    b = tl.load(b_ptr + k[:, None] * 16 + r[None, :])
    c = tl.dot(a, b, max_num_imprecise_acc=IMPRECISE)
    tl.store(c_ptr + r[:, None] * 16 + r[None, :], c)


def test_max_num_imprecise_acc_above_k_raises():
    """An fp8 dot may not sum more K elements in reduced precision than it has (Triton's rule)."""
    a = rng(3).standard_normal(16 * 32).astype(ml_dtypes.float8_e4m3fn)
    with kernel_error("max_num_imprecise_acc \\(64\\) must be <= K \\(32\\)"):
        _fp8_dot_imprecise[(1,)](a, a, poisoned(256, np.float32), 64)
