"""The dtypes of the language's arithmetic tests: Triton's names, their NumPy dtypes, widths,
ranges and float formats (significand and exponent bounds, for the exact rounding references)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

import naiad.language as tl

INT_DTYPES = ("int8", "int16", "int32", "int64")
UINT_DTYPES = ("uint8", "uint16", "uint32", "uint64")
INTEGRAL_DTYPES = INT_DTYPES + UINT_DTYPES
FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")
DTYPES = INTEGRAL_DTYPES + FLOAT_DTYPES  # Triton's dtypes_with_bfloat16
DTYPES_WITH_BOOL = ("int1", *DTYPES)

_NP = {
    "int1": np.dtype(bool),
    **{name: np.dtype(name) for name in INTEGRAL_DTYPES},
    "float16": np.dtype(np.float16),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "float32": np.dtype(np.float32),
    "float64": np.dtype(np.float64),
    "float8e4nv": np.dtype(ml_dtypes.float8_e4m3fn),
    "float8e5": np.dtype(ml_dtypes.float8_e5m2),
}
_TL_NAMES = {"int1": "int1", "bool": "int1"}

# (significand bits with the implicit one, smallest normal exponent, largest exponent)
_FORMATS = {
    "float16": (11, -14, 15),
    "bfloat16": (8, -126, 127),
    "float32": (24, -126, 127),
    "float64": (53, -1022, 1023),
    "float8e5": (3, -14, 15),
}


def np_dtype(name: str) -> np.dtype:
    """The NumPy dtype of host arrays holding values of the Triton dtype `name`."""
    return _NP[name]


def tl_dtype(name: str):
    """`tl.<name>` for a NumPy-style name ("float16", "bfloat16", "int1", "uint32", ...)."""
    return getattr(tl, _TL_NAMES.get(name, name))


def bitwidth(name: str) -> int:
    return 1 if name == "int1" else np_dtype(name).itemsize * 8


def is_float(name: str) -> bool:
    return name.startswith(("float", "bfloat"))


def is_signed(name: str) -> bool:
    return name in INT_DTYPES


def is_unsigned(name: str) -> bool:
    return name in UINT_DTYPES or name == "int1"


def int_range(name: str) -> tuple[int, int]:
    bits = bitwidth(name)
    if is_signed(name):
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1
