"""The type system of the kernel language: scalar dtypes, pointers, blocks and tuples.

Names and spellings are Triton's (`str(float32) == "fp32"`, signature strings such as `*fp16`), so
kernels, error messages and signatures read the same in both.
"""

from __future__ import annotations

from enum import Enum
from functools import cached_property

SINT_TYPES = ("int8", "int16", "int32", "int64")
UINT_TYPES = ("int1", "uint8", "uint16", "uint32", "uint64")
FP_TYPES = ("fp8e4b15", "fp8e4nv", "fp8e4b8", "fp8e5", "fp8e5b16", "fp16", "bf16", "fp32", "fp64")
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
        return self.name in ("fp16", "bf16", "fp32", "fp64")

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
        return f"naiad.language.{_NAME_TO_PUBLIC.get(self.name, self.name)}"

    def mangle(self) -> str:
        return self.codegen_name


class pointer_type(dtype):
    """A pointer to `element_ty` in `address_space` (1 = global); `const` ones are read-only."""

    def __init__(self, element_ty: dtype, address_space: int = 1, const: bool = False):
        element_ty = getattr(element_ty, "value", element_ty)
        if not isinstance(element_ty, dtype):
            raise TypeError(f"pointer element type must be a dtype, got {element_ty!r}")
        self.element_ty = element_ty
        self.address_space = address_space
        self.const = const
        self.name = f"pointer<{element_ty}>" if not const else f"const_pointer<{element_ty}>"
        self.primitive_bitwidth = 64

    def is_ptr(self):
        return True

    def is_const(self):
        return self.const

    @property
    def scalar(self):
        return self

    def mangle(self):
        return f"P{self.element_ty.mangle()}"

    def __eq__(self, other):
        if not isinstance(other, dtype):
            return NotImplemented
        return (
            isinstance(other, pointer_type)
            and self.element_ty == other.element_ty
            and self.address_space == other.address_space
            and self.const == other.const
        )

    def __hash__(self):
        return hash(("ptr", self.element_ty, self.address_space, self.const))

    def __str__(self):
        return self.name

    def __repr__(self):
        return self.name


class const_pointer_type(pointer_type):
    """A read-only pointer (Triton's `*k` signature prefix)."""

    def __init__(self, element_ty: dtype, address_space: int = 1):
        super().__init__(element_ty, address_space, const=True)


class block_type(dtype):
    """A tensor type: `shape` (a tuple of ints) of `element_ty` scalars (which may be pointers)."""

    def __init__(self, element_ty: dtype, shape):
        self.element_ty = element_ty
        self.shape = tuple(int(getattr(s, "value", s)) for s in shape)
        if not self.shape:
            raise TypeError("0d block_type is forbidden")
        self.numel = 1
        for s in self.shape:
            self.numel *= s
        self.name = f"<{self.shape}, {self.element_ty}>"
        self.primitive_bitwidth = element_ty.primitive_bitwidth

    def is_block(self):
        return True

    def is_ptr(self):
        return False

    @property
    def scalar(self):
        return self.element_ty

    def get_block_shapes(self):
        return self.shape

    def with_element_ty(self, scalar_ty):
        return block_type(scalar_ty, self.shape)

    def mangle(self):
        return f"{self.element_ty.mangle()}S{'_'.join(map(str, self.shape))}S"

    def __eq__(self, other):
        if not isinstance(other, dtype):
            return NotImplemented
        return (
            isinstance(other, block_type)
            and self.element_ty == other.element_ty
            and self.shape == other.shape
        )

    def __hash__(self):
        return hash(("block", self.element_ty, self.shape))

    def __str__(self):
        return self.name

    __repr__ = __str__


class tuple_type(dtype):
    """The type of a `tl.tuple`: the types of its elements, and field names for named tuples."""

    def __init__(self, types, fields=None):
        self.types = list(types)
        self.fields = list(fields) if fields else [""] * len(self.types)
        self.name = (
            "["
            + ",".join(f"{f}:{t}" if f else str(t) for f, t in zip(self.fields, self.types))
            + "]"
        )

    def __iter__(self):
        return iter(self.types)

    def __getitem__(self, index):
        return self.types[index]

    def __len__(self):
        return len(self.types)

    def is_tuple(self):
        return True

    def mangle(self):
        return "T" + "_".join(t.mangle() for t in self.types) + "T"

    def __eq__(self, other):
        if not isinstance(other, dtype):
            return NotImplemented
        return (
            isinstance(other, tuple_type)
            and self.types == other.types
            and self.fields == other.fields
        )

    def __hash__(self):
        return hash(("tuple", tuple(self.types), tuple(self.fields)))

    __repr__ = dtype.__str__


class constexpr_type(dtype):
    """The type of a compile-time constant value (it lives in the key, not in the IR)."""

    def __init__(self, value):
        self.value = value
        self.name = f"constexpr[{value!r}]"

    def mangle(self):
        return f"c{self.value!r}"

    def __eq__(self, other):
        if not isinstance(other, dtype):
            return NotImplemented
        return isinstance(other, constexpr_type) and self.value == other.value

    def __hash__(self):
        return hash(("constexpr", repr(self.value)))

    __repr__ = dtype.__str__


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
pi32_t = pointer_type(int32)

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

# Signature spellings (`i32`, `fp16`, `u1`, ...) to dtypes, as in kernel signatures and annotations.
SIGNATURE_TO_DTYPE = {
    "i1": int1,
    "u1": int1,
    "i8": int8,
    "i16": int16,
    "i32": int32,
    "i64": int64,
    "u8": uint8,
    "u16": uint16,
    "u32": uint32,
    "u64": uint64,
    "fp8e5": float8e5,
    "fp8e5b16": float8e5b16,
    "fp8e4nv": float8e4nv,
    "fp8e4b8": float8e4b8,
    "fp8e4b15": float8e4b15,
    "fp16": float16,
    "bf16": bfloat16,
    "fp32": float32,
    "fp64": float64,
}

# Names of dtypes as NumPy, ml_dtypes and torch spell them (`str(x.dtype)` without `torch.`).
HOST_NAME_TO_DTYPE = {
    "bool": int1,
    "int8": int8,
    "int16": int16,
    "int32": int32,
    "int64": int64,
    "uint8": uint8,
    "uint16": uint16,
    "uint32": uint32,
    "uint64": uint64,
    "float16": float16,
    "half": float16,
    "bfloat16": bfloat16,
    "float32": float32,
    "float": float32,
    "float64": float64,
    "double": float64,
    "float8_e4m3fn": float8e4nv,
    "float8_e5m2": float8e5,
    "float8_e4m3fnuz": float8e4b8,
    "float8_e5m2fnuz": float8e5b16,
}


def str_to_ty(name: str) -> dtype:
    """A signature string (`*fp16`, `*ki32`, `i64`) as a dtype."""
    if name.startswith("*"):
        rest = name[1:]
        const = rest.startswith("k")
        if const:
            rest = rest[1:]
        return pointer_type(str_to_ty(rest), const=const)
    try:
        return SIGNATURE_TO_DTYPE[name]
    except KeyError:
        raise TypeError(f"unknown type string {name!r}") from None


def ty_to_signature(ty: dtype) -> str:
    """The inverse of `str_to_ty`."""
    if isinstance(ty, pointer_type):
        return "*" + ("k" if ty.const else "") + ty_to_signature(ty.element_ty)
    if ty.is_int1():
        return "i1"
    return ty.codegen_name
