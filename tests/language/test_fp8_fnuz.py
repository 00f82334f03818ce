"""AMD's fp8 formats (`tl.float8e4b8`, `tl.float8e5b16`: no infinities, one NaN, bias 8 and 16)
compile for the CPU, whose conversions and dots take every fp8 format, as Triton's CPU
interpreter does; checked bit for bit against ml_dtypes' fnuz types. The interpreter run on its
own (and the NVIDIA back end) follows Hopper's rules, which refuse them, with the same error."""

import ml_dtypes
import numpy as np
import pytest
from helpers import cpu_rules
from memory_helpers import kernel_error, poisoned, rng

import naiad
import naiad.language as tl

FORMATS = {"float8e4b8": ml_dtypes.float8_e4m3fnuz, "float8e5b16": ml_dtypes.float8_e5m2fnuz}


@naiad.jit
def downcast(src_ptr, dst_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(src_ptr + offs)
    tl.store(dst_ptr + offs, x.to(dst_ptr.dtype.element_ty, fp_downcast_rounding="rtne"))


@naiad.jit
def upcast_dot(a_ptr, b_ptr, up_ptr, c_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)[:, None] * N + tl.arange(0, N)[None, :]
    a, b = tl.load(a_ptr + offs), tl.load(b_ptr + offs)
    tl.store(up_ptr + offs, a.to(tl.float32))
    tl.store(c_ptr + offs, tl.dot(a, b))


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("source", [np.float32, np.float16])
def test_downcast_rounds_to_nearest_even(name, source):
    x = (rng(17).standard_normal(1024) * 40).astype(source)  # some beyond the largest finite
    out = poisoned(1024, np.uint8)
    target = naiad.reinterpret(out, getattr(tl, name))
    if not cpu_rules():
        with kernel_error(f"type {getattr(tl, name)} not supported", ValueError):
            downcast[(1,)](x, target, BLOCK=1024)
        return
    downcast[(1,)](x, target, BLOCK=1024)
    expected = x.astype(np.float32).astype(FORMATS[name]).view(np.uint8)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("name", FORMATS)
def test_every_pattern_upcasts_and_dots(name):
    if not cpu_rules():
        pytest.skip("the refusal is test_downcast_rounds_to_nearest_even's")
    gen = rng(18)
    a = np.arange(256, dtype=np.uint8).reshape(16, 16)  # every bit pattern, NaN (0x80) too
    b = gen.standard_normal((16, 16)).astype(FORMATS[name]).view(np.uint8)
    up, c = poisoned((16, 16), np.float32), poisoned((16, 16), np.float32)
    fp8 = getattr(tl, name)
    upcast_dot[(1,)](naiad.reinterpret(a, fp8), naiad.reinterpret(b, fp8), up, c, N=16)
    a_values = a.view(FORMATS[name]).astype(np.float32)
    np.testing.assert_array_equal(up, a_values)
    finite = ~np.isnan(a_values).any(axis=1)  # the row holding NaN gives NaN
    expected = a_values.astype(np.float64) @ b.view(FORMATS[name]).astype(np.float64)
    np.testing.assert_allclose(c[finite], expected[finite], rtol=1e-6, atol=0.05)  # f32 sums
    assert np.isnan(c[~finite]).all()
