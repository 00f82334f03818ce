"""The one table of float formats (naiad/ir/float_format.py) against ml_dtypes / NumPy, which
implement the same formats independently: field widths, bias, the largest finite value, the
infinity and NaN patterns; and Triton's fp8e4b15, which has no such type, against its
definition (bias 15, every pattern a number)."""

import ml_dtypes
import numpy as np
import pytest

from naiad.ir.float_format import FLOAT_FORMATS, FP8E4B15, KERNEL_FORMATS


def _value(bits: int, fmt) -> float:
    dtype = np.dtype(getattr(ml_dtypes, fmt.numpy_name, None) or fmt.numpy_name)
    return float(np.array(bits, f"uint{fmt.width}").view(dtype))


@pytest.mark.parametrize("kind", sorted(FLOAT_FORMATS))
def test_formats_match_ml_dtypes(kind):
    fmt = FLOAT_FORMATS[kind]
    info = ml_dtypes.finfo(getattr(ml_dtypes, fmt.numpy_name, None) or fmt.numpy_name)
    assert fmt.width == info.bits and fmt.precision == info.nmant + 1
    assert fmt.min_exponent == info.minexp
    assert _value(fmt.max_finite, fmt) == float(info.max)
    assert _value(fmt.max_finite | fmt.sign_bit, fmt) == -float(info.max)
    if fmt.inf is None:
        assert not np.isinf(_value(fmt.max_finite + 1, fmt))
    else:
        assert _value(fmt.inf, fmt) == np.inf
    assert np.isnan(_value(fmt.nan, fmt))
    if fmt.specials == "fnuz":  # the would-be -0 is the only NaN
        assert fmt.nan == fmt.sign_bit


def test_kernels_read_f8E4M3B11FNUZ_as_fp8e4b15():
    fmt = KERNEL_FORMATS["f8E4M3B11FNUZ"]
    assert fmt is FP8E4B15 and fmt.bias == 15
    assert fmt.inf is None and fmt.nan is None
    assert fmt.max_finite == 0x7F  # 1.875: 2**(15 - 15) * (1 + 7/8)
    assert {k: f for k, f in KERNEL_FORMATS.items() if k != "f8E4M3B11FNUZ"} == {
        k: f for k, f in FLOAT_FORMATS.items() if k != "f8E4M3B11FNUZ"
    }
