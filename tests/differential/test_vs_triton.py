"""Naiad's interpreter against Triton's language rules: the same kernel source through both.

Every kernel below is written once, as text, and generated twice into a temporary directory: after
`import triton.language as tl` with `jit = triton.jit`, and after `import naiad.language as tl`
with `jit = naiad.jit`. Both run on CPU torch tensors (Triton through its interpreter,
`TRITON_INTERPRET=1`). Each result goes through `emit`, a plain helper of the generated module: it
records the result's dtype and shape, bitcasts the value to the integer of its width, widens that to
int64 and stores it, so the store converts nothing and values compare bit for bit. A misuse must
raise in both (the messages may differ).

    TRITON_INTERPRET=1 python -m pytest tests/differential/test_vs_triton.py -q -m triton

Triton's interpreter is not the GPU. Where it computes something else than Triton's compiled code,
Naiad follows the compiler and the GPU (ARCHITECTURE.md, "Semantics"). Each such case is an
expected difference, listed in `EXPECTED` with its reason; the lanes where the two interpreters
then disagree are checked against a model of the GPU's rule written here instead (`gpu_*`), so an
expected difference never hides a wrong Naiad value. NaN payloads are not compared (NumPy's NaNs
are not the GPU's canonical NaN, in either interpreter); the sign of zero is.

Where Triton's interpreter runs the kernel as plain Python (`not`, `and`, unary `+`, `abs()`, loop
indices, loop-carried types, float arguments, the rounding of constants), compiled Triton's own
front end is the oracle: the kernels of `FRONTEND` are compiled to TTIR for sm_90 in a child
process (no GPU needed) and Naiad must accept, type and refuse as it does.
"""


from __future__ import annotations

import bisect
import importlib.util
import math
import os
import sys
import textwrap
import warnings
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache

import numpy as np
import pytest

# Triton decides at import (its standard library) and at decoration whether `triton.jit` makes
# interpreted functions, so the whole process must run with TRITON_INTERPRET=1. Without it this
# module neither sets it nor imports triton: a GPU test run in the same process keeps real Triton.
if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip("run with TRITON_INTERPRET=1 (and -m triton)", allow_module_level=True)
try:
    import torch
    import triton
    import triton.language  # noqa: F401
except Exception:
    pytest.skip("needs triton (and torch) for the differential test", allow_module_level=True)

import ml_dtypes

# The GPU models overflow and produce NaN on purpose (inf inputs, out-of-range conversions).
pytestmark = [pytest.mark.triton, pytest.mark.filterwarnings("ignore::RuntimeWarning")]

# Why Triton's interpreter is not the reference for a case; each key is used by the tests below.
EXPECTED = {
    "bf16": "Triton's interpreter holds bf16 as uint16 bits and applies NumPy's integer arithmetic "
    "and comparisons to them; its bf16 <-> fp32 conversion (`_convert_float`) rounds ties "
    "up and flushes subnormals, and int <-> bf16 casts reinterpret the bits. The GPU "
    "computes bf16 + - * in bf16 correctly rounded, compares values, converts exactly.",
    "get_bf16": "Triton's interpreter builder has no `get_bf16`, so a Python scalar operand with "
    "a bf16 tensor raises there; compiled Triton makes a bf16 constant (through a C "
    "float) and computes.",
    "fp8": "Triton's interpreter holds fp8 as uint8 bits (so np.negative negates the bits) and "
    "converts to and from fp8 with `_convert_float`: it rounds ties away from zero, "
    "neither saturates nor maps NaN/inf as the GPU's cvt.satfinite does. "
    "Naiad's conversions are checked against an H200 (tests/gpu/test_floats_triton.py).",
    "rtz": "Triton's interpreter truncates the bits for rtz, without the GPU's overflow rule and "
    "subnormal handling.",
    "fptoint": "Float -> int out of range or NaN is undefined in NumPy (Triton's interpreter); the "
    "GPU's cvt.rzi saturates (NaN -> 0; an 8-bit result is the low byte of the 16-bit "
    "conversion).",
    "idiv0": "Integer // and % by zero (and INT_MIN // -1): NumPy gives 0 (Triton's "
    "interpreter); Naiad gives its documented deterministic answer (docs/architecture.md: "
    "-1 / 1 / all ones for //, the dividend for %, INT_MIN // -1 wraps), which these "
    "lanes are checked against. The GPU's own answer is not fixed (LLVM leaves it "
    "undefined): measured on an H200 with Triton 3.6, signed 8/16/32-bit x // 0 is -1 "
    "for negative x too, 64-bit x // 0 is 0xffffffff for small x, and x % 0 is x when "
    "the kernel also computes x // 0 but -1 when it computes x % 0 alone.",
    "fma": "Triton's interpreter computes fma as x * y + z with two roundings; fma.rn rounds "
    "once (fp16, fp32, fp64; measured on an H200 for fp16 and fp32).",
    "fp16_scalar": "A Python float with an fp16 tensor: compiled Triton passes it to `get_fp16` "
    "as a C float (rounded to fp32 first, then to fp16); Triton's interpreter "
    "rounds the double to fp16 once.",
    "float_arg": "Triton's interpreter passes a float kernel argument as a Python float (a weak "
    "scalar); compiled Triton makes it an fp32 scalar, which takes part in promotion.",
    "bool_arith": "NumPy refuses `-` on booleans, so Triton's interpreter crashes on 0 - x for "
    "int1; compiled Triton emits arith.subi on i1 (modulo 2).",
    "all_ones": "Triton's interpreter makes the all-ones value of an unsigned type with "
    "np.full(1, -1, uint), which NumPy 2 refuses; compiled Triton xors with all ones.",
    "umulhi": "Triton's umulhi is tt.mulhiui for every integer type (the unsigned high half); "
    "its interpreter sign-extends int32 operands before an unsigned 64-bit multiply, "
    "and for 64 bits stores the high half with np.uint64, which refuses a negative one.",
    "sum_overflow": "Triton's interpreter sums int32 with np.sum (in int64) and then refuses the "
    "result that does not fit int32; the GPU's sum wraps around.",
    "keepdims": "Triton's interpreter's generic reduce keeps one dimension for axis=None, "
    "keep_dims=True; compiled Triton's `reduce` keeps every dimension (expand_ndims).",
    "triton_bug": "Triton 3.8 crashes here on any target: `flip(x)` with its default dim=None "
    "compares None in a static_assert; `topk(x, 1)` of a 1-D block reshapes a "
    "scalar. Naiad gives the documented result (flip the last dimension; the top "
    "value as a block of 1).",
    "verifier": "Triton's interpreter skips the IR verifier, which refuses these in compiled "
    "Triton (math.fma on integers).",
    "bf16_const": "Compiled Triton's `get_bf16(float)` builds the constant by parsing "
    "std::to_string(v), six decimals: below 5e-7 a bf16 constant is 0 and digits "
    "past the sixth decimal are lost. Naiad rounds the fp32 value to bf16 (not "
    "resolved: copying a string round trip is kept out of the reference).",
    "loop_index": "Triton's interpreter runs `range` as Python's, so the loop index is a Python "
    "int (a weak scalar); compiled Triton types it (int32 here), as Naiad does.",
    "not": "Triton's interpreter evaluates `not x` with Python truthiness (a block is always "
    "true); compiled Triton calls `tensor.__not__`, which inverts an int1 tensor and "
    "rejects any other type (it bitcasts to int1).",
    "signed_zero": "NumPy's fmin/fmax/minimum/maximum (Triton's interpreter) do not order -0.0 "
    "below +0.0; the GPU does (measured on an H200 with Triton 3.6: minimum(+0, "
    "-0) = -0 and maximum(-0, +0) = +0, with either NaN rule).",
    "nanarg": "Triton's interpreter runs argmax/argmin with np.nanargmax/np.nanargmin, skipping "
    "NaN; the GPU runs the combine function, in which comparisons with NaN are false "
    "(a NaN on the right of a comparison wins, on the left it loses), in the order of "
    "its layout. Naiad combines neighbours pairwise; these lanes are checked against "
    "that tree.",
    "reduce_order": "Float sums and products are compared within a norm-wise bound: Triton's "
    "interpreter accumulates with NumPy (pairwise or sequential), Naiad as a tree; "
    "neither is the GPU's order.",
}

N = 64  # lanes of the one-operand kernels
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
FLOATS = ("fp16", "bf16", "fp32", "fp64")
DTYPES = INTS + FLOATS
FP8 = ("fp8e4nv", "fp8e5")
ALL = ("int1",) + DTYPES + FP8

TORCH = {
    "int1": torch.bool,
    "int8": torch.int8,
    "int16": torch.int16,
    "int32": torch.int32,
    "int64": torch.int64,
    "uint8": torch.uint8,
    "uint16": torch.uint16,
    "uint32": torch.uint32,
    "uint64": torch.uint64,
    "fp16": torch.float16,
    "bf16": torch.bfloat16,
    "fp32": torch.float32,
    "fp64": torch.float64,
    "fp8e4nv": torch.float8_e4m3fn,
    "fp8e5": torch.float8_e5m2,
}
NUMPY = {
    "int1": np.dtype(np.bool_),
    "int8": np.dtype(np.int8),
    "int16": np.dtype(np.int16),
    "int32": np.dtype(np.int32),
    "int64": np.dtype(np.int64),
    "uint8": np.dtype(np.uint8),
    "uint16": np.dtype(np.uint16),
    "uint32": np.dtype(np.uint32),
    "uint64": np.dtype(np.uint64),
    "fp16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "fp32": np.dtype(np.float32),
    "fp64": np.dtype(np.float64),
    "fp8e4nv": np.dtype(ml_dtypes.float8_e4m3fn),
    "fp8e5": np.dtype(ml_dtypes.float8_e5m2),
}
WIDTH = {"int1": 1, "fp16": 16, "bf16": 16, "fp32": 32, "fp64": 64, "fp8e4nv": 8, "fp8e5": 8}
WIDTH.update({name: int(name.lstrip("uint")) for name in INTS})


def is_float(name):
    return name in FLOATS or name in FP8


def is_int(name):
    return name in INTS or name == "int1"


# -------------------------------------------------------------------------------------------------
# The kernels: one source, two front ends
# -------------------------------------------------------------------------------------------------
HEADER = '''
import {lib}
import {lib}.language as tl

jit = {lib}.jit
RESULTS = []  # (dtype name, shape) of each emitted value, in order
SLOT = 256
_INT = {{8: tl.int8, 16: tl.int16, 32: tl.int32, 64: tl.int64}}


def emit(out_ptr, value, slot=0):
    """Record `value`'s type and store its bits (as int64) at out_ptr[slot * SLOT:]."""
    if not isinstance(value, tl.tensor):
        RESULTS.append(("python:" + type(value).__name__, ()))
        return
    shape = tuple(int(s) for s in value.shape)
    RESULTS.append((value.dtype.name, shape))
    bits = value.dtype.primitive_bitwidth
    v = value.to(tl.int8) if bits == 1 else value.to(_INT[bits], bitcast=True)
    v = v.to(tl.int64)
    numel = 1
    for s in shape:
        numel *= s
    if not shape:
        tl.store(out_ptr + slot * SLOT, v)
    else:
        tl.store(out_ptr + slot * SLOT + tl.arange(0, numel), tl.reshape(v, [numel]))
'''

BINARY_OPS = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "truediv": "/",
    "floordiv": "//",
    "mod": "%",
    "and": "&",
    "or": "|",
    "xor": "^",
    "shl": "<<",
    "shr": ">>",
    "lt": "<",
    "le": "<=",
    "gt": ">",
    "ge": ">=",
    "eq": "==",
    "ne": "!=",
}
COMPARISONS = ("lt", "le", "gt", "ge", "eq", "ne")

KERNELS = []
for _name, _op in BINARY_OPS.items():
    KERNELS.append(f"""
@jit
def tt_{_name}(out_ptr, x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    emit(out_ptr, tl.load(x_ptr + offs) {_op} tl.load(y_ptr + offs))


@jit
def ts_{_name}(out_ptr, x_ptr, N: tl.constexpr, S: tl.constexpr):
    emit(out_ptr, tl.load(x_ptr + tl.arange(0, N)) {_op} S)


@jit
def st_{_name}(out_ptr, x_ptr, N: tl.constexpr, S: tl.constexpr):
    emit(out_ptr, S {_op} tl.load(x_ptr + tl.arange(0, N)))


@jit
def tr_{_name}(out_ptr, x_ptr, s, N: tl.constexpr):
    emit(out_ptr, tl.load(x_ptr + tl.arange(0, N)) {_op} s)


@jit
def t0_{_name}(out_ptr, x_ptr, y_ptr, N: tl.constexpr):
    emit(out_ptr, tl.load(x_ptr + tl.arange(0, N)) {_op} tl.load(y_ptr))
""")

