"""The type system of the kernel language: scalar dtypes, pointers, blocks and tuples.

Names and spellings are Triton's (`str(float32) == "fp32"`, signature strings such as `*fp16`), so
kernels, error messages and signatures read the same in both. The language's modules read every
type through this one (`from . import dtypes as t`); the types live in three:

- scalar_types.py: the `dtype` class (the base of every type) and the scalar constants;
- compound_types.py: pointers, blocks (tensors), tuples and constexprs;
- type_spellings.py: signature strings and the dtype names of NumPy, ml_dtypes and torch.
"""

from .compound_types import (
    block_type,
    const_pointer_type,
    constexpr_type,
    pi32_t,
    pointer_type,
    tuple_type,
)
from .scalar_types import (
    FP_TYPES,
    OTHER_TYPES,
    SINT_TYPES,
    UINT_TYPES,
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
    void,
)
from .type_spellings import HOST_NAME_TO_DTYPE, SIGNATURE_TO_DTYPE, str_to_ty, ty_to_signature

__all__ = [
    "FP_TYPES",
    "HOST_NAME_TO_DTYPE",
    "OTHER_TYPES",
    "SIGNATURE_TO_DTYPE",
    "SINT_TYPES",
    "UINT_TYPES",
    "bfloat16",
    "block_type",
    "const_pointer_type",
    "constexpr_type",
    "dtype",
    "float8e4b8",
    "float8e4b15",
    "float8e4nv",
    "float8e5",
    "float8e5b16",
    "float16",
    "float32",
    "float64",
    "int1",
    "int8",
    "int16",
    "int32",
    "int64",
    "pi32_t",
    "pointer_type",
    "str_to_ty",
    "tuple_type",
    "ty_to_signature",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "void",
]
