"""Random arrays of the kernel generator's dtypes (tl's names), for its launches' arguments."""

from __future__ import annotations

import ml_dtypes
import numpy as np

NUMPY_DTYPES = {
    "int1": np.dtype(np.bool_),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
}


def numpy_dtype(dtype: str) -> np.dtype:
    """The host dtype of a tl dtype name."""
    return NUMPY_DTYPES.get(dtype) or np.dtype(dtype)


def random_array(dtype: str, shape, rng: np.random.Generator) -> np.ndarray:
    """Random elements of `dtype`, never zero: floats of magnitude 0.25 to 4 with random signs;
    integers over the whole range for 8 and 16 bits, else half of them small (within 1000)."""
    host = numpy_dtype(dtype)
    if dtype.startswith(("float", "bfloat")):
        magnitude = rng.uniform(0.25, 4.0, shape)
        return (magnitude * rng.choice([-1.0, 1.0], shape)).astype(host)
    info = np.iinfo(host)
    values = rng.integers(info.min, info.max, shape, dtype=host, endpoint=True)
    if info.bits > 16:
        small = rng.integers(max(info.min, -1000), 1000, shape, endpoint=True)
        values = np.where(rng.random(shape) < 0.5, small, values).astype(host)
    values[values == 0] = 1
    return values