KERNELS.append("""
@jit
def unary_neg(out_ptr, x_ptr, N: tl.constexpr):
    emit(out_ptr, -tl.load(x_ptr + tl.arange(0, N)))


@jit
def unary_invert(out_ptr, x_ptr, N: tl.constexpr):
    emit(out_ptr, ~tl.load(x_ptr + tl.arange(0, N)))


@jit
def unary_not(out_ptr, x_ptr, N: tl.constexpr):
    emit(out_ptr, not tl.load(x_ptr + tl.arange(0, N)))


@jit
def unary_plus(out_ptr, x_ptr, N: tl.constexpr):
    emit(out_ptr, +tl.load(x_ptr + tl.arange(0, N)))


@jit
def unary_abs_builtin(out_ptr, x_ptr, N: tl.constexpr):
    emit(out_ptr, abs(tl.load(x_ptr + tl.arange(0, N))))


@jit
def unary_neg_scalar(out_ptr, S: tl.constexpr):
    x = S
    emit(out_ptr, -x)


@jit
def cast(out_ptr, x_ptr, N: tl.constexpr, DST: tl.constexpr, ROUNDING: tl.constexpr):
    emit(out_ptr, tl.load(x_ptr + tl.arange(0, N)).to(DST, fp_downcast_rounding=ROUNDING))


@jit
def bitcast(out_ptr, x_ptr, N: tl.constexpr, DST: tl.constexpr):
    emit(out_ptr, tl.load(x_ptr + tl.arange(0, N)).to(DST, bitcast=True))


@jit
def cast_scalar(out_ptr, DST: tl.constexpr, S: tl.constexpr):
    emit(out_ptr, tl.cast(S, DST))
""")

MATH_1 = (
    "exp",
    "exp2",
    "log",
    "log2",
    "sin",
    "cos",
    "sqrt",
    "sqrt_rn",
    "rsqrt",
    "erf",
    "floor",
    "ceil",
    "abs",
)
for _f in MATH_1:
    KERNELS.append(f"""
@jit
def math_{_f}(out_ptr, x_ptr, N: tl.constexpr):
    emit(out_ptr, tl.{_f}(tl.load(x_ptr + tl.arange(0, N))))
""")

KERNELS.append("""
@jit
def math_fma(out_ptr, x_ptr, y_ptr, z_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    emit(out_ptr, tl.fma(tl.load(x_ptr + offs), tl.load(y_ptr + offs), tl.load(z_ptr + offs)))


@jit
def math_div_rn(out_ptr, x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    emit(out_ptr, tl.div_rn(tl.load(x_ptr + offs), tl.load(y_ptr + offs)))


@jit
def math_fdiv(out_ptr, x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    emit(out_ptr, tl.fdiv(tl.load(x_ptr + offs), tl.load(y_ptr + offs)))


@jit
def math_umulhi(out_ptr, x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    emit(out_ptr, tl.umulhi(tl.load(x_ptr + offs), tl.load(y_ptr + offs)))


@jit
def math_cdiv(out_ptr, x_ptr, N: tl.constexpr, D: tl.constexpr):
    emit(out_ptr, tl.cdiv(tl.load(x_ptr + tl.arange(0, N)), D))


@jit
def ext_minimum(out_ptr, x_ptr, y_ptr, N: tl.constexpr, NAN: tl.constexpr):
    offs = tl.arange(0, N)
    emit(out_ptr, tl.minimum(tl.load(x_ptr + offs), tl.load(y_ptr + offs), propagate_nan=NAN))


@jit
def ext_maximum(out_ptr, x_ptr, y_ptr, N: tl.constexpr, NAN: tl.constexpr):
    offs = tl.arange(0, N)
    emit(out_ptr, tl.maximum(tl.load(x_ptr + offs), tl.load(y_ptr + offs), propagate_nan=NAN))


@jit
def ext_minimum_s(out_ptr, x_ptr, N: tl.constexpr, S: tl.constexpr):
    emit(out_ptr, tl.minimum(tl.load(x_ptr + tl.arange(0, N)), S))


@jit
def ext_maximum_s(out_ptr, x_ptr, N: tl.constexpr, S: tl.constexpr):
    emit(out_ptr, tl.maximum(S, tl.load(x_ptr + tl.arange(0, N))))


@jit
def ext_clamp(out_ptr, x_ptr, lo_ptr, hi_ptr, N: tl.constexpr, NAN: tl.constexpr):
    offs = tl.arange(0, N)
    emit(out_ptr, tl.clamp(tl.load(x_ptr + offs), tl.load(lo_ptr + offs), tl.load(hi_ptr + offs),
                           propagate_nan=NAN))


@jit
def ext_clamp_s(out_ptr, x_ptr, N: tl.constexpr, LO: tl.constexpr, HI: tl.constexpr):
    emit(out_ptr, tl.clamp(tl.load(x_ptr + tl.arange(0, N)), LO, HI))


@jit
def sel_where(out_ptr, c_ptr, x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    emit(out_ptr, tl.where(tl.load(c_ptr + offs), tl.load(x_ptr + offs), tl.load(y_ptr + offs)))


@jit
def sel_where_s(out_ptr, c_ptr, x_ptr, N: tl.constexpr, S: tl.constexpr):
    offs = tl.arange(0, N)
    emit(out_ptr, tl.where(tl.load(c_ptr + offs), tl.load(x_ptr + offs), S))


@jit
def sel_where_ss(out_ptr, c_ptr, N: tl.constexpr, A: tl.constexpr, B: tl.constexpr):
    emit(out_ptr, tl.where(tl.load(c_ptr + tl.arange(0, N)), A, B))
""")

REDUCTIONS = ("sum", "max", "min", "argmax", "argmin", "xor_sum")
for _f in REDUCTIONS:
    _axis = "0" if _f.startswith("arg") else "None"
    KERNELS.append(f"""
@jit
def red_{_f}(out_ptr, x_ptr, N: tl.constexpr):
    emit(out_ptr, tl.{_f}(tl.load(x_ptr + tl.arange(0, N)), {_axis}))


@jit
def red2_{_f}(out_ptr, x_ptr, AXIS: tl.constexpr, KEEP: tl.constexpr):
    offs = tl.arange(0, 8)[:, None] * 8 + tl.arange(0, 8)[None, :]
    emit(out_ptr, tl.{_f}(tl.load(x_ptr + offs), AXIS, keep_dims=KEEP))
""")

KERNELS.append("""
@jit
def red_max_idx(out_ptr, x_ptr, N: tl.constexpr):
    v, i = tl.max(tl.load(x_ptr + tl.arange(0, N)), 0, return_indices=True)
    emit(out_ptr, v, 0)
    emit(out_ptr, i, 1)


@jit
def red_min_idx(out_ptr, x_ptr, N: tl.constexpr):
    v, i = tl.min(tl.load(x_ptr + tl.arange(0, N)), 0, return_indices=True)
    emit(out_ptr, v, 0)
    emit(out_ptr, i, 1)


@jit
def red_sum_dtype(out_ptr, x_ptr, N: tl.constexpr, DTYPE: tl.constexpr):
    emit(out_ptr, tl.sum(tl.load(x_ptr + tl.arange(0, N)), 0, dtype=DTYPE))


@jit
def scan_cumsum(out_ptr, x_ptr, N: tl.constexpr, REVERSE: tl.constexpr):
    emit(out_ptr, tl.cumsum(tl.load(x_ptr + tl.arange(0, N)), 0, reverse=REVERSE))


@jit
def scan_cumprod(out_ptr, x_ptr, N: tl.constexpr, REVERSE: tl.constexpr):
    emit(out_ptr, tl.cumprod(tl.load(x_ptr + tl.arange(0, N)), 0, reverse=REVERSE))


@jit
def scan_cumsum2(out_ptr, x_ptr, AXIS: tl.constexpr):
    offs = tl.arange(0, 8)[:, None] * 8 + tl.arange(0, 8)[None, :]
    emit(out_ptr, tl.cumsum(tl.load(x_ptr + offs), AXIS))


@jit
def sort_sort(out_ptr, x_ptr, N: tl.constexpr, DESCENDING: tl.constexpr):
    emit(out_ptr, tl.sort(tl.load(x_ptr + tl.arange(0, N)), descending=DESCENDING))


@jit
def sort_sort2(out_ptr, x_ptr, DESCENDING: tl.constexpr):
    offs = tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :]
    emit(out_ptr, tl.sort(tl.load(x_ptr + offs), descending=DESCENDING))


@jit
def sort_topk(out_ptr, x_ptr, N: tl.constexpr, K: tl.constexpr):
    emit(out_ptr, tl.topk(tl.load(x_ptr + tl.arange(0, N)), K))


@jit
def sort_flip(out_ptr, x_ptr, N: tl.constexpr):
    emit(out_ptr, tl.flip(tl.load(x_ptr + tl.arange(0, N))))


@jit
def sort_flip2(out_ptr, x_ptr, DIM: tl.constexpr):
    offs = tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :]
    emit(out_ptr, tl.flip(tl.load(x_ptr + offs), DIM))


@jit
def rng_randint(out_ptr, seed, off_ptr, N: tl.constexpr):
    emit(out_ptr, tl.randint(seed, tl.load(off_ptr + tl.arange(0, N))))


@jit
def rng_rand(out_ptr, seed, off_ptr, N: tl.constexpr):
    emit(out_ptr, tl.rand(seed, tl.load(off_ptr + tl.arange(0, N))))


@jit
def rng_randn(out_ptr, seed, off_ptr, N: tl.constexpr):
    emit(out_ptr, tl.randn(seed, tl.load(off_ptr + tl.arange(0, N))))


@jit
def rng_randint4x(out_ptr, seed, off_ptr, N: tl.constexpr):
    a, b, c, d = tl.randint4x(seed, tl.load(off_ptr + tl.arange(0, N)))
    emit(out_ptr, a, 0)
    emit(out_ptr, b, 1)
    emit(out_ptr, c, 2)
    emit(out_ptr, d, 3)


@jit
def rng_randint_scalar(out_ptr, seed, offset):
    emit(out_ptr, tl.randint(seed, offset))


@jit
def rng_rand_arange(out_ptr, seed, N: tl.constexpr):
    emit(out_ptr, tl.rand(seed, tl.arange(0, N)))
""")

LITERALS = (
    "0",
    "1",
    "-1",
    "2**31 - 1",
    "2**31",
    "-2**31",
    "-2**31 - 1",
    "2**32 - 1",
    "2**32",
    "2**63 - 1",
    "2**63",
    "-2**63",
    "2**64 - 1",
    "2**64",
    "True",
    "False",
    "1.5",
    "-0.0",
    "1e50",
    "1e-50",
    "3.4e38",
    "3.5e38",
    "1e-45",
    "2.0**-126",
    "2.0**-127",
)
for _i, _lit in enumerate(LITERALS):
    KERNELS.append(f"""
@jit
def lit_{_i}(out_ptr):
    x = {_lit}
    emit(out_ptr, x)


@jit
def litop_{_i}(out_ptr, x_ptr, N: tl.constexpr):
    emit(out_ptr, tl.load(x_ptr + tl.arange(0, N)) + {_lit})
""")

KERNELS.append("""
@jit
def const_assign(out_ptr, x_ptr, N: tl.constexpr, C: tl.constexpr):
    c = C
    emit(out_ptr, c, 0)
    emit(out_ptr, tl.load(x_ptr + tl.arange(0, N)) + c, 1)


@jit
def const_annotated(out_ptr, x_ptr, N: tl.constexpr, C: tl.constexpr):
    c: tl.constexpr = C
    emit(out_ptr, tl.load(x_ptr + tl.arange(0, N)) + c)


@jit
def const_direct(out_ptr, x_ptr, N: tl.constexpr, C: tl.constexpr):
    emit(out_ptr, tl.load(x_ptr + tl.arange(0, N)) + C)


@jit
def const_to_tensor(out_ptr, x_ptr, N: tl.constexpr, C: tl.constexpr):
    emit(out_ptr, tl.load(x_ptr + tl.arange(0, N)) + tl.to_tensor(C))


@jit
def const_full(out_ptr, N: tl.constexpr, C: tl.constexpr, DTYPE: tl.constexpr):
    emit(out_ptr, tl.full((N,), C, DTYPE))


@jit
def loop_wrap_add(out_ptr, n, STEP: tl.constexpr):
    acc = 0
    for i in range(n):
        acc += STEP
    emit(out_ptr, acc)


@jit
def loop_wrap_mul(out_ptr, n):
    acc = 1
    for i in range(n):
        acc = acc * 3 + 1
    emit(out_ptr, acc)


@jit
def loop_wrap_block(out_ptr, n, N: tl.constexpr):
    acc = tl.full((N,), 2**31 - 40, tl.int32)
    for i in range(n):
        acc += tl.arange(0, N)
    emit(out_ptr, acc)


@jit
def loop_while(out_ptr, n):
    acc = 1
    i = 0
    while i < n:
        acc = acc * 5
        i += 1
    emit(out_ptr, acc, 0)
    emit(out_ptr, i, 1)


@jit
def loop_index_sum(out_ptr, lo, hi, STEP: tl.constexpr):
    acc = 0
    for i in range(lo, hi, STEP):
        acc += i
    emit(out_ptr, acc)


@jit
def loop_index_type(out_ptr, x_ptr, n, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    for i in range(n, n + 1):
        emit(out_ptr, x + i)


@jit
def loop_carried_type_change(out_ptr, x_ptr, n, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    for i in range(n, n + 1):
        x = x + i
    emit(out_ptr, x)


@jit
def logic_and(out_ptr, x_ptr):
    emit(out_ptr, tl.load(x_ptr) and tl.load(x_ptr + 1))


@jit
def logic_or_block(out_ptr, x_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    emit(out_ptr, x or x)
""")


