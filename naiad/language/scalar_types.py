"""The scalar dtypes of the kernel language: the `dtype` class and one shared constant per type.

`dtype` is also the base of the compound types (compound_types.py). Names and spellings are
Triton's (`str(float32) == "fp32"`, `repr(float32) == "naiad.language.float32"`).
"""

from __future__ import annotations

import sys
from enum import Enum
from functools import cached_property

SINT_TYPES = ("int8", "int16", "int32", "int64")
UINT_TYPES = ("int1", "uint8", "uint16", "uint32", "uint64")
FP_TYPES = ("fp8e4b15", "fp8e4nv", "fp8e4b8", "fp8e5", "fp8e5b16", "fp16", "bf16", "fp32", "fp64")
STANDARD_FP_TYPES = ("fp16", "bf16", "fp32", "fp64")
OTHER_TYPES = ("void",)

# (exponent bits, mantissa bits, exponent bias) of each floating-point format.
_FP_LAYOUT = {
    "fp8e4b15": (4, 3, 15),
    "fp8e4nv": (4, 3, 7),
    "fp8e4b8": (4, 3, 8),
    "fp8e5": (5, 2, 15),
    "fp8e5b16": (5, 2, 16),
    "fp16": (5, 10, 15),
    "bf16": (8, 7, 127),
    "fp32": (8, 23, 127),
    "fp64": (11, 52, 1023),
}


class dtype:
    """A scalar element type. Equality is by name; instances are shared module constants."""

    SINT_TYPES = SINT_TYPES
    UINT_TYPES = UINT_TYPES
    FP_TYPES = FP_TYPES
    STANDARD_FP_TYPES = STANDARD_FP_TYPES
    OTHER_TYPES = OTHER_TYPES

    class SIGNEDNESS(Enum):
        SIGNED = 0
        UNSIGNED = 1

    class KIND(Enum):
        BOOLEAN = 0
        INTEGRAL = 1
        FLOATING = 2

    def __init__(self, name: str):
        name = getattr(name, "value", name)
        if name not in SINT_TYPES + UINT_TYPES + FP_TYPES + OTHER_TYPES:
            raise TypeError(f"unknown dtype name {name!r}")
        self.name = name
        if name in SINT_TYPES:
            self.int_signedness = dtype.SIGNEDNESS.SIGNED
            self.int_bitwidth = int(name[3:])
            self.primitive_bitwidth = self.int_bitwidth
        elif name in UINT_TYPES:
            self.int_signedness = dtype.SIGNEDNESS.UNSIGNED
            self.int_bitwidth = int(name.split("int")[-1])
            self.primitive_bitwidth = self.int_bitwidth
        elif name in FP_TYPES:
            exp, mant, bias = _FP_LAYOUT[name]
            self.fp_mantissa_width = mant
            self.exponent_bias = bias
            self.primitive_bitwidth = 1 + exp + mant
        else:
            self.primitive_bitwidth = 0

    # -- classification -------------------------------------------------------------------------
    def is_fp8(self):
        return self.name.startswith("fp8")

    def is_fp8e4nv(self):
        return self.name == "fp8e4nv"

    def is_fp8e4b8(self):
        return self.name == "fp8e4b8"

    def is_fp8e4b15(self):
        return self.name == "fp8e4b15"

    def is_fp8e5(self):
        return self.name == "fp8e5"

    def is_fp8e5b16(self):
        return self.name == "fp8e5b16"

    def is_fp16(self):
        return self.name == "fp16"

    def is_bf16(self):
        return self.name == "bf16"

    def is_fp32(self):
        return self.name == "fp32"

    def is_fp64(self):
        return self.name == "fp64"

    def is_int1(self):
        return self.name == "int1"

    def is_int8(self):
        return self.name == "int8"

    def is_int16(self):
        return self.name == "int16"

    def is_int32(self):
        return self.name == "int32"

    def is_int64(self):
        return self.name == "int64"

    def is_uint8(self):
        return self.name == "uint8"

    def is_uint16(self):
        return self.name == "uint16"

    def is_uint32(self):
        return self.name == "uint32"

    def is_uint64(self):
        return self.name == "uint64"

    def is_floating(self):
        return self.name in FP_TYPES

    def is_standard_floating(self):
        return self.name in STANDARD_FP_TYPES

    def is_int_signed(self):
        return self.name in SINT_TYPES

    def is_int_unsigned(self):
        return self.name in UINT_TYPES

    def is_int(self):
        return self.name in SINT_TYPES + UINT_TYPES

    def is_bool(self):
        return self.is_int1()

    def kind(self):
        if self.is_bool():
            return dtype.KIND.BOOLEAN
        if self.is_int():
            return dtype.KIND.INTEGRAL
        return dtype.KIND.FLOATING

    def is_void(self):
        return self.name == "void"

    @staticmethod
    def is_dtype(type_str):
        return type_str in SINT_TYPES + UINT_TYPES + FP_TYPES + OTHER_TYPES

    def is_block(self):
        return False

    def is_ptr(self):
        return False

    def is_const(self):
        return False

    def is_tuple(self):
        return False

    # -- integer range --------------------------------------------------------------------------
    def get_int_max_value(self):
        if self.is_int_signed():
            return 2 ** (self.int_bitwidth - 1) - 1
        if self.is_int_unsigned():
            return 2**self.int_bitwidth - 1
        raise TypeError(f"{self} is not an integer type")

    def get_int_min_value(self):
        if self.is_int_signed():
            return -(2 ** (self.int_bitwidth - 1))
        if self.is_int_unsigned():
            return 0
        raise TypeError(f"{self} is not an integer type")

    # -- structure ------------------------------------------------------------------------------
    @property
    def scalar(self):
        return self

    def get_block_shapes(self):
        return ()

    def with_element_ty(self, element_ty):
        return element_ty

    @cached_property
    def codegen_name(self):
        if self.is_int():
            return ("i" if self.is_int_signed() or self.is_int1() else "u") + str(self.int_bitwidth)
        return self.name

    @property
    def cache_key_part(self) -> str:
        return self.name

    def __eq__(self, other):
        # Not a dtype (e.g. a `tl.constexpr` holding one): let the other side answer, as Triton's
        # code generator does for `x.dtype == DTYPE` with a constexpr DTYPE.
        if not isinstance(other, dtype):
            return NotImplemented
        return type(other) is type(self) and self.name == other.name

    def __hash__(self):
        return hash((type(self).__name__, self.name))

    def __str__(self):
        return self.name

    def __repr__(self):
        return f"{_public_package()}.{_NAME_TO_PUBLIC.get(self.name, self.name)}"

    def mangle(self) -> str:
        return self.codegen_name


