"""`naiad.language` — the kernel language, with the names and semantics of `triton.language`.

Write `import naiad.language as tl` and use it exactly as `triton.language`.
"""

from . import extra, math  # noqa: F401
from .core import (
    TRITON_MAX_TENSOR_NUMEL, PropagateNan, bfloat16, block_type, const, constexpr,
    constexpr_function, constexpr_type, dtype, float8e4b8, float8e4b15, float8e4nv, float8e5,
    float8e5b16, float16, float32, float64, int1, int8, int16, int32, int64, must_use_result, pi32_t,
    pointer_type, slice, tensor, tuple, tuple_type, uint8, uint16, uint32, uint64, void,
)
from .creation import arange, cast, full, num_programs, program_id, to_tensor
from .debug import (
    assume, debug_barrier, device_assert, device_print, inline_asm_elementwise, map_elementwise,
    max_constancy, max_contiguous, multiple_of, static_assert, static_print,
)
from .iterators import condition, range, static_range
from .linalg import dot, dot_scaled
from .math import (
    abs, add, ceil, clamp, cos, div_rn, erf, exp, exp2, fdiv, floor, fma, log, log2, maximum,
    minimum, mul, rsqrt, sin, sqrt, sqrt_rn, sub, umulhi, where,
)
from .memory import (
    advance, atomic_add, atomic_and, atomic_cas, atomic_max, atomic_min, atomic_or, atomic_xchg,
    atomic_xor, load, load_tensor_descriptor, make_block_ptr, make_tensor_descriptor, store,
    store_tensor_descriptor, tensor_descriptor, tensor_descriptor_type,
)
from .random import (
    pair_uniform_to_normal, philox, philox_impl, rand, rand4x, randint, randint4x, randn, randn4x,
    uint_to_uniform_float,
)
from .reduction import associative_scan, reduce
from .shape import (
    broadcast, broadcast_to, cat, expand_dims, gather, histogram, interleave, item, join, permute,
    reshape, split, squeeze, trans, unsqueeze, view,
)
from .sorting import bitonic_merge, flip, sort, topk
from .standard import (
    argmax, argmin, cdiv, cumprod, cumsum, max, min, ravel, reduce_or, sigmoid, softmax, sum,
    swizzle2d, xor_sum, zeros, zeros_like,
)
from .target import TargetInfo as target_info  # noqa: F401

__all__ = [
    "PropagateNan", "TRITON_MAX_TENSOR_NUMEL", "load_tensor_descriptor", "store_tensor_descriptor",
    "make_tensor_descriptor", "tensor_descriptor", "tensor_descriptor_type", "abs", "add", "advance",
    "arange", "argmax", "argmin", "associative_scan", "assume", "atomic_add", "atomic_and",
    "atomic_cas", "atomic_max", "atomic_min", "atomic_or", "atomic_xchg", "atomic_xor", "bfloat16",
    "bitonic_merge", "block_type", "broadcast", "broadcast_to", "cat", "cast", "cdiv", "ceil",
    "clamp", "condition", "const", "constexpr", "constexpr_function", "constexpr_type", "cos",
    "cumprod", "cumsum", "debug_barrier", "device_assert", "device_print", "div_rn", "dot",
    "dot_scaled", "dtype", "erf", "exp", "exp2", "expand_dims", "extra", "fdiv", "flip", "float16",
    "float32", "float64", "float8e4b15", "float8e4nv", "float8e4b8", "float8e5", "float8e5b16",
    "floor", "fma", "full", "gather", "histogram", "inline_asm_elementwise", "interleave", "int1",
    "int16", "int32", "int64", "int8", "item", "join", "load", "log", "log2", "make_block_ptr",
    "map_elementwise", "math", "max", "max_constancy", "max_contiguous", "maximum", "min",
    "minimum", "mul", "multiple_of", "num_programs", "pair_uniform_to_normal", "permute", "philox",
    "philox_impl", "pi32_t", "pointer_type", "program_id", "rand", "rand4x", "randint", "randint4x",
    "randn", "randn4x", "range", "ravel", "reduce", "reduce_or", "reshape", "rsqrt", "slice",
    "sigmoid", "sin", "softmax", "sort", "split", "sqrt", "sqrt_rn", "squeeze", "static_assert",
    "static_print", "static_range", "store", "sub", "sum", "swizzle2d", "target_info", "tensor",
    "to_tensor", "topk", "trans", "tuple", "tuple_type", "uint16", "uint32", "uint64", "uint8",
    "uint_to_uniform_float", "umulhi", "unsqueeze", "view", "void", "where", "xor_sum", "zeros",
    "zeros_like",
]