def _load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    """(triton module, naiad module): the generated kernels, imported from real files."""
    root = tmp_path_factory.mktemp("differential")
    body = "\n".join(KERNELS)
    modules = []
    for lib in ("triton", "naiad"):
        path = root / f"kernels_{lib}.py"
        path.write_text(textwrap.dedent(HEADER.format(lib=lib)) + body)
        modules.append(_load_module(str(path), f"_naiad_differential_{lib}"))
    return tuple(modules)


# -------------------------------------------------------------------------------------------------
# Running a kernel through both
# -------------------------------------------------------------------------------------------------
SLOT = 256


@dataclass
class Outcome:
    error: BaseException | None = None
    results: list = field(default_factory=list)  # [(dtype name, shape)]
    bits: np.ndarray | None = None  # int64, 4 slots of SLOT

    def values(self, slot=0):
        """The emitted value of `slot` as a NumPy array of its own dtype."""
        dtype, shape = self.results[slot]
        numel = math.prod(shape) if shape else 1
        raw = self.bits[slot * SLOT : slot * SLOT + numel]
        if dtype == "int1":
            return raw.astype(np.bool_).reshape(shape)
        return raw.astype(f"int{WIDTH[dtype]}").view(NUMPY[dtype]).reshape(shape)


def launch(module, name, args, kwargs) -> Outcome:
    """Run `module.name[(1,)](out, *args, **kwargs)` on copies of the array arguments."""
    out = torch.zeros(4 * SLOT, dtype=torch.int64)
    args = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    module.RESULTS.clear()
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            getattr(module, name)[(1,)](out, *args, **kwargs)
        except Exception as error:
            return Outcome(error=error)
    return Outcome(results=list(module.RESULTS), bits=out.numpy().copy())


def both(kernels, name, *args, **kwargs):
    return tuple(launch(module, name, args, kwargs) for module in kernels)


_TL_NAME = {
    "int1": "int1",
    "fp16": "float16",
    "bf16": "bfloat16",
    "fp32": "float32",
    "fp64": "float64",
    "fp8e4nv": "float8e4nv",
    "fp8e5": "float8e5",
}


def _both_dtype(kernels, name, dtype, *args, **kwargs):
    """`both`, with the constexpr DST set to each front end's own dtype object for `dtype`."""
    outcomes = []
    for module in kernels:
        dst = getattr(module.tl, _TL_NAME.get(dtype, dtype))
        outcomes.append(launch(module, name, args, dict(kwargs, DST=dst)))
    return tuple(outcomes)


def tensor_of(values, dtype: str) -> torch.Tensor:
    """A torch tensor of `dtype` holding `values` (a NumPy array of NUMPY[dtype] or castable)."""
    array = np.asarray(values)
    if array.dtype != NUMPY[dtype]:
        with np.errstate(all="ignore"):
            array = array.astype(NUMPY[dtype])
    if dtype == "int1":
        return torch.from_numpy(array.copy())
    bits = array.view(f"int{WIDTH[dtype]}").copy()
    return torch.from_numpy(bits).view(TORCH[dtype])


def bits_equal(a, b, dtype: str) -> np.ndarray:
    """Lane-wise equality of the bit patterns; any NaN equals any NaN."""
    a, b = np.asarray(a), np.asarray(b)
    if dtype == "int1":
        return a == b
    width = WIDTH[dtype]
    same = a.view(f"uint{width}") == b.view(f"uint{width}")
    if is_float(dtype):
        with np.errstate(all="ignore"):
            same |= np.isnan(a.astype(np.float64)) & np.isnan(b.astype(np.float64))
    return same


class Mismatches:
    """Collects the differences of one test, so that a failure lists all of them."""

    def __init__(self):
        self.items = []

    def add(self, case, message):
        self.items.append(f"{case}: {message}")

    def check(self):
        if self.items:
            shown = "\n  ".join(self.items[:80])
            more = f"\n  ... and {len(self.items) - 80} more" if len(self.items) > 80 else ""
            pytest.fail(
                f"{len(self.items)} differences from Triton:\n  {shown}{more}", pytrace=False
            )


def _show(values, lanes):
    flat = np.asarray(values).reshape(-1)
    return [flat[i].item() if hasattr(flat[i], "item") else flat[i] for i in lanes]


def compare(case, t: Outcome, n: Outcome, mism: Mismatches, gpu=None, reason=None, results=None):
    """Compare two outcomes: raised or not, result types, then values bit for bit.

    With `reason` (a key of EXPECTED) Triton's interpreter is known not to be the GPU for this
    case: lanes where the two differ must then equal `gpu(slot, dtype)`, the GPU's answer. With
    `results` too, Triton's interpreter is known to crash on the case (a failure of its own, not a
    refusal of the language): if it did, Naiad must give `results` and the GPU's values.
    """
    if results is not None and t.error is not None:
        if n.error is not None:
            mism.add(case, f"[{reason}] Naiad raised {type(n.error).__name__}: {n.error}")
        elif n.results != results:
            mism.add(case, f"[{reason}] Naiad's results {n.results}, compiled Triton's {results}")
        else:
            for slot, (dtype, _) in enumerate(results):
                check_values(case, slot, dtype, None, n.values(slot), mism, gpu, reason)
        return
    if (t.error is None) != (n.error is None):
        which, error = ("only Triton", t.error) if t.error is not None else ("only Naiad", n.error)
        mism.add(case, f"{which} raised {type(error).__name__}: {str(error)[:300]}")
        return
    if t.error is not None:
        return
    if t.results != n.results:
        mism.add(case, f"result types differ: triton {t.results} naiad {n.results}")
        return
    for slot, (dtype, _) in enumerate(t.results):
        if dtype.startswith("python:"):
            continue
        check_values(case, slot, dtype, t.values(slot), n.values(slot), mism, gpu, reason)


def check_values(case, slot, dtype, tv, nv, mism, gpu=None, reason=None):
    """Lanes of `nv` (Naiad) must equal `tv` (Triton), or the GPU's where `reason` applies.
    `tv` None: no Triton value (its interpreter crashed), every lane is checked against the GPU."""
    same = bits_equal(tv, nv, dtype) if tv is not None else np.zeros(np.shape(nv), bool)
    if same.all():
        return
    if reason is not None:
        assert reason in EXPECTED
        ref = np.asarray(gpu(slot, dtype)).astype(NUMPY[dtype]).reshape(np.shape(nv))
        wrong = ~same & ~bits_equal(ref, nv, dtype)
        if not wrong.any():
            return
        lanes = np.argwhere(wrong.reshape(-1)).ravel()[:4]
        mism.add(
            case,
            f"[{reason}] {int(wrong.sum())} lanes of {dtype} differ from the GPU "
            f"model: lanes {lanes.tolist()} naiad {_show(nv, lanes)} model "
            f"{_show(ref, lanes)} triton {_show(tv, lanes) if tv is not None else None}",
        )
        return
    lanes = np.argwhere(~same.reshape(-1)).ravel()[:4]
    mism.add(
        case,
        f"{int((~same).sum())} lanes of {dtype} differ: lanes {lanes.tolist()} "
        f"triton {_show(tv, lanes)} naiad {_show(nv, lanes)}",
    )


# -------------------------------------------------------------------------------------------------
# Inputs
# -------------------------------------------------------------------------------------------------
def int_specials(dtype: str) -> list[int]:
    """16 integers: signs, extremes, small numbers and shift amounts around the width."""
    width = WIDTH[dtype]
    signed = not dtype.startswith("u")
    lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
    raw = [0, 1, -1, 2, -3, 7, 100, -100, width - 1, width, width + 1, lo, lo + 1, hi, hi - 1, 13]
    return [((v - lo) % (1 << width)) + lo for v in raw]


FLOAT_SPECIALS = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -2.5,
    0.1,
    1 / 3,
    math.inf,
    -math.inf,
    math.nan,
    65504.0,
    -3e38,
    1e-40,
    6e-8,
    300.75,
]
# More floats for one-operand kernels: ties of the narrow formats, overflow edges, subnormals.
FLOAT_MORE = [
    1 + 2**-11,
    1 + 3 * 2**-11,
    -(1 + 2**-8),
    1 + 3 * 2**-8,
    1 + 2**-4,
    1 + 3 * 2**-4,
    1 + 2**-3,
    -(1 + 3 * 2**-3),
    448.0,
    464.0,
    480.0,
    57344.0,
    61440.0,
    65520.0,
    3.3961776e38,
    2**-9,
    2**-10,
    3 * 2**-10,
    2**-16,
    2**-17,
    2**-24,
    2**-25,
    1e300,
    2.0**31,
    -(2.0**31),
    2.0**63,
    -(2.0**63),
    2.0**64,
    255.5,
    -128.5,
    127.5,
    32767.9,
    -32768.5,
    4294967295.5,
    1e-310,
    2.0**24 + 1,
    12345.678,
    -0.7,
    1e10,
    -1e-5,
    2**-126,
    2**-149,
    7.0,
    -100.0,
    1.5,
    0.75,
    40000.0,
    -70000.0,
]


def int_values(dtype: str, n=N) -> np.ndarray:
    specials = int_specials(dtype)
    info = np.iinfo(NUMPY[dtype])
    rng = np.random.default_rng(WIDTH[dtype])
    extra = rng.integers(info.min, info.max, n - len(specials), dtype=NUMPY[dtype], endpoint=True)
    return np.concatenate([np.array(specials, NUMPY[dtype]), extra])


def float_values(dtype: str, n=N) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.array((FLOAT_SPECIALS + FLOAT_MORE)[:n], np.float64).astype(NUMPY[dtype])


def values_of(dtype: str, n=N) -> np.ndarray:
    if dtype == "int1":
        return np.arange(n) % 3 == 1
    if is_int(dtype):
        return int_values(dtype, n)
    if dtype in FP8:  # every bit pattern but a few, in an order that mixes signs
        bits = (np.arange(n, dtype=np.uint16) * 37 + 5) % 256
        return bits.astype(np.uint8).view(NUMPY[dtype])
    return float_values(dtype, n)


def cross(a: str, b: str):
    """x, y of 256 lanes: every pair of the 16 special values of `a` and of `b`."""
    xs = values_of(a, 16)
    ys = values_of(b, 16)
    return np.repeat(xs, 16), np.tile(ys, 16)


# -------------------------------------------------------------------------------------------------
# Models of the GPU's rules (for the lanes where Triton's interpreter is not the GPU)
# -------------------------------------------------------------------------------------------------
def exact(values, dtype):
    """Values as exact Python numbers (int, or float for floats: every format fits a double)."""
    flat = np.asarray(values).reshape(-1)
    if is_int(dtype):
        return [int(v) for v in flat]
    return [float(v) for v in flat.astype(np.float64)]


@cache
def _table(fmt):
    """Non-negative finite values of an 8/16-bit float format, ascending, with their bits."""
    width = WIDTH[fmt]
    bits = np.arange(1 << (width - 1), dtype=f"uint{width}")
    values = bits.view(NUMPY[fmt]).astype(np.float64)
    keep = np.isfinite(values)
    return [float(v) for v in values[keep]], [int(b) for b in bits[keep]]


# Overflow rule per (format, rounding): "ieee" (rtne -> inf, rtz -> largest finite, inf stays),
# "sat" (cvt .satfinite: beyond the largest finite, inf included -> largest finite).
_OVERFLOW = {
    ("fp8e4nv", "rtne"): "sat",
    ("fp8e4nv", "rtz"): "sat",
    ("fp8e5", "rtne"): "sat",
    ("fp8e5", "rtz"): "ieee",
}


def _pick(value, below, above, below_even, rounding):
    """Round `value` (exact, between the neighbours `below` < `above`) to one of them."""
    if rounding == "rtz":
        return below
    lo, hi = Fraction(value) - Fraction(below), Fraction(above) - Fraction(value)
    if lo != hi:
        return below if lo < hi else above
    return below if below_even else above


