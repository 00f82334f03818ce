"""Random inputs of the language's arithmetic tests: never zero (a zero hides a lost sign or a
wrong operand order; zero divisors have tests of their own), special values, poisoned outputs,
and the derandomized hypothesis settings."""

from __future__ import annotations

import numpy as np
from dtype_tables import _FORMATS, int_range, is_float, is_signed, np_dtype
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def hypothesis_settings(max_examples: int) -> settings:
    """Derandomized (a fixed seed per test), without an example database: runs repeat exactly.
    No shrinking: a failing example is reported as drawn (shrinking would compile a kernel per
    step on the compiled back ends)."""
    return settings(
        derandomize=True,
        phases=(Phase.explicit, Phase.reuse, Phase.generate),
        database=None,
        deadline=None,
        max_examples=max_examples,
        print_blob=False,
        # `backend` (conftest.py) is function-scoped, and the same for every example.
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.function_scoped_fixture,
        ],
    )


def numpy_random(shape, dtype: str, gen: np.random.Generator, low=None, high=None) -> np.ndarray:
    """Random values of the Triton dtype `dtype`, never zero (as Triton's `numpy_random`).

    Integers span the whole range of the dtype unless `low`/`high` (inclusive) narrow it, so they
    are safe divisors; floats are normal(0, 1) scaled by 2**k for k in [-4, 4) unless `low`/`high`
    give a uniform range; bfloat16 values are float32 values rounded to bfloat16.
    """
    if dtype == "int1":
        return gen.random(shape) < 0.5
    if not is_float(dtype):
        lo, hi = int_range(dtype)
        lo = lo if low is None else max(low, lo)
        hi = hi if high is None else min(high, hi)
        wide = np.uint64 if dtype == "uint64" else np.int64
        values = gen.integers(lo, hi, size=shape, endpoint=True, dtype=wide)
        values = np.where(values == 0, 1 if hi >= 1 else -1, values)
        return values.astype(np_dtype(dtype))
    if low is None and high is None:
        values = gen.standard_normal(shape) * np.exp2(gen.integers(-4, 4, shape))
    else:
        values = gen.uniform(low, high, shape)
    values = np.where(values == 0, 0.5, values)
    host = np.float32 if dtype == "bfloat16" else np_dtype(dtype)  # bf16: fp32 values rounded
    out = values.astype(host).astype(np_dtype(dtype))
    return np.where(out.astype(np.float64) == 0, np.array(1.0, out.dtype), out)


def elements(dtype: str, low=None, high=None, special: bool = False) -> st.SearchStrategy:
    """A hypothesis strategy of nonzero scalars of `dtype` (infinities too if `special`; NaN
    inputs are in `specials`)."""
    if dtype == "int1":
        return st.booleans()
    if not is_float(dtype):
        lo, hi = int_range(dtype)
        lo = lo if low is None else max(low, lo)
        hi = hi if high is None else min(high, hi)
        nonzero = 1 if hi >= 1 else -1
        return st.integers(lo, hi).map(lambda v: v or nonzero)
    width = {"float16": 16, "bfloat16": 32, "float32": 32, "float64": 64}[dtype]
    values = st.floats(
        min_value=low,
        max_value=high,
        width=width,
        allow_nan=False,
        allow_infinity=special and low is None and high is None,
        allow_subnormal=True,
    )
    if dtype == "bfloat16":  # the float32 values that are bfloat16 values: low 16 bits clear
        values = values.map(
            lambda v: float(
                np.array(v, np.float32)
                .view(np.uint32)
                .__and__(np.uint32(0xFFFF0000))
                .view(np.float32)
            )
        )
    # A map, not a filter: hypothesis rewrites `!= 0` filters of fp16 floats into unsatisfiable
    # bounds.
    return values.map(lambda v: v or (1.0 if high is None or high >= 1 else high))


def arrays(dtype: str, n: int, **kwargs) -> st.SearchStrategy:
    """A hypothesis strategy of 1-D arrays of `n` nonzero values of `dtype` (see `elements`)."""
    host = np.float32 if dtype == "bfloat16" else np_dtype(dtype)
    # fill=nothing(): every element drawn (a sparse fill of fp16 with infinities is unsatisfiable)
    strategy = hnp.arrays(host, n, elements=elements(dtype, **kwargs), fill=st.nothing())
    return strategy.map(lambda a: a.astype(np_dtype(dtype)))


def poisoned(shape, dtype: str) -> np.ndarray:
    """An output array whose every element is poison: NaN for floats, bytes 0xAB otherwise."""
    out = np.empty(shape, np_dtype(dtype))
    if is_float(dtype):
        out[...] = np.nan
    else:
        out.view(np.uint8)[...] = 0xAB
    return out


def specials(dtype: str) -> np.ndarray:
    """The non-random values worth a look: range ends, +-1, +-inf, NaN, tiny and huge values
    (never zero: an unsigned type's lowest value here is 1)."""
    if not is_float(dtype):
        lo, hi = int_range(dtype)
        values = [lo or 1, lo + 1, hi, hi - 1, 1, 2, 3, 7]
        if is_signed(dtype):
            values += [-1, -2, -3, -7]
        return np.array(values, dtype=object).astype(np_dtype(dtype))
    p, emin, emax = _FORMATS[dtype]
    largest = (2 - 2.0 ** (1 - p)) * 2.0**emax
    values = [
        1.0,
        -1.0,
        1.5,
        -2.5,
        np.inf,
        -np.inf,
        np.nan,
        largest,
        -largest,
        2.0**emin,
        -(2.0**emin),
        2.0 ** (emin - p + 1),
        3.0 * 2.0 ** (emin - p + 1),
        1.0 / 3.0,
        100.0,
    ]
    return np.array(values, np.float64).astype(np_dtype(dtype))
