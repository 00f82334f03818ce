"""Lowering of scalar `arith`, `math` and elementwise `tt` ops to LLVM IR, with Naiad's semantics.

    ctx = ScalarContext(module)
    [value] = lower_scalar_op(builder, op, [lhs, rhs], ctx)    # llvmlite values in, out

Every loop body of the CPU back end goes through here: the body ops of a `linalg.generic` and a
kernel's scalar ops. The values are each type's storage bits (`llvm_type`: f16 and bf16 as i16,
fp8 as i8), and the results are bit-exact with the interpreter wherever the tolerance table says
exact: integer division and shifts as the GPU defines them, saturating float -> int, the GPU's
float conversions, NaN-aware min / max. No branches and no calls but intrinsics and the math
library's inlinable functions, so the loops around them vectorize. One module per family:

    integers.py        + - * / % shifts min max mulhi abs bit counts ipowi
    floats.py          + - * / rem fma sqrt rsqrt min max clamp sign rounding isnan isinf
    conversions.py     int <-> int <-> float <-> float, bitcasts (float_bits.py: narrow formats)
    compare_select.py  cmpi cmpf select constant
    pointers.py        addptr int_to_ptr ptr_to_int
    math_ops.py        exp log sin ... through the math library
    libdevice/         tt.extern_elementwise
"""

from . import (  # noqa: F401 (each family registers its lowerings)
    compare_select,
    conversions,
    floats,
    integers,
    libdevice,
    math_ops,
    pointers,
)
from .registry import LOWERINGS, ScalarContext, lower_scalar_op
from .types import llvm_type

__all__ = ["LOWERINGS", "ScalarContext", "llvm_type", "lower_scalar_op"]