def round_to(value, fmt, rounding="rtne"):
    """One GPU rounding step of the exact number `value` into float format `fmt`, as an array of
    one element of NUMPY[fmt]."""
    dtype = NUMPY[fmt]
    if isinstance(value, float) and math.isnan(value):
        return np.array(np.nan).astype(dtype)
    negative = value < 0 or (isinstance(value, float) and math.copysign(1.0, value) < 0)
    magnitude = -value if value < 0 else value
    if fmt in ("fp32", "fp64"):
        big = np.finfo(dtype).max
        if magnitude > big:
            info = np.finfo(dtype)
            half_ulp = Fraction(2) ** (info.maxexp - 2 - info.nmant)
            limit = Fraction(float(big)) + half_ulp
            if magnitude == math.inf or (rounding == "rtne" and Fraction(magnitude) >= limit):
                result = math.inf
            else:
                result = float(big)
        else:
            guess = np.array(float(magnitude)).astype(dtype)
            near = [
                np.nextafter(guess, dtype.type(0)),
                guess,
                np.nextafter(guess, dtype.type(np.inf)),
            ]
            below = max((c for c in near if Fraction(float(c)) <= magnitude), key=float)
            above = min((c for c in near if Fraction(float(c)) >= magnitude), key=float)
            if Fraction(float(below)) == magnitude:
                result = float(below)
            else:
                even = int(np.array(below).view(f"uint{WIDTH[fmt]}")) % 2 == 0
                result = float(_pick(magnitude, float(below), float(above), even, rounding))
        return np.array(-result if negative else result).astype(dtype)
    values, bits = _table(fmt)
    top = values[-1]
    rule = _OVERFLOW.get((fmt, rounding), "ieee")
    if magnitude == math.inf:
        result = top if rule == "sat" or not np.isinf(np.array(np.inf).astype(dtype)) else math.inf
    elif magnitude > top:
        step = top - values[-2]
        if rule == "sat" or rounding == "rtz":
            result = top
        else:
            result = math.inf if Fraction(magnitude) >= Fraction(top) + Fraction(step) / 2 else top
        if result == math.inf and not np.isinf(np.array(np.inf).astype(dtype)):
            result = math.nan
    else:
        i = bisect.bisect_left(values, magnitude)
        if values[i] == magnitude:
            result = values[i]
        else:
            result = _pick(magnitude, values[i - 1], values[i], bits[i - 1] % 2 == 0, rounding)
    return np.array(-result if negative else result).astype(dtype)


def gpu_convert(values, src, dst, rounding="rtne"):
    """The GPU's conversion of `values` (NUMPY[src]) to `dst` (floats.py's documented facts)."""
    out = []
    raw = np.asarray(values).reshape(-1).view(f"uint{WIDTH[src]}") if src != "int1" else None
    for i, v in enumerate(exact(values, src)):
        if dst == "int1":
            out.append(v != 0)
        elif is_int(dst):
            whole = _float_to_int(v, src, dst) if is_float(src) else _wrap(v, dst)
            out.append(whole)
        elif src == "fp8e5" and dst == "bf16" and not math.isfinite(v):
            # The GPU shifts the bits into place and multiplies by 2**112 (floats.py): inf ->
            # 65536 and the NaNs 0x7d, 0x7e, 0x7f -> 81920, 98304, 114688, sign kept.
            code = int(raw[i])
            big = {0x7C: 65536.0, 0x7D: 81920.0, 0x7E: 98304.0, 0x7F: 114688.0}[code & 0x7F]
            out.append(-big if code & 0x80 else big)
        else:
            out.append(round_to(v, dst, rounding).item())
    return np.array(out, dtype=object).astype(NUMPY[dst]).reshape(np.shape(values))


def _wrap(v, dtype):
    width, signed = WIDTH[dtype], not dtype.startswith("u")
    v &= (1 << width) - 1
    return v - (1 << width) if signed and v >= 1 << (width - 1) else v


def _float_to_int(v, src, dst):
    """cvt.rzi: truncate, saturate at max(width, 16) bits, keep the low bits (floats.py)."""
    width = WIDTH[dst]
    signed = not dst.startswith("u")
    wide = max(width, 16)
    lo, hi = (-(1 << (wide - 1)), (1 << (wide - 1)) - 1) if signed else (0, (1 << wide) - 1)
    if math.isnan(v):
        whole = (1 << (wide - 1)) if src == "fp64" or wide == 64 else 0
    elif v == math.inf:
        whole = hi
    elif v == -math.inf:
        whole = lo
    else:
        whole = min(max(math.trunc(v), lo), hi)
    return _wrap(whole, dst)


PROMOTE_FLOAT = {"fp64": 4, "fp32": 3, "fp16": 2, "bf16": 1}


def computation_float(a, b, op):
    """The float computation type of `a op b` for tensor operands (Triton's rules)."""
    if "fp64" in (a, b):
        return "fp64"
    if "fp32" in (a, b) or {a, b} == {"fp16", "bf16"}:
        return "fp32"
    if "fp16" in (a, b):
        return "fp32" if op in ("truediv", "mod") else "fp16"
    if a == b == "bf16":
        return "fp32" if op in ("truediv", "mod") else "bf16"
    return "fp32"  # bf16 with an integer


_NP_OPS = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "truediv": np.divide,
    "mod": np.fmod,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "eq": np.equal,
    "ne": np.not_equal,
}


def gpu_float_binary(op, x, a, y, b, comp):
    """`x op y` computed in float type `comp` (operands converted exactly / by one rounding)."""
    work = np.float64 if comp == "fp64" else np.float32

    def to_work(v, dtype):
        if is_float(dtype):
            return np.asarray(v).astype(np.float64).astype(work)
        return gpu_convert(v, dtype, "fp64" if comp == "fp64" else "fp32").astype(work)

    with np.errstate(all="ignore"):
        xs, ys = to_work(x, a), to_work(y, b)
        if comp in ("bf16", "fp16"):  # exact operands in the narrow type: round them there
            xs = xs.astype(NUMPY[comp]).astype(np.float32)
            ys = ys.astype(NUMPY[comp]).astype(np.float32)
        result = _NP_OPS[op](xs, ys)
    if op in COMPARISONS:
        return result
    # fp32 keeps 24 >= 2 * 8 + 2 bits: rounding its result again to bf16/fp16 is one rounding.
    return result.astype(NUMPY[comp])


def gpu_int_divide(op, x, y, dtype):
    """Integer // and % as the GPU gives them, by zero and INT_MIN // -1 included."""
    width, signed = WIDTH[dtype], not dtype.startswith("u")
    out = []
    for a, b in zip(exact(x, dtype), exact(y, dtype)):
        if b == 0:
            r = a if op == "mod" else ((-1 if a >= 0 else 1) if signed else (1 << width) - 1)
        else:
            q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)  # C: toward zero
            r = a - q * b if op == "mod" else q
        out.append(_wrap(r, dtype))
    return np.array(out, dtype=object).astype(NUMPY[dtype])


def literal_type(value) -> str:
    """Triton's type of a Python number inside a kernel (`to_tensor_type`)."""
    if isinstance(value, bool):
        return "int1"
    if isinstance(value, int):
        for name, lo, hi in (
            ("int32", -(2**31), 2**31),
            ("uint32", 2**31, 2**32),
            ("int64", -(2**63), 2**63),
            ("uint64", 2**63, 2**64),
        ):
            if lo <= value < hi:
                return name
        raise ValueError(value)
    if value == 0 or not math.isfinite(value) or 2.0**-126 <= abs(value) <= 3.4028234663852886e38:
        return "fp32"
    return "fp64"


def scalar_constant(value, dtype) -> np.ndarray:
    """Triton's `scalar_constant(value, dtype)` as compiled: zero is the null value (+0), fp16 and
    bf16 constants are made from a C float (rounded to fp32 first)."""
    if value == 0:
        value = 0
    if is_int(dtype):
        return np.array(
            [_wrap(int(value), dtype)] if dtype != "int1" else [bool(value)], dtype=object
        ).astype(NUMPY[dtype])
    if dtype in ("fp16", "bf16") or dtype in FP8:
        return gpu_convert(np.array([float(value)], np.float64).astype(np.float32), "fp32", dtype)
    return gpu_convert(np.array([float(value)], np.float64), "fp64", dtype)


# -------------------------------------------------------------------------------------------------
# Binary operators
# -------------------------------------------------------------------------------------------------
def binary_expectation(op, x, a, y, b, result):
    """(reason, gpu) for `x op y` (operands of types a, b; `result` the common result type) where
    Triton's interpreter is known not to be the GPU, else (None, None)."""
    if "bf16" in (a, b) and (
        is_float(result) or (op in COMPARISONS and (is_float(a) or is_float(b)))
    ):
        comp = result if op not in COMPARISONS else computation_float(a, b, op)
        return "bf16", lambda slot, dtype: gpu_float_binary(op, x, a, y, b, comp)
    if op in ("floordiv", "mod") and is_int(result):
        xs, ys = x.astype(NUMPY[result]), y.astype(NUMPY[result])
        return "idiv0", lambda slot, dtype: gpu_int_divide(op, xs, ys, result)
    return None, None


@pytest.mark.parametrize("op", list(BINARY_OPS))
def test_binary_tensor_tensor(kernels, op):
    """Every operator over the dtype matrix; 256 lanes: every pair of 16 special values."""
    mism = Mismatches()
    for a in DTYPES:
        for b in DTYPES:
            x, y = cross(a, b)
            t, n = both(kernels, f"tt_{op}", tensor_of(x, a), tensor_of(y, b), N=256)
            result = t.results[0][0] if t.error is None else None
            reason, gpu = binary_expectation(op, x, a, y, b, result)
            compare(f"{a} {BINARY_OPS[op]} {b}", t, n, mism, gpu, reason)
    mism.check()


@pytest.mark.parametrize("op", ["add", "floordiv", "shr", "lt", "and"])
def test_binary_tensor_scalar_tensor(kernels, op):
    """A 0-d tensor operand (a loaded scalar) takes part in promotion like a block."""
    mism = Mismatches()
    for a in DTYPES:
        for b in DTYPES:
            x = values_of(a, 16)
            y = values_of(b, 16)[5:6]
            t, n = both(kernels, f"t0_{op}", tensor_of(x, a), tensor_of(y, b), N=16)
            result = t.results[0][0] if t.error is None else None
            reason, gpu = binary_expectation(op, x, a, np.repeat(y, 16), b, result)
            compare(f"{a} {BINARY_OPS[op]} 0-d {b}", t, n, mism, gpu, reason)
    mism.check()


SCALARS = [
    0,
    1,
    -1,
    7,
    -7,
    128,
    255,
    -129,
    65536,
    2**31 - 1,
    2**31,
    -(2**31) - 1,
    2**32,
    2**63,
    2**64 - 1,
    True,
    0.1,
    -2.5,
    1e50,
    -0.0,
    math.inf,
    1 + 2**-11 + 2**-40,  # an fp16 tie once rounded to fp32: compiled Triton rounds twice
    2**60 + 2**36 + 1,
]  # above an fp32 tie, but on it once rounded to a double
SCALAR_LEFT_OPS = ("sub", "truediv", "floordiv", "mod", "shl", "shr", "lt", "and")


def _scalar_case(kernels, op, a, s, scalar_left, mism):
    x = values_of(a, 16)
    name = f"{'st' if scalar_left else 'ts'}_{op}"
    t, n = both(kernels, name, tensor_of(x, a), N=16, S=s)
    case = f"{s!r} {BINARY_OPS[op]} {a}" if scalar_left else f"{a} {BINARY_OPS[op]} {s!r}"
    if op in COMPARISONS:
        # Triton's comparisons make the scalar a tensor first (`to_tensor`): full promotion.
        s_type = literal_type(s)
        comp = computation_float(a, s_type, op) if is_float(a) or is_float(s_type) else None
        s_vals = scalar_constant(s, s_type)
    else:
        comp = None
    if t.error is not None and "get_bf16" in str(t.error):
        # EXPECTED["get_bf16"]: compiled Triton computes in bf16 (fp32 for / and %).
        comp = "fp32" if op in ("truediv", "mod") else "bf16"
        if op in ("floordiv", "and", "or", "xor", "shl", "shr"):
            if n.error is None:  # compiled Triton refuses these for floats
                mism.add(case, f"[get_bf16] Naiad did not raise: {n.results}")
            return
        if n.error is not None:
            mism.add(case, f"[get_bf16] Naiad raised {type(n.error).__name__}: {n.error}")
            return
        if n.results != [(comp, (16,))]:
            mism.add(case, f"[get_bf16] Naiad's result type {n.results}, compiled Triton's {comp}")
            return
        s_vals = scalar_constant(s, comp)
        sx, sy = (s_vals, x) if scalar_left else (x, s_vals)
        ta, tb = (comp, a) if scalar_left else (a, comp)
        ref = gpu_float_binary(
            op, np.broadcast_to(sx, (16,)), ta, np.broadcast_to(sy, (16,)), tb, comp
        )
        check_values(
            case,
            0,
            comp,
            np.full(16, np.nan).astype(NUMPY[comp]),
            n.values(0),
            mism,
            lambda slot, dtype: ref,
            "get_bf16",
        )
        return
    if t.error is not None or n.error is not None:
        compare(case, t, n, mism)
        return
    result = t.results[0][0]
    if op not in COMPARISONS:
        comp = result
        s_type = result
        s_vals = scalar_constant(s, result) if is_float(result) or is_int(result) else None
    s_arr = np.broadcast_to(s_vals, (16,)) if s_vals is not None else None
    xa, xb, ya, yb = (s_arr, s_type, x, a) if scalar_left else (x, a, s_arr, s_type)
    reason, gpu = binary_expectation(op, xa, xb, ya, yb, result)
    if reason is None and a == "fp16" and isinstance(s, float) and comp == "fp16":
        reason = "fp16_scalar"
        gpu = lambda slot, dtype: gpu_float_binary(op, xa, xb, ya, yb, "fp16")
    compare(case, t, n, mism, gpu, reason)


@pytest.mark.parametrize("op", list(BINARY_OPS))
def test_binary_tensor_python_scalar(kernels, op):
    """Tensor op Python scalar (and scalar op tensor): weak scalars, range checks, -0.0 -> +0.0."""
    mism = Mismatches()
    for a in DTYPES:
        for s in SCALARS:
            _scalar_case(kernels, op, a, s, False, mism)
            if op in SCALAR_LEFT_OPS:
                _scalar_case(kernels, op, a, s, True, mism)
    mism.check()