def _public_package() -> str:
    """Where a dtype's repr is found again by `eval`: `triton.language` while Naiad stands in
    for Triton (that name is then this package: generated kernel source and Triton's tests
    read it so), else `naiad.language`."""
    package = sys.modules.get(__package__)
    switched = package is not None and getattr(sys.modules.get("triton"), "language", 0) is package
    return "triton.language" if switched else "naiad.language"


void = dtype("void")
int1 = dtype("int1")
int8 = dtype("int8")
int16 = dtype("int16")
int32 = dtype("int32")
int64 = dtype("int64")
uint8 = dtype("uint8")
uint16 = dtype("uint16")
uint32 = dtype("uint32")
uint64 = dtype("uint64")
float8e5 = dtype("fp8e5")
float8e5b16 = dtype("fp8e5b16")
float8e4nv = dtype("fp8e4nv")
float8e4b8 = dtype("fp8e4b8")
float8e4b15 = dtype("fp8e4b15")
float16 = dtype("fp16")
bfloat16 = dtype("bf16")
float32 = dtype("fp32")
float64 = dtype("fp64")

_NAME_TO_PUBLIC = {
    "int1": "int1",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint8",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
    "fp8e5": "float8e5",
    "fp8e5b16": "float8e5b16",
    "fp8e4nv": "float8e4nv",
    "fp8e4b8": "float8e4b8",
    "fp8e4b15": "float8e4b15",
    "fp16": "float16",
    "bf16": "bfloat16",
    "fp32": "float32",
    "fp64": "float64",
    "void": "void",
}
