"""& | ^ << >>, the comparisons, ~x and `not` against Triton's interpreter: promotion over the
dtype matrix, weak Python scalars, runtime int arguments, shift amounts around the width."""

import pytest

from .harness import (
    DTYPES,
    FP8,
    PYTESTMARK,
    Mismatches,
    N,
    both,
    check_values,
    compare,
    tensor_of,
    values_of,
)
from .operators import (
    BITWISE_SHIFTS_COMPARISONS,
    check_python_scalar,
    check_runtime_int_argument,
    check_tensor_scalar_tensor,
    check_tensor_tensor,
)

pytestmark = PYTESTMARK


@pytest.mark.parametrize("op", BITWISE_SHIFTS_COMPARISONS)
def test_binary_tensor_tensor(kernels, op):
    check_tensor_tensor(kernels, op)


@pytest.mark.parametrize("op", ["shr", "lt", "and"])
def test_binary_tensor_scalar_tensor(kernels, op):
    check_tensor_scalar_tensor(kernels, op)


@pytest.mark.parametrize("op", BITWISE_SHIFTS_COMPARISONS)
def test_binary_tensor_python_scalar(kernels, op):
    check_python_scalar(kernels, op)


@pytest.mark.parametrize("op", ["shr", "lt", "xor"])
def test_binary_runtime_int_argument(kernels, op):
    check_runtime_int_argument(kernels, op)


def test_unary_invert(kernels):
    """~x over every dtype, int1 and fp8 included."""
    mism = Mismatches()
    for a in ("int1",) + DTYPES + FP8:
        x = values_of(a)
        t, n = both(kernels, "unary_invert", tensor_of(x, a), N=N)
        reason = gpu = results = None
        if a.startswith("uint"):
            reason, results = "all_ones", [(a, (N,))]
            gpu = lambda slot, dtype: ~x
        compare(f"invert {a}", t, n, mism, gpu, reason, results)
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