RUNTIME_INTS = [0, 5, -3, 2**31 - 1, 2**31, -(2**31) - 1, 2**40, 2**63, 2**64 - 1]


@pytest.mark.parametrize(
    "op", ["add", "sub", "mul", "truediv", "floordiv", "mod", "shr", "lt", "xor"]
)
def test_binary_runtime_int_argument(kernels, op):
    """An int kernel argument is a scalar tensor (int32, int64 or uint64 by range): not weak."""
    mism = Mismatches()
    for a in DTYPES:
        x = values_of(a, 16)
        for s in RUNTIME_INTS:
            t, n = both(kernels, f"tr_{op}", tensor_of(x, a), s, N=16)
            result = t.results[0][0] if t.error is None else None
            reason, gpu = None, None
            if result is not None:
                s_type = literal_type(s) if s < 2**31 or s >= 2**32 else "int64"
                s_vals = np.broadcast_to(scalar_constant(s, s_type), (16,))
                reason, gpu = binary_expectation(op, x, a, s_vals, s_type, result)
            compare(f"{a} {BINARY_OPS[op]} arg {s}", t, n, mism, gpu, reason)
    mism.check()


def test_binary_runtime_float_argument(kernels):
    """EXPECTED["float_arg"]: a float argument is an fp32 scalar in compiled Triton (and Naiad)."""
    mism = Mismatches()
    for a in DTYPES:
        x = values_of(a, 16)
        for s in (2.5, -0.0, 1e-3):
            t, n = both(kernels, "tr_add", tensor_of(x, a), s, N=16)
            comp = "fp64" if a == "fp64" else "fp32"
            if n.error is not None or n.results != [(comp, (16,))]:
                mism.add(
                    f"{a} + float arg {s}",
                    f"Naiad gave {n.results or n.error}, compiled Triton {comp}",
                )
                continue
            ref = gpu_float_binary("add", x, a, np.full(16, s, np.float32), "fp32", comp)
            check_values(f"{a} + float arg {s}", 0, comp, ref, n.values(0), mism)
    mism.check()


# -------------------------------------------------------------------------------------------------
# Unary operators
# -------------------------------------------------------------------------------------------------
def _flip_sign(x, dtype):
    width = WIDTH[dtype]
    return (np.asarray(x).view(f"uint{width}") ^ np.array(1 << (width - 1), f"uint{width}")).view(
        NUMPY[dtype]
    )


@pytest.mark.parametrize("op", ["neg", "invert"])
def test_unary(kernels, op):
    """-x and ~x over every dtype; -x of a float flips the sign bit (fneg: -(+0.0) is -0.0)."""
    mism = Mismatches()
    for a in ("int1",) + DTYPES + FP8:
        x = values_of(a)
        t, n = both(kernels, f"unary_{op}", tensor_of(x, a), N=N)
        reason = gpu = results = None
        if op == "neg" and (a == "bf16" or a in FP8):
            # EXPECTED["bf16"] / ["fp8"]: np.negative of the uint16 / uint8 bits.
            reason, gpu = ("bf16" if a == "bf16" else "fp8"), lambda slot, dtype: _flip_sign(x, a)
        elif op == "neg" and a == "int1":
            reason, results = "bool_arith", [("int1", (N,))]
            gpu = lambda slot, dtype: x  # 0 - x, modulo 2
        elif op == "invert" and a.startswith("uint"):
            reason, results = "all_ones", [(a, (N,))]
            gpu = lambda slot, dtype: ~x
        compare(f"{op} {a}", t, n, mism, gpu, reason, results)
    mism.check()


def test_unary_plus_and_abs_are_refused(kernels):
    """Triton's tensor has no `__pos__` and no `__abs__`: `+x` and `abs(x)` raise in both."""
    mism = Mismatches()
    for a in ("int32", "fp32"):
        x = tensor_of(values_of(a), a)
        compare(f"+{a}", *both(kernels, "unary_plus", x, N=N), mism)
        compare(f"abs({a})", *both(kernels, "unary_abs_builtin", x, N=N), mism)
    mism.check()


def test_unary_minus_of_python_scalars(kernels):
    """`x = S; -x`: a tensor of S's literal type; -0.0 is +0.0 once made a tensor (null value)."""
    mism = Mismatches()
    for s in (0, 5, -(2**31), 2**31, 2**63, 0.0, -0.0, 1.5, 1e50, True):
        t, n = both(kernels, "unary_neg_scalar", S=s)
        if s is True:  # EXPECTED["bool_arith"]: -True is 0 - 1 modulo 2, i.e. True
            compare(
                f"-({s!r})",
                t,
                n,
                mism,
                lambda slot, dtype: np.array(True),
                "bool_arith",
                [("int1", ())],
            )
            continue
        compare(f"-({s!r})", t, n, mism)
    mism.check()


def test_not(kernels):
    """EXPECTED["not"]: compiled Triton inverts int1 and rejects other types; Naiad must too."""
    mism = Mismatches()
    for a in ("int1",) + DTYPES:
        x = values_of(a)
        _, n = both(kernels, "unary_not", tensor_of(x, a), N=N)
        if a != "int1":
            if n.error is None:
                mism.add(f"not {a}", f"Naiad computed {n.results} (compiled Triton refuses)")
            continue
        if n.error is not None or n.results != [("int1", (N,))]:
            mism.add(f"not {a}", f"Naiad gave {n.results or n.error}")
            continue
        check_values(f"not {a}", 0, "int1", ~x, n.values(0), mism)
    mism.check()


# -------------------------------------------------------------------------------------------------
# Casts
# -------------------------------------------------------------------------------------------------
def cast_reason(src, dst, rounding):
    if "bf16" in (src, dst):
        return "bf16"
    if src in FP8 or dst in FP8:
        return "fp8"
    if rounding == "rtz":
        return "rtz"
    if is_float(src) and is_int(dst) and dst != "int1":
        return "fptoint"
    return None


@pytest.mark.parametrize("src", ALL)
def test_cast(kernels, src):
    """x.to(dst, fp_downcast_rounding=r) for every pair, fp8 (e4m3fn, e5m2) and int1 included."""
    mism = Mismatches()
    x = values_of(src)
    xt = tensor_of(x, src)
    for dst in ALL:
        for rounding in (None, "rtne", "rtz"):
            t, n = _both_dtype(kernels, "cast", dst, xt, N=N, ROUNDING=rounding)
            reason = cast_reason(src, dst, rounding)
            gpu = lambda slot, dtype, d=dst, r=rounding: gpu_convert(x, src, d, r or "rtne")
            # Triton's interpreter crashes in `_convert_float` (NumPy refuses its uint64 shifts,
            # or its all-ones constant) on these; Naiad gives them the documented one rounding.
            crashes = (
                (src == "fp64" and (dst in FP8 or (rounding == "rtz" and dst != "fp64")))
                or (dst == "fp64" and src in FP8)
                or (src in FP8 and dst in FP8)
            )
            legal = rounding is None or (
                is_float(src) and is_float(dst) and WIDTH[src] > WIDTH[dst]
            )
            results = [(dst, (N,))] if crashes and legal and src != dst else None
            compare(
                f"{src} -> {dst} ({rounding})", t, n, mism, gpu if reason else None, reason, results
            )
    mism.check()


def test_bitcast(kernels):
    mism = Mismatches()
    for src in ALL:
        xt = tensor_of(values_of(src), src)
        for dst in ALL:
            compare(f"bitcast {src} -> {dst}", *_both_dtype(kernels, "bitcast", dst, xt, N=N), mism)
    mism.check()


def test_cast_python_scalar(kernels):
    """tl.cast(S, dst): S takes its literal type first (-0.0 is the null value +0.0)."""
    mism = Mismatches()
    for s in (0, -1, 300, 2**31, 2**63, -0.0, 1.5, -2.5, 1e50, 1e-50, True):
        for dst in ("int1", "int8", "uint8", "int32", "int64", "fp16", "fp32", "fp64"):
            t, n = _both_dtype(kernels, "cast_scalar", dst, S=s)
            src = literal_type(s)
            reason = cast_reason(src, dst, None)
            gpu = lambda slot, dtype, d=dst: gpu_convert(scalar_constant(s, src), src, d)
            compare(f"cast({s!r}, {dst})", t, n, mism, gpu if reason else None, reason)
    mism.check()


# -------------------------------------------------------------------------------------------------
# Math functions
# -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", MATH_1)
def test_math_unary(kernels, fn):
    """fp32/fp64 only (others refused, as `_check_dtype`), abs for every type; NumPy in both."""
    mism = Mismatches()
    for a in ("int1",) + DTYPES + FP8:
        x = values_of(a)
        t, n = both(kernels, f"math_{fn}", tensor_of(x, a), N=N)
        reason = gpu = None
        if fn == "abs" and a in FP8:  # EXPECTED["fp8"]: the interpreter clears the sign bit too
            reason, gpu = "fp8", lambda slot, dtype: np.abs(x)
        compare(f"{fn}({a})", t, n, mism, gpu, reason)
    mism.check()


def round_exact(value: Fraction, dtype: str) -> float:
    """The float `dtype` nearest to the exact `value` (ties to even), as a Python float."""
    np_type = NUMPY[dtype].type
    guess = np_type(float(value))  # float(Fraction) is correctly rounded; then at most one off
    if not np.isfinite(guess):
        return float(guess)
    near = [np.nextafter(guess, np_type(-np.inf)), guess, np.nextafter(guess, np_type(np.inf))]
    near = [c for c in near if np.isfinite(c)]
    best = min(
        near,
        key=lambda c: (
            abs(Fraction(float(c)) - value),
            int(np.array(c).view(f"uint{WIDTH[dtype]}")) & 1,
        ),
    )
    return float(best) if value != 0 or float(best) != 0 else float(best)


def gpu_fma(x, y, z, dtype):
    """fma.rn: x * y + z rounded once from the exact value (NaN / inf as the IEEE operation)."""
    out = []
    for a, b, c in zip(*(np.asarray(v).astype(np.float64) for v in (x, y, z))):
        if all(map(math.isfinite, (a, b, c))):
            e = Fraction(a) * Fraction(b) + Fraction(c)
            if e == 0:  # the sign of an exact zero sum: IEEE's, from the rounded operations
                out.append(float(np.float64(a) * np.float64(b) + np.float64(c)))
            else:
                out.append(round_exact(e, dtype))
        else:
            out.append(float(a * b + c))
    return np.array(out).astype(NUMPY[dtype])


def gpu_mulhi(x, y, dtype):
    """Triton's umulhi is tt.mulhiui for every type: the high half of the product of the bit
    patterns read as unsigned (mul.hi.u32 / u64), stored in `dtype`."""
    width = WIDTH[dtype]
    mask = (1 << width) - 1
    out = [((a & mask) * (b & mask)) >> width for a, b in zip(exact(x, dtype), exact(y, dtype))]
    return np.array([_wrap(v, dtype) for v in out], dtype=object).astype(NUMPY[dtype])


def test_math_binary(kernels):
    """fma (single rounding on the GPU), div_rn, fdiv, umulhi, cdiv over the dtype matrix."""
    mism = Mismatches()
    for a in DTYPES:
        for b in DTYPES:
            x, y = cross(a, b)
            for fn in ("div_rn", "fdiv", "umulhi"):
                t, n = both(kernels, f"math_{fn}", tensor_of(x, a), tensor_of(y, b), N=256)
                reason = gpu = results = None
                if fn == "fdiv" and a != b and is_float(a) and is_float(b):
                    # EXPECTED["verifier"]: fdiv does not promote; arith.divf needs one type.
                    if n.error is None:
                        mism.add(f"fdiv({a}, {b})", "Naiad computed it; compiled Triton refuses")
                    continue
                if fn == "fdiv" and a == b == "bf16":
                    reason = "bf16"
                    gpu = lambda slot, dtype, x=x, y=y: gpu_float_binary(
                        "truediv", x, "bf16", y, "bf16", "bf16"
                    )
                if fn == "umulhi" and t.error is None and t.results[0][0] == "int32":
                    # EXPECTED["umulhi"]: the interpreter sign-extends int32 before multiplying
                    reason = "umulhi"
                    gpu = lambda slot, dtype, x=x, y=y: gpu_mulhi(
                        x.astype(np.int32), y.astype(np.int32), "int32"
                    )
                if (
                    fn == "umulhi"
                    and "int64" in (a, b)
                    and is_int(a)
                    and is_int(b)
                    and WIDTH[a] >= 32
                    and WIDTH[b] >= 32
                ):
                    # EXPECTED["umulhi"]: the interpreter's 64-bit umulhi crashes on negatives
                    res = "uint64" if "uint64" in (a, b) else "int64"
                    reason, results = "umulhi", [(res, (256,))]
                    gpu = lambda slot, dtype, res=res, x=x, y=y, a=a, b=b: gpu_mulhi(
                        x.astype(NUMPY[res]), y.astype(NUMPY[res]), res
                    )
                compare(f"{fn}({a}, {b})", t, n, mism, gpu, reason, results)
        x, y = cross(a, a)
        z = np.roll(y, 7)
        t, n = both(kernels, "math_fma", tensor_of(x, a), tensor_of(y, a), tensor_of(z, a), N=256)
        reason = gpu = None
        if is_int(a):  # EXPECTED["verifier"]: math.fma on integers fails IR verification
            if n.error is None:
                mism.add(
                    f"fma({a})", "Naiad computed it; compiled Triton refuses math.fma on integers"
                )
            continue
        if a in ("fp16", "fp32", "fp64"):
            reason, gpu = "fma", lambda slot, dtype: gpu_fma(x, y, z, a)
        elif a == "bf16":  # fma.rn.bf16: one rounding of the exact value
            reason = "bf16"
            gpu = lambda slot, dtype: gpu_fma(x, y, z, "bf16")
        compare(f"fma({a})", t, n, mism, gpu, reason)
        for d in (3, -3, 1, 0):
            x = values_of(a, 16)
            t, n = both(kernels, "math_cdiv", tensor_of(x, a), N=16, D=d)
            reason, gpu = None, None
            if t.error is None and is_int(t.results[0][0]):  # (x + (d - 1)) // d: by zero too
                res = t.results[0][0]
                xs = x.astype(NUMPY[res]) + NUMPY[res].type(d - 1)
                reason = "idiv0"
                gpu = lambda slot, dtype, xs=xs, res=res, d=d: gpu_int_divide(
                    "floordiv", xs, np.full(16, d).astype(NUMPY[res]), res
                )
            compare(f"cdiv({a}, {d})", t, n, mism, gpu, reason)
    mism.check()


