"""+ - * / // % and unary minus against Triton's interpreter: promotion over the dtype matrix,
weak Python scalars, runtime int and float arguments."""

import numpy as np
import pytest

from .gpu_model import gpu_float_binary
from .harness import (
    DTYPES,
    FP8,
    NUMPY,
    PYTESTMARK,
    WIDTH,
    Mismatches,
    N,
    both,
    check_values,
    compare,
    tensor_of,
    values_of,
)
from .operators import (
    ARITHMETIC,
    check_python_scalar,
    check_runtime_int_argument,
    check_tensor_scalar_tensor,
    check_tensor_tensor,
)

pytestmark = PYTESTMARK


@pytest.mark.parametrize("op", ARITHMETIC)
def test_binary_tensor_tensor(kernels, op):
    check_tensor_tensor(kernels, op)


@pytest.mark.parametrize("op", ["add", "floordiv"])
def test_binary_tensor_scalar_tensor(kernels, op):
    check_tensor_scalar_tensor(kernels, op)


@pytest.mark.parametrize("op", ARITHMETIC)
def test_binary_tensor_python_scalar(kernels, op):
    check_python_scalar(kernels, op)


@pytest.mark.parametrize("op", ARITHMETIC)
def test_binary_runtime_int_argument(kernels, op):
    check_runtime_int_argument(kernels, op)


def test_binary_runtime_float_argument(kernels):
    """EXPECTED["float_arg"]: a float argument is an fp32 scalar in compiled Triton (and Naiad)."""
    mism = Mismatches()
    for a in DTYPES:
        x = values_of(a, 16)
        for s in (2.5, -0.0, 1e-3):
            _, n = both(kernels, "tr_add", tensor_of(x, a), s, N=16)
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


def _flip_sign(x, dtype):
    width = WIDTH[dtype]
    return (np.asarray(x).view(f"uint{width}") ^ np.array(1 << (width - 1), f"uint{width}")).view(
        NUMPY[dtype]
    )


def test_unary_neg(kernels):
    """-x over every dtype; -x of a float flips the sign bit (fneg: -(+0.0) is -0.0)."""
    mism = Mismatches()
    for a in ("int1",) + DTYPES + FP8:
        x = values_of(a)
        t, n = both(kernels, "unary_neg", tensor_of(x, a), N=N)
        reason = gpu = results = None
        if a == "bf16" or a in FP8:
            # EXPECTED["bf16"] / ["fp8"]: np.negative of the uint16 / uint8 bits.
            reason, gpu = ("bf16" if a == "bf16" else "fp8"), lambda slot, dtype: _flip_sign(x, a)
        elif a == "int1":
            reason, results = "bool_arith", [("int1", (N,))]
            gpu = lambda slot, dtype: x  # 0 - x, modulo 2
        compare(f"neg {a}", t, n, mism, gpu, reason, results)
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
