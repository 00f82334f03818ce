"""The binary-operator matrices, shared by test_arithmetic.py (+ - * / // %) and
test_compare_bitwise.py (& | ^ << >> and the comparisons): each `check_*` runs one operator over
the dtypes, with tensors, 0-d tensors, Python scalars or runtime arguments as operands, and fails
the calling test with every difference.
"""

import math

import numpy as np

from .gpu_model import (
    computation_float,
    gpu_float_binary,
    gpu_int_divide,
    literal_type,
    scalar_constant,
)
from .harness import (
    DTYPES,
    NUMPY,
    Mismatches,
    both,
    check_values,
    compare,
    cross,
    is_float,
    is_int,
    tensor_of,
    values_of,
)
from .kernel_sources import BINARY_OPS, COMPARISONS

ARITHMETIC = ("add", "sub", "mul", "truediv", "floordiv", "mod")
BITWISE_SHIFTS_COMPARISONS = ("and", "or", "xor", "shl", "shr") + COMPARISONS
# The two operator test modules between them cover every operator of the kernels.
assert sorted(ARITHMETIC + BITWISE_SHIFTS_COMPARISONS) == sorted(BINARY_OPS)


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


def check_tensor_tensor(kernels, op):
    """`op` over the dtype matrix; 256 lanes: every pair of 16 special values."""
    mism = Mismatches()
    for a in DTYPES:
        for b in DTYPES:
            x, y = cross(a, b)
            t, n = both(kernels, f"tt_{op}", tensor_of(x, a), tensor_of(y, b), N=256)
            result = t.results[0][0] if t.error is None else None
            reason, gpu = binary_expectation(op, x, a, y, b, result)
            compare(f"{a} {BINARY_OPS[op]} {b}", t, n, mism, gpu, reason)
    mism.check()


def check_tensor_scalar_tensor(kernels, op):
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
    2**60 + 2**36 + 1,  # above an fp32 tie, but on it once rounded to a double
]
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


def check_python_scalar(kernels, op):
    """Tensor op Python scalar (and scalar op tensor): weak scalars, range checks, -0.0 -> +0.0."""
    mism = Mismatches()
    for a in DTYPES:
        for s in SCALARS:
            _scalar_case(kernels, op, a, s, False, mism)
            if op in SCALAR_LEFT_OPS:
                _scalar_case(kernels, op, a, s, True, mism)
    mism.check()


RUNTIME_INTS = [0, 5, -3, 2**31 - 1, 2**31, -(2**31) - 1, 2**40, 2**63, 2**64 - 1]


def check_runtime_int_argument(kernels, op):
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