# -------------------------------------------------------------------------------------------------
# minimum, maximum, clamp (NaN), where
# -------------------------------------------------------------------------------------------------
def gpu_extremum(which, x, y, propagate, comp):
    """min/max in float type `comp` (bf16 promotes to fp32): NaN per `propagate`, -0 < +0."""
    xs, ys = x.astype(np.float64), y.astype(np.float64)
    pick = np.where(xs < ys, xs, ys) if which == "min" else np.where(xs > ys, xs, ys)
    tie = xs == ys
    zero_pick = (
        (np.signbit(xs) | np.signbit(ys)) if which == "min" else (np.signbit(xs) & np.signbit(ys))
    )
    pick = np.where(tie, np.where(zero_pick, -np.abs(xs), np.abs(xs)), pick)
    nan = np.isnan(xs) | np.isnan(ys)
    other = np.where(np.isnan(xs), ys, xs)
    pick = np.where(nan, np.nan if propagate else other, pick)
    return pick.astype(NUMPY[comp])


@pytest.mark.parametrize("fn", ["minimum", "maximum"])
def test_minimum_maximum(kernels, fn):
    """Tensors: promotion as binary operators, bf16 computed in fp32 (result fp32), NaN rules."""
    mism = Mismatches()
    nan_modes = {"NONE": 0, "ALL": 1}
    for a in DTYPES:
        for b in DTYPES:
            x, y = cross(a, b)
            for mode in nan_modes:
                outcomes = []
                for module in kernels:
                    outcomes.append(
                        launch(
                            module,
                            f"ext_{fn}",
                            (tensor_of(x, a), tensor_of(y, b)),
                            dict(N=256, NAN=getattr(module.tl.PropagateNan, mode)),
                        )
                    )
                t, n = outcomes
                reason = gpu = None
                if t.error is None and is_float(t.results[0][0]):
                    comp = t.results[0][0]
                    reason = "bf16" if "bf16" in (a, b) else "signed_zero"
                    gpu = lambda slot, dtype, comp=comp, mode=mode, x=x, y=y, a=a, b=b: (
                        gpu_extremum(
                            fn[:3],
                            gpu_convert(x, a, comp),
                            gpu_convert(y, b, comp),
                            mode == "ALL",
                            comp,
                        )
                    )
                compare(f"{fn}({a}, {b}, {mode})", t, n, mism, gpu, reason)
    mism.check()


@pytest.mark.parametrize("fn", ["minimum", "maximum"])
def test_minimum_maximum_python_scalar(kernels, fn):
    """`tl.minimum(x, 0.5)`: Triton makes the scalar a tensor first, so it takes part in
    promotion (fp16 with 0.5 is fp32, int8 with 1000 is int32)."""
    mism = Mismatches()
    for a in DTYPES:
        x = values_of(a, 16)
        for s in (0, -1, 1000, 2**40, 0.5, -0.0, math.nan, True):
            t, n = both(kernels, f"ext_{fn}_s", tensor_of(x, a), N=16, S=s)
            reason = gpu = None
            if t.error is None and is_float(t.results[0][0]):
                comp = t.results[0][0]
                s_type = literal_type(s)
                s_vals = np.broadcast_to(
                    gpu_convert(scalar_constant(s, s_type), s_type, comp), (16,)
                )
                reason = "bf16" if a == "bf16" else "signed_zero"
                gpu = lambda slot, dtype, comp=comp, s_vals=s_vals: gpu_extremum(
                    fn[:3], gpu_convert(x, a, comp), s_vals, False, comp
                )
            compare(f"{fn}({a}, {s!r})", t, n, mism, gpu, reason)
    mism.check()


def test_clamp(kernels):
    mism = Mismatches()
    for a in DTYPES:
        x = values_of(a)
        lo = np.roll(values_of(a), 3)
        hi = np.roll(values_of(a), 11)
        for mode in ("NONE", "ALL"):
            outcomes = []
            for module in kernels:
                outcomes.append(
                    launch(
                        module,
                        "ext_clamp",
                        tuple(tensor_of(v, a) for v in (x, lo, hi)),
                        dict(N=N, NAN=getattr(module.tl.PropagateNan, mode)),
                    )
                )
            t, n = outcomes
            reason = gpu = None
            if a == "bf16" and t.error is None:
                reason = "bf16"
                gpu = lambda slot, dtype, mode=mode: _gpu_clamp(x, lo, hi, mode)
            compare(f"clamp({a}, {mode})", t, n, mism, gpu, reason)
        for lo_s, hi_s in ((-1, 1), (0.25, 100), (-0.0, 0.0), (0, 2**40)):
            t, n = both(
                kernels, "ext_clamp_s", tensor_of(values_of(a, 16), a), N=16, LO=lo_s, HI=hi_s
            )
            reason = gpu = None
            if a == "bf16" and t.error is None:
                reason = "bf16"
                xs = values_of(a, 16)
                gpu = lambda slot, dtype, lo_s=lo_s, hi_s=hi_s: _gpu_clamp(
                    xs,
                    np.full(16, float(scalar_constant(lo_s, literal_type(lo_s))[0])),
                    np.full(16, float(scalar_constant(hi_s, literal_type(hi_s))[0])),
                    "NONE",
                )
            compare(f"clamp({a}, {lo_s!r}, {hi_s!r})", t, n, mism, gpu, reason)
    mism.check()


def _gpu_clamp(x, lo, hi, mode):
    """clamp in fp32 (bf16 operands are promoted): max then min, NaN per mode (of x only)."""
    xs, los, his = (np.asarray(v).astype(np.float32) for v in (x, lo, hi))
    if mode == "ALL":
        return np.minimum(np.maximum(xs, los), his)
    return np.fmin(np.fmax(xs, los), his)


def test_where(kernels):
    """tl.where: the condition (int1, or cast to int1 from another type), x and y promoted as a
    binary operator with Python-scalar rules (x, y are not made tensors first)."""
    mism = Mismatches()
    for c in ("int1", "int32", "fp32"):
        cond = np.resize(values_of(c), 256)
        for a in DTYPES:
            for b in DTYPES:
                x, y = cross(a, b)
                t, n = both(
                    kernels,
                    "sel_where",
                    tensor_of(cond, c),
                    tensor_of(x, a),
                    tensor_of(y, b),
                    N=256,
                )
                reason = gpu = None
                if t.error is None and "bf16" in (a, b) and t.results[0][0] != "bf16":
                    comp = t.results[0][0]
                    truth = gpu_convert(cond, c, "int1")
                    reason = "bf16"
                    gpu = lambda slot, dtype, comp=comp, truth=truth, x=x, y=y, a=a, b=b: np.where(
                        truth, gpu_convert(x, a, comp), gpu_convert(y, b, comp)
                    )
                compare(f"where({c}, {a}, {b})", t, n, mism, gpu, reason)
            if c != "int1":
                continue
            for s in (0, -1, 300, 2**40, 0.5, -0.0, True):
                t, n = both(
                    kernels,
                    "sel_where_s",
                    tensor_of(cond[:16], c),
                    tensor_of(values_of(a, 16), a),
                    N=16,
                    S=s,
                )
                reason = gpu = None
                if t.error is not None and "get_bf16" in str(t.error):
                    xs = values_of(a, 16)
                    reason, results = "get_bf16", [("bf16", (16,))]
                    gpu = lambda slot, dtype, s=s, xs=xs: np.where(
                        cond[:16], xs, scalar_constant(s, "bf16")
                    )
                    compare(f"where(c, {a}, {s!r})", t, n, mism, gpu, reason, results)
                    continue
                compare(f"where(c, {a}, {s!r})", t, n, mism)
        if c == "int1":
            for s1, s2 in ((1, 2.5), (1, -1), (2**40, 1), (True, 3), (-0.0, 0.0)):
                compare(
                    f"where(c, {s1!r}, {s2!r})",
                    *both(kernels, "sel_where_ss", tensor_of(cond[:16], c), N=16, A=s1, B=s2),
                    mism,
                )
    mism.check()


# -------------------------------------------------------------------------------------------------
# Reductions and scans
# -------------------------------------------------------------------------------------------------
def reduce_values(dtype, n=N):
    """Values for reductions: no inf/NaN for sums (the order of a float sum is not compared)."""
    x = values_of(dtype, n)
    if is_float(dtype):
        rng = np.random.default_rng(7)
        x = rng.uniform(-4, 4, n).astype(np.float64).astype(NUMPY[dtype])
    return x


def close(tv, nv, dtype, rel):
    """Norm-wise: |t - n| <= rel * sum(|t|) elementwise-broadcast (reductions of one order or
    another of the same terms)."""
    t64, n64 = np.asarray(tv).astype(np.float64), np.asarray(nv).astype(np.float64)
    scale = np.abs(t64).sum() + 1.0
    return np.abs(t64 - n64) <= rel * scale


TOL = {"fp16": 2e-3, "bf16": 1.6e-2, "fp32": 1e-6, "fp64": 1e-14}


@pytest.mark.parametrize("fn", REDUCTIONS)
def test_reductions(kernels, fn):
    """sum/max/min/argmax/argmin/xor_sum: result dtypes (int8 sum -> int32, uint8 -> uint32,
    max of int8 -> int32, of fp16/bf16 -> fp32), 1-D and 2-D, keep_dims, ints exact."""
    mism = Mismatches()
    for a in ("int1",) + DTYPES:
        x = reduce_values(a)
        xt = tensor_of(x, a)
        runs = [(f"{fn}({a})", both(kernels, f"red_{fn}", xt, N=N))]
        for axis in (0, 1) + ((None,) if not fn.startswith("arg") else ()):
            for keep in (False, True):
                runs.append(
                    (
                        f"{fn}({a}, axis={axis}, keep_dims={keep})",
                        both(kernels, f"red2_{fn}", xt, AXIS=axis, KEEP=keep),
                    )
                )
        for case, (t, n) in runs:
            if a == "bf16" and t.error is None:  # EXPECTED["bf16"]: Triton on the fp32 values
                t = launch(
                    kernels[0],
                    case_kernel(fn, case),
                    (tensor_of(x.astype(np.float32), "fp32"),),
                    case_kwargs(case),
                )
                if n.error is None and t.error is None and fn == "sum":
                    if n.results[0][0] != "bf16" or n.results[0][1] != t.results[0][1]:
                        mism.add(case, f"[bf16] Naiad's results {n.results}")
                    elif not close(t.values(0), n.values(0), "bf16", TOL["bf16"]).all():
                        mism.add(case, f"[bf16] {t.values(0)} {n.values(0)}")
                    continue
            if (
                fn == "sum"
                and a == "int32"
                and t.error is not None
                and "out of bounds" in str(t.error)
            ):
                axis = case_kwargs(case).get("AXIS", None)
                keep = case_kwargs(case).get("KEEP", False)
                data = x.astype(np.int64)
                data = data.reshape(8, 8) if "axis" in case else data
                ref = data.sum(axis=axis if "axis" in case else None, keepdims=keep)
                compare(
                    case,
                    t,
                    n,
                    mism,
                    lambda slot, dtype, ref=ref: ref.astype(np.int32),
                    "sum_overflow",
                    [("int32", tuple(np.shape(ref)))],
                )
                continue
            if fn == "xor_sum" and "axis=None, keep_dims=True" in case and t.error is None:
                # EXPECTED["keepdims"]: compiled Triton keeps both dimensions.
                ref = np.bitwise_xor.reduce(x.reshape(-1)).reshape(1, 1)
                if n.error is not None or n.results != [(a, (1, 1))]:
                    mism.add(case, f"[keepdims] Naiad gave {n.results or n.error}")
                else:
                    check_values(
                        case,
                        0,
                        a,
                        None,
                        n.values(0),
                        mism,
                        lambda slot, dtype, ref=ref: ref,
                        "keepdims",
                    )
                continue
            if (
                t.error is None
                and n.error is None
                and t.results == n.results
                and is_float(t.results[0][0])
                and fn == "sum"
            ):
                dtype = t.results[0][0]
                ok = close(t.values(0), n.values(0), dtype, TOL[dtype])
                if not ok.all():  # EXPECTED["reduce_order"]
                    mism.add(case, f"sum differs beyond {TOL[dtype]}: {t.values(0)} {n.values(0)}")
                continue
            compare(case, t, n, mism)
    mism.check()


