"""Transcendental `math` ops lowered to calls of the CPU math library, for every float type,
against the reference within the tolerance table's CPU bounds (4 ulp where the table has no
row). Narrow formats compute in f32 and round back as the reference does, so fp8 overflow
follows each op's path (NaN for `exp`, saturation for `tanh`'s cast).

Ops whose function the math library does not have yet are skipped here; lowering one is a
compile error naming the function.
"""

import numpy as np
import pytest
from scalar_jit import ScalarKernels, make_op, reference
from scalar_values import moderate_values

from naiad.backends.cpu import mathlib
from naiad.backends.cpu.lower_scalar.math_ops import _ARITH_PATH, _CAST_PATH
from naiad.ir import FloatType
from naiad.testing.tolerance import TOLERANCES, ulp_distance

KINDS = ("f32", "f64", "f16", "f8E4M3FN")
MORE_KINDS = ("bf16", "f8E5M2", "f8E4M3FNUZ", "f8E5M2FNUZ")
FUNCTIONS = {**_ARITH_PATH, **_CAST_PATH}
BINARY = ("math.powf", "math.atan2")


def _bound(name: str) -> int:
    row = TOLERANCES.get(name)
    return row["cpu"].ulp if row is not None and row["cpu"].kind == "ulp" else 4


@pytest.mark.parametrize(
    "kind", [*KINDS, *(pytest.param(kind, marks=pytest.mark.full) for kind in MORE_KINDS)]
)
def test_math_functions_are_within_the_cpu_bound(kind):
    available = {op: fn for op, fn in FUNCTIONS.items() if fn in mathlib.NAMES}
    if not available:
        pytest.skip("the math library has none of these functions yet")
    rng = np.random.default_rng(len(kind))
    ty = FloatType(kind)
    kernels = ScalarKernels()
    cases = []
    for name, function in sorted(available.items()):
        arity = 2 if name in BINARY else 1
        op = make_op(name, [ty] * arity, [ty])
        inputs = [moderate_values(ty, 2048, rng) for _ in range(arity)]
        cases.append((kernels.add(op), op, inputs, _bound(function)))
    kernels.compile()
    for kernel, op, inputs, bound in cases:
        got, want = kernels.run(kernel, inputs), reference(op, inputs)
        bad = ulp_distance(got, want) > bound
        assert not bad.any(), (op, [x[bad][:4] for x in inputs], got[bad][:4], want[bad][:4])
