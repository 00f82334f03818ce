"""How types are spelled outside a kernel: signature strings (`*fp16`, `*ki32`, `i64`) and the
dtype names of NumPy, ml_dtypes and torch.
"""

from __future__ import annotations

from .compound_types import constexpr_type, pointer_type, tuple_type
from .scalar_types import (
    bfloat16,
    dtype,
    float8e4b8,
    float8e4b15,
    float8e4nv,
    float8e5,
    float8e5b16,
    float16,
    float32,
    float64,
    int1,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)

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


def str_to_ty(name, c=None) -> dtype:
    """A signature string (`*fp16`, `*ki32`, `i64`) as a dtype; as Triton's `tl.str_to_ty`,
    `'constexpr'` is the type of the constant `c`, and a tuple of strings a tuple type."""
    if isinstance(name, tuple):
        return tuple_type([str_to_ty(part, c) for part in name], getattr(name, "_fields", None))
    if name == "constexpr":
        return constexpr_type(c)
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