def case_kernel(fn, case):
    return f"red2_{fn}" if "axis" in case else f"red_{fn}"


def case_kwargs(case):
    if "axis" not in case:
        return {"N": N}
    axis = case.split("axis=")[1].split(",")[0]
    return {"AXIS": None if axis == "None" else int(axis), "KEEP": "keep_dims=True" in case}


def test_reductions_with_nan(kernels):
    """max/min skip NaN in both; EXPECTED["nanarg"]: argmax/argmin with NaN follow the combine
    function on the GPU (comparisons with NaN are false), not np.nanargmax."""
    mism = Mismatches()
    for a in ("fp16", "fp32", "fp64"):
        x = reduce_values(a)
        x[[3, 17, 40]] = np.nan
        xt = tensor_of(x, a)
        for fn in ("max", "min"):
            compare(f"{fn}({a} with NaN)", *both(kernels, f"red_{fn}", xt, N=N), mism)
        for fn in ("argmax", "argmin"):
            t, n = both(kernels, f"red_{fn}", xt, N=N)
            compare(
                f"{fn}({a} with NaN)",
                t,
                n,
                mism,
                lambda slot, dtype, fn=fn, x=x: np.array(_gpu_arg(fn, x)),
                "nanarg",
            )
        for fn in ("max_idx", "min_idx"):
            t, n = both(kernels, f"red_{fn}", xt, N=N)
            compare(
                f"{fn}({a} with NaN)",
                t,
                n,
                mism,
                lambda slot, dtype, fn=fn, x=x: _gpu_arg_pair(fn[:3], x, slot),
                "nanarg",
            )
    mism.check()


def _tree_combine(values, combine):
    """Combine neighbours pairwise (the shape of the GPU's reduction tree across a block)."""
    items = list(values)
    while len(items) > 1:
        items = [combine(items[i], items[i + 1]) for i in range(0, len(items), 2)]
    return items[0]


def _gpu_arg(fn, x):
    return _gpu_arg_pair(fn[3:], x, 1)


def _gpu_arg_pair(which, x, slot):
    """argmax/argmin's combine (tie_break_left): keep (v1, i1) when v1 > v2 (or <), or equal and
    i1 < i2; NaN compares false, so the right-hand pair wins against a NaN on the left."""

    def combine(p, q):
        (v1, i1), (v2, i2) = p, q
        better = v1 > v2 if which == "max" else v1 < v2
        return p if better or (v1 == v2 and i1 < i2) else q

    value, index = _tree_combine(
        [(float(v), i) for i, v in enumerate(x.astype(np.float64))], combine
    )
    return np.array(value).astype(x.dtype) if slot == 0 else np.array(index, np.int32)


def test_sum_dtype_argument(kernels):
    mism = Mismatches()
    for a in ("int8", "uint8", "int32", "fp16", "bf16"):
        xt = tensor_of(reduce_values(a), a)
        for dst in ("int8", "int64", "uint16", "fp32", "fp64"):
            t, n = _both_dtype(kernels, "red_sum_dtype", dst, xt, N=N)
            if t.error is None and n.error is None and is_float(dst):
                if t.results != n.results:
                    mism.add(f"sum({a}, dtype={dst})", f"types {t.results} {n.results}")
                elif a == "bf16":
                    pass  # EXPECTED["bf16"]: the interpreter's bf16 -> fp32 conversion
                elif not close(t.values(0), n.values(0), dst, TOL[dst]).all():
                    mism.add(f"sum({a}, dtype={dst})", "values differ")
                continue
            compare(f"sum({a}, dtype={dst})", t, n, mism)
    mism.check()


@pytest.mark.parametrize("fn", ["cumsum", "cumprod"])
def test_scans(kernels, fn):
    """cumsum (int8 -> int32, bf16 -> fp32) and cumprod (bf16 -> fp32), forward and reverse."""
    mism = Mismatches()
    for a in ("int1",) + DTYPES:
        x = reduce_values(a)
        if fn == "cumprod" and is_float(a):
            x = (1 + (x.astype(np.float64) / 64)).astype(NUMPY[a])
        xt = tensor_of(x, a)
        for reverse in (False, True):
            t, n = both(kernels, f"scan_{fn}", xt, N=N, REVERSE=reverse)
            case = f"{fn}({a}, reverse={reverse})"
            if (
                t.error is None
                and n.error is None
                and t.results == n.results
                and is_float(t.results[0][0])
            ):
                dtype = t.results[0][0]
                if a == "bf16":  # EXPECTED["bf16"]: compare with a model of the promoted values
                    ref = (np.cumsum if fn == "cumsum" else np.cumprod)(
                        x.astype(np.float64)[::-1] if reverse else x.astype(np.float64)
                    )
                    tv = ref[::-1] if reverse else ref
                else:
                    tv = t.values(0)
                ok = (
                    np.abs(tv.astype(np.float64) - n.values(0).astype(np.float64))
                    <= TOL[dtype] * (np.abs(tv.astype(np.float64)) + 1) * 4
                )
                if not ok.all():  # EXPECTED["reduce_order"]
                    mism.add(case, f"values beyond tolerance: {tv[~ok][:4]} {n.values(0)[~ok][:4]}")
                continue
            compare(case, t, n, mism)
        if fn == "cumsum":
            for axis in (0, 1):
                t, n = both(kernels, "scan_cumsum2", xt, AXIS=axis)
                if is_float(a) and t.error is None:
                    if t.results != n.results:
                        mism.add(f"cumsum2({a}, {axis})", f"types {t.results} {n.results}")
                    continue
                compare(f"cumsum2({a}, {axis})", t, n, mism)
    mism.check()


# -------------------------------------------------------------------------------------------------
# sort, topk, flip
# -------------------------------------------------------------------------------------------------
def test_sort_topk_flip(kernels):
    """Triton's bitonic network exactly: an element takes its partner where `(x > y) != (flip ^
    is_right)`, so -0.0/+0.0 and NaN pairs keep the left value twice; topk keeps the max of pairs
    of runs (its dtype: int8 -> int32, fp16 -> fp32)."""
    mism = Mismatches()
    for a in ("int1",) + DTYPES:
        x = values_of(a, 32)
        xt = tensor_of(x, a)
        runs = [
            (f"sort({a}, descending={d})", "sort_sort", dict(N=32, DESCENDING=d))
            for d in (False, True)
        ]
        runs += [
            (f"sort2({a}, descending={d})", "sort_sort2", dict(DESCENDING=d)) for d in (False, True)
        ]
        runs += [(f"topk({a}, {k})", "sort_topk", dict(N=32, K=k)) for k in (1, 4, 32)]
        runs += [(f"flip({a})", "sort_flip", dict(N=32))]
        runs += [(f"flip2({a}, {d})", "sort_flip2", dict(DIM=d)) for d in (0, 1, -1)]
        for case, name, kwargs in runs:
            t, n = both(kernels, name, xt, **kwargs)
            if t.error is not None and ("numel" in str(t.error) or "NoneType" in str(t.error)):
                # EXPECTED["triton_bug"]: topk(x, 1) and flip(x) crash in Triton 3.8. The top
                # value is Triton's tl.max (the same pairwise maxima, the same promotion).
                if name == "sort_topk":
                    top = launch(kernels[0], "red_max", (xt,), dict(N=32))
                    ref = top.values(0).reshape(1)
                else:
                    ref = x[::-1]
                out = (
                    (
                        "fp32"
                        if a in ("fp16", "bf16")
                        else "int32"
                        if is_int(a) and WIDTH[a] < 32
                        else a
                    )
                    if name == "sort_topk"
                    else a
                )
                compare(
                    case,
                    t,
                    n,
                    mism,
                    lambda slot, dtype, ref=ref: ref,
                    "triton_bug",
                    [(out, (1,) if name == "sort_topk" else (32,))],
                )
                continue
            if a == "bf16" and t.error is None and name != "sort_flip2":
                # EXPECTED["bf16"]: Triton's network on the (exactly) widened fp32 values.
                t32 = launch(kernels[0], name, (tensor_of(x.astype(np.float32), "fp32"),), kwargs)
                if n.error is None and t32.error is None:
                    same_shape = [r[1] for r in n.results] == [r[1] for r in t32.results]
                    if not same_shape or n.results != t.results:
                        mism.add(case, f"[bf16] results {n.results}, Triton's {t.results}")
                        continue
                    dtype = n.results[0][0]
                    check_values(
                        case, 0, dtype, t32.values(0).astype(NUMPY[dtype]), n.values(0), mism
                    )
                    continue
            compare(case, t, n, mism)
    mism.check()


# -------------------------------------------------------------------------------------------------
# Philox
# -------------------------------------------------------------------------------------------------
def test_philox(kernels):
    """randint/randint4x/rand/randn bit for bit, 32- and 64-bit offsets and seeds."""
    mism = Mismatches()
    rng = np.random.default_rng(3)
    offsets = {
        "int32": rng.integers(-(2**31), 2**31, N, dtype=np.int64).astype(np.int32),
        "uint32": rng.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32),
        "int64": rng.integers(-(2**63), 2**63 - 1, N, dtype=np.int64),
        "uint64": rng.integers(0, 2**64 - 1, N, dtype=np.uint64),
    }
    for name, off in offsets.items():
        ot = tensor_of(off, name)
        for seed in (0, 42, 2**31 - 1, 2**31 + 5, 2**40 + 3, -5):
            for fn in ("randint", "rand", "randn", "randint4x"):
                compare(
                    f"{fn}(seed={seed}, {name} offsets)",
                    *both(kernels, f"rng_{fn}", seed, ot, N=N),
                    mism,
                )
    for seed in (7, 2**35):
        compare(f"rand(seed={seed}, arange)", *both(kernels, "rng_rand_arange", seed, N=N), mism)
        for offset in (0, 12345, 2**31 - 1, 2**33):
            compare(
                f"randint(seed={seed}, offset={offset})",
                *both(kernels, "rng_randint_scalar", seed, offset),
                mism,
            )
    mism.check()


# -------------------------------------------------------------------------------------------------
# Literals, constexpr assignment, loops
# -------------------------------------------------------------------------------------------------
def test_literals(kernels):
    """`x = LIT`: int32 / uint32 / int64 / uint64 by range, fp32, fp64 outside fp32's normal
    range (1e50, 1e-50, 2**-127), -0.0 made +0.0; `x + LIT` with int8/uint8/fp16/fp32 tensors."""
    mism = Mismatches()
    for i, lit in enumerate(LITERALS):
        compare(f"x = {lit}", *both(kernels, f"lit_{i}"), mism)
        for a in ("int8", "uint8", "int32", "uint64", "fp16", "fp32", "fp64"):
            t, n = both(kernels, f"litop_{i}", tensor_of(values_of(a, 16), a), N=16)
            reason = gpu = None
            if a == "fp16" and t.error is None and "." in lit and t.results[0][0] == "fp16":
                x = values_of(a, 16)
                reason = "fp16_scalar"
                gpu = lambda slot, dtype, lit=lit, x=x: gpu_float_binary(
                    "add",
                    x,
                    "fp16",
                    np.broadcast_to(scalar_constant(eval(lit), "fp16"), (16,)),
                    "fp16",
                    "fp16",
                )
            compare(f"{a} + {lit}", t, n, mism, gpu, reason)
    mism.check()


def test_constexpr_assignment(kernels):
    """`c = C` makes a tensor of C's literal type (it takes part in promotion), `c: tl.constexpr`
    keeps a constexpr (weak scalar), as does using C directly; tl.to_tensor; tl.full."""
    mism = Mismatches()
    for a in ("int8", "uint8", "int64", "fp16", "fp32"):
        x = tensor_of(values_of(a, 16), a)
        for c in (3, -3, 300, 2**31, 2**40, 1.5, -0.0, True):
            for kernel in ("const_assign", "const_annotated", "const_direct", "const_to_tensor"):
                t, n = both(kernels, kernel, x, N=16, C=c)
                reason = gpu = None
                if (
                    a == "fp16"
                    and kernel in ("const_annotated", "const_direct")
                    and isinstance(c, float)
                    and t.error is None
                ):
                    reason = "fp16_scalar"
                    gpu = lambda slot, dtype, c=c: gpu_float_binary(
                        "add",
                        values_of("fp16", 16),
                        "fp16",
                        np.broadcast_to(scalar_constant(c, "fp16"), (16,)),
                        "fp16",
                        "fp16",
                    )
                compare(f"{kernel}({a}, {c!r})", t, n, mism, gpu, reason)
    for dtype in ("int8", "uint8", "int32", "uint64", "fp16", "bf16", "fp32", "fp64"):
        for c in (0, 5, -1, 300, 1.5, -0.0, 1 + 2**-11 + 2**-40, True):
            t, n = _both_dtype(kernels, "const_full", dtype, N=16, C=c)
            reason = gpu = results = None
            if t.error is not None and "get_bf16" in str(t.error):
                reason, results = "get_bf16", [("bf16", (16,))]
                gpu = lambda slot, dt, c=c: np.broadcast_to(scalar_constant(c, "bf16"), (16,))
            elif dtype == "fp16" and isinstance(c, float):
                reason = "fp16_scalar"
                gpu = lambda slot, dt, c=c: np.broadcast_to(scalar_constant(c, "fp16"), (16,))
            compare(f"full({c!r}, {dtype})", t, n, mism, gpu, reason, results)
    mism.check()


