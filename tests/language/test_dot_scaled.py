"""`tl.dot_scaled` (language/block_scaled.py): block-scaled products of fp4 (e2m1, packed two
per byte along K, or along M / N), fp8 (e4m3, e5m2), bf16 and fp16 operands with e8m0 scales,
against a float64 NumPy reference that decodes every format from its bits. The upcast operands
are exact in bf16 and their products in fp32, so the only error is fp32 accumulation's."""

import ml_dtypes
import numpy as np
import pytest
from fixture_kernels.dot_scaled import scaled_matmul

import naiad
import naiad.language as tl

FP4 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])
_FP8 = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}
_HALF = {"bf16": ml_dtypes.bfloat16, "fp16": np.float16}


def _operand(fmt, shape, packed_axis, gen):
    """Random bits of `fmt` (no NaN or inf) and their float64 values, unpacked."""
    if fmt == "e2m1":
        packed = list(shape)
        packed[packed_axis] //= 2
        bits = gen.integers(0, 256, packed, dtype=np.uint8)
        pairs = np.stack([FP4[bits & 15], FP4[bits >> 4]], axis=packed_axis + 1)
        return bits, pairs.reshape(shape)
    if fmt in _FP8:
        values = gen.uniform(-4, 4, shape).astype(_FP8[fmt])
        return values.view(np.uint8), values.astype(np.float64)
    values = gen.uniform(-4, 4, shape).astype(_HALF[fmt])
    return values.view(np.uint16), values.astype(np.float64)


def _run(gen, a_format, b_format, a_k_pack=True, b_k_pack=True, scaled=True, with_acc=False):
    m, n, k = 32, 16, 64
    a, a_values = _operand(a_format, (m, k), 1 if a_k_pack else 0, gen)
    b, b_values = _operand(b_format, (k, n), 0 if b_k_pack else 1, gen)
    a_scale = gen.integers(118, 136, (m, k // 32), dtype=np.uint8)
    b_scale = gen.integers(118, 136, (n, k // 32), dtype=np.uint8)
    if scaled:
        a_values = a_values * np.repeat(2.0 ** (a_scale - 127.0), 32, axis=1)
        b_values = b_values * np.repeat(2.0 ** (b_scale - 127.0), 32, axis=1).T
    acc = gen.standard_normal((m, n)).astype(np.float32)
    out = np.full((m, n), np.nan, np.float32)
    scaled_matmul[(1,)](
        a, a_scale, b, b_scale, acc, out, M=m, N=n, K=k, A_FORMAT=a_format, B_FORMAT=b_format,
        A_K_PACK=a_k_pack, B_K_PACK=b_k_pack, SCALED=scaled, WITH_ACC=with_acc,
    )  # fmt: skip
    want = a_values @ b_values + (acc if with_acc else 0)
    return out, want, (a_scale, b_scale)


def _assert_close(out, want):
    bound = 1e-6 * np.abs(want).max() + 1e-30
    np.testing.assert_allclose(out, want, rtol=0, atol=bound)


@pytest.mark.parametrize(
    "a_format, b_format", [("e2m1", "e4m3"), ("e4m3", "e5m2"), ("e2m1", "e2m1")]
)
def test_block_scaled_products_match_the_definition(gen, a_format, b_format):
    _assert_close(*_run(gen, a_format, b_format)[:2])


@pytest.mark.full
@pytest.mark.parametrize("a_format", ["e2m1", "e4m3", "e5m2", "bf16", "fp16"])
@pytest.mark.parametrize("b_format", ["e2m1", "e4m3", "e5m2", "bf16", "fp16"])
def test_every_pair_of_formats(gen, a_format, b_format):
    _assert_close(*_run(gen, a_format, b_format)[:2])


def test_fp4_packed_along_m_and_n_with_an_accumulator(gen):
    out, want, _ = _run(gen, "e2m1", "e2m1", a_k_pack=False, b_k_pack=False, with_acc=True)
    _assert_close(out, want)


def test_unscaled_half_precision_operands(gen):
    _assert_close(*_run(gen, "fp16", "bf16", scaled=False)[:2])


@naiad.jit
def nan_scale(a, b, scales, out):
    x = tl.load(a + tl.arange(0, 16)[:, None] * 32 + tl.arange(0, 32)[None, :])
    y = tl.load(b + tl.arange(0, 32)[:, None] * 16 + tl.arange(0, 16)[None, :])
    s = tl.load(scales + tl.arange(0, 16))[:, None]
    result = tl.dot_scaled(x, s, "e4m3", y, None, "e4m3")
    tl.store(out + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :], result)


def test_an_e8m0_scale_of_255_is_nan(gen):
    a = gen.uniform(-2, 2, (16, 32)).astype(ml_dtypes.float8_e4m3fn)
    b = gen.uniform(-2, 2, (32, 16)).astype(ml_dtypes.float8_e4m3fn)
    scales = np.full(16, 127, np.uint8)
    scales[3] = 255
    out = np.zeros((16, 16), np.float32)
    nan_scale[(1,)](a.view(np.uint8), b.view(np.uint8), scales, out)
    assert np.isnan(out[3]).all() and not np.isnan(np.delete(out, 3, axis=0)).any()
    want = a.astype(np.float64) @ b.astype(np.float64)
    _assert_close(np.delete(out, 3, axis=0), np.delete(want, 3, axis=0))


@naiad.jit
def wrong_format(a, out):
    x = tl.load(a + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :])
    tl.store(out, tl.sum(tl.dot_scaled(x, None, "e3m4", x, None, "e4m3")))


def test_an_unknown_format_is_a_compile_error():
    with pytest.raises(naiad.CompilationError, match="lhs_format must be one of"):
        wrong_format[(1,)](np.zeros((16, 16), np.uint8), np.zeros(1, np.float32))