def test_loops_wrap_around(kernels):
    """`acc = 0` is int32: `acc += STEP` and `acc * 3 + 1` wrap as on the GPU."""
    mism = Mismatches()
    for n_iter in (0, 1, 5, 33):
        for step in (1, 2**30, 2**31 - 1, -(2**31)):
            compare(
                f"acc += {step} x {n_iter}",
                *both(kernels, "loop_wrap_add", n_iter, STEP=step),
                mism,
            )
        compare(f"acc = acc * 3 + 1 x {n_iter}", *both(kernels, "loop_wrap_mul", n_iter), mism)
        compare(
            f"acc block += arange x {n_iter}", *both(kernels, "loop_wrap_block", n_iter, N=16), mism
        )
        compare(f"while x {n_iter}", *both(kernels, "loop_while", n_iter), mism)
    for lo, hi, step in ((0, 10, 1), (-5, 100, 7), (2**31 - 10, 2**31 - 1, 3), (10, 0, -2)):
        compare(
            f"sum(range({lo}, {hi}, {step}))",
            *both(kernels, "loop_index_sum", lo, hi, STEP=step),
            mism,
        )
    mism.check()


# -------------------------------------------------------------------------------------------------
# Where the interpreters run plain Python: compiled Triton's front end is the oracle
# -------------------------------------------------------------------------------------------------
FRONTEND = """
import triton.language as tl
from triton.runtime.jit import JITFunction as jit


@jit
def fe_not(x_ptr):
    y = not tl.load(x_ptr + tl.arange(0, 16))
    tl.static_print("RESULT", y.dtype)


@jit
def fe_and(x_ptr):
    y = tl.load(x_ptr) and tl.load(x_ptr + 1)
    tl.static_print("RESULT", y.dtype)


@jit
def fe_or_block(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    y = x or x
    tl.static_print("RESULT", y.dtype)


@jit
def fe_plus(x_ptr):
    y = +tl.load(x_ptr + tl.arange(0, 16))
    tl.static_print("RESULT", y.dtype)


@jit
def fe_abs(x_ptr):
    y = abs(tl.load(x_ptr + tl.arange(0, 16)))
    tl.static_print("RESULT", y.dtype)


@jit
def fe_loop_index(x_ptr, n):
    x = tl.load(x_ptr + tl.arange(0, 16))
    for i in range(n, n + 1):
        y = x + i
        tl.static_print("RESULT", y.dtype)


@jit
def fe_loop_carried(x_ptr, n):
    x = tl.load(x_ptr + tl.arange(0, 16))
    for i in range(n, n + 1):
        x = x + i
    tl.static_print("RESULT", x.dtype)


@jit
def fe_float_arg(x_ptr, s):
    y = tl.load(x_ptr + tl.arange(0, 16)) + s
    tl.static_print("RESULT", y.dtype)


@jit
def fe_const(x_ptr, S: tl.constexpr):
    y = tl.load(x_ptr + tl.arange(0, 16)) + S
    tl.static_print("RESULT", y.dtype)
"""


FRONTEND += """

@jit
def fe_topk1(x_ptr):
    y = tl.topk(tl.load(x_ptr + tl.arange(0, 16)), 1)
    tl.static_print("RESULT", y.dtype)


@jit
def fe_flip(x_ptr):
    y = tl.flip(tl.load(x_ptr + tl.arange(0, 16)))
    tl.static_print("RESULT", y.dtype)
"""

# Compiled Triton's front end runs in a child process without TRITON_INTERPRET: there the
# standard library is compiled (here its jit functions are interpreted ones, which patch
# `triton.language` for good once called), and this process's patched module stays out of it.
FRONTEND_RUNNER = """
import contextlib, io, json, sys, warnings
sys.path.insert(0, sys.argv[1])
import triton
import fe_kernels
from triton._C.libtriton import ir
from triton.backends.compiler import GPUTarget
from triton.compiler.compiler import make_backend

target = GPUTarget("cuda", 90, 32)
backend = make_backend(target)
options = backend.parse_options({})
results = {}
for key, name, signature, constexprs in json.load(open(sys.argv[2])):
    src = triton.compiler.ASTSource(fn=getattr(fe_kernels, name), signature=signature,
                                    constexprs={tuple(k): v for k, v in constexprs})
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()), \\
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ttir = src.make_ir(target, options, backend.get_codegen_implementation(options),
                               backend.get_module_map(), context)
    except Exception as error:
        results[key] = ["error", type(error).__name__ + ": " + str(error).strip()[-1500:], None]
        continue
    printed = [line.split("RESULT", 1)[1].strip() for line in out.getvalue().splitlines()
               if "RESULT" in line]
    results[key] = ["ok", printed, str(ttir)]
json.dump(results, open(sys.argv[3], "w"))
"""


def frontend_requests():
    """(key, kernel, signature, constexprs) of every front-end compile the tests read."""
    requests = []
    for a in ("int1", "int32", "fp32"):
        for name in ("fe_not", "fe_and", "fe_or_block", "fe_plus", "fe_abs", "fe_topk1", "fe_flip"):
            requests.append((f"{name}:{a}", name, {"x_ptr": _ptr(a)}, []))
    for a in ("int8", "uint8", "int64", "fp16"):
        for bits in ("i32", "i64"):
            for name in ("fe_loop_index", "fe_loop_carried"):
                requests.append((f"{name}:{a}:{bits}", name, {"x_ptr": _ptr(a), "n": bits}, []))
        requests.append((f"fe_float_arg:{a}", "fe_float_arg", {"x_ptr": _ptr(a), "s": "fp32"}, []))
    for a in ("fp16", "bf16", "fp32"):
        for s in CONSTANTS:
            signature = {"x_ptr": _ptr(a), "S": "constexpr"}
            requests.append((f"fe_const:{a}:{s!r}", "fe_const", signature, [[[1], s]]))
    return requests


CONSTANTS = (0.1, 1 + 2**-11 + 2**-40, 1 + 2**-8 + 2**-40, -0.0, 1e-7, 3.0e-5, 65519.0, 12345.678)


@pytest.fixture(scope="module")
def frontend(tmp_path_factory):
    """key -> ("ok", static_print output, TTIR) or ("error", message, None): compiled Triton's
    front end for sm_90 (AST -> TTIR; no GPU needed), run in a child process."""
    import json
    import subprocess

    root = tmp_path_factory.mktemp("frontend")
    (root / "fe_kernels.py").write_text(FRONTEND)
    (root / "runner.py").write_text(FRONTEND_RUNNER)
    (root / "requests.json").write_text(json.dumps(frontend_requests()))
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run(
        [
            sys.executable,
            str(root / "runner.py"),
            str(root),
            str(root / "requests.json"),
            str(root / "results.json"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        pytest.skip(f"compiled Triton's front end is not available here: {done.stderr[-500:]}")
    return json.loads((root / "results.json").read_text())


_SIG = {"int1": "i1", "fp16": "fp16", "bf16": "bf16", "fp32": "fp32", "fp64": "fp64"}


def _ptr(dtype):
    return "*" + _SIG.get(dtype, dtype.replace("uint", "u").replace("int", "i"))


def _agree(case, compiled, n: Outcome, mism):
    """Naiad raises where compiled Triton's front end raises, and gives its result dtype."""
    status, printed, _ = compiled
    if status == "error":
        if n.error is None:
            mism.add(
                case,
                f"compiled Triton refuses ({printed.splitlines()[-1][:200]}); Naiad "
                f"gave {n.results}",
            )
        return
    if n.error is not None:
        mism.add(case, f"compiled Triton accepts ({printed}); Naiad raised {n.error}")
        return
    if [r[0] for r in n.results][:1] != printed[:1]:
        mism.add(case, f"compiled Triton's type {printed}, Naiad's {n.results}")


def test_compiled_frontend_rules(kernels, frontend):
    """EXPECTED["not"], ["loop_index"], ["float_arg"], and `+x`, `abs(x)`, `and`, loop-carried
    type changes, topk(x, 1), flip(x): what compiled Triton accepts and how it types it, Naiad
    too (except EXPECTED["triton_bug"])."""
    mism = Mismatches()
    nk = kernels[1]
    for a in ("int1", "int32", "fp32"):
        x = tensor_of(values_of(a), a)
        x16 = tensor_of(values_of(a, 16), a)
        runs = (
            ("fe_not", f"not {a}", "unary_not", (x,), dict(N=N)),
            ("fe_and", f"{a} and {a} (scalars)", "logic_and", (x,), {}),
            ("fe_or_block", f"{a} or {a} (blocks)", "logic_or_block", (x,), dict(N=16)),
            ("fe_plus", f"+{a}", "unary_plus", (x,), dict(N=N)),
            ("fe_abs", f"abs({a})", "unary_abs_builtin", (x,), dict(N=N)),
            ("fe_topk1", f"topk({a}, 1)", "sort_topk", (x16,), dict(N=16, K=1)),
            ("fe_flip", f"flip({a})", "sort_flip", (x16,), dict(N=16)),
        )
        for fe, case, kernel, args, kwargs in runs:
            compiled = frontend[f"{fe}:{a}"]
            n = launch(nk, kernel, args, kwargs)
            if fe in ("fe_topk1", "fe_flip") and compiled[0] == "error" and n.error is None:
                continue  # EXPECTED["triton_bug"]: Naiad gives the documented result
            _agree(case, compiled, n, mism)
    for a in ("int8", "uint8", "int64", "fp16"):
        x = tensor_of(values_of(a, 16), a)
        for bits, n_value in (("i32", 3), ("i64", 2**40)):
            n = launch(nk, "loop_index_type", (x, n_value), dict(N=16))
            _agree(f"{a} + loop index ({bits})", frontend[f"fe_loop_index:{a}:{bits}"], n, mism)
            n = launch(nk, "loop_carried_type_change", (x, n_value), dict(N=16))
            _agree(
                f"{a} = {a} + loop index ({bits})", frontend[f"fe_loop_carried:{a}:{bits}"], n, mism
            )
        n = launch(nk, "tr_add", (x, 2.5), dict(N=16))
        _agree(f"{a} + float argument", frontend[f"fe_float_arg:{a}"], n, mism)
    mism.check()


def _ttir_constant(ttir, mlir_type):
    """The value of the scalar `arith.constant ... : <mlir_type>` in TTIR, as a float."""
    for line in ttir.splitlines():
        line = line.strip()
        if (
            "arith.constant" in line
            and "dense" not in line
            and line.split(":")[-1].split()[0] == mlir_type
        ):
            text = line.split("arith.constant", 1)[1].split(":")[0].strip()
            if text.startswith("0x"):
                width = 16 if mlir_type in ("f16", "bf16") else 32
                dtype = {"f16": "fp16", "bf16": "bf16", "f32": "fp32"}[mlir_type]
                return float(np.array(int(text, 16), f"uint{width}").view(NUMPY[dtype]))
            return float(text)
    return None


def test_compiled_scalar_constants(kernels, frontend):
    """A Python float with an fp16 / bf16 tensor: compiled Triton's constant (read from its TTIR)
    is the value rounded to fp32, then to fp16 / bf16; zero is +0.0. Naiad's must be the same,
    except EXPECTED["bf16_const"]."""
    mism = Mismatches()
    for a, mlir in (("fp16", "f16"), ("bf16", "bf16"), ("fp32", "f32")):
        x = values_of(a, 16)  # x[0] is +0.0: lane 0 of x + S is the constant itself
        for s in CONSTANTS:
            status, printed, ttir = frontend[f"fe_const:{a}:{s!r}"]
            n = launch(kernels[1], "ts_add", (tensor_of(x, a),), dict(N=16, S=s))
            if status != "ok" or n.error is not None:
                mism.add(f"{a} + {s!r}", f"compiled: {printed}, Naiad: {n.error}")
                continue
            compiled = _ttir_constant(ttir, mlir)
            naiad_value = float(n.values(0)[0])
            if compiled is None or np.array(compiled).astype(NUMPY[a]).view(
                f"uint{WIDTH[a]}"
            ) == np.array(naiad_value).astype(NUMPY[a]).view(f"uint{WIDTH[a]}"):
                continue
            if a == "bf16":
                # EXPECTED["bf16_const"]: get_bf16 parses std::to_string(float): six decimals.
                quirk = float(np.array(float("%f" % np.float32(s))).astype(NUMPY["bf16"]))
                if compiled == quirk:
                    continue
            mism.add(
                f"{a} + {s!r}", f"compiled Triton's constant {compiled!r}, Naiad's {naiad_value!r}"
            )
    mism.check()
