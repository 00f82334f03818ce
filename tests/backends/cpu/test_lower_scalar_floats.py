"""Float ops lowered to LLVM IR, bit-exact with the reference evaluator for every float type:
arithmetic, remainder, fma, sqrt, min / max in both NaN modes, clamp, sign operations, rounding to
integers, classification, every `cmpf` predicate and `select`.

Seeded inputs with equal, negated and NaN pairs mixed in; the full tier runs fp8 binary ops on
every pair of bit patterns (65536 of them). "Exact" means bit-identical, any NaN equal to any NaN
(the tolerance table's rule: NaN payloads of arithmetic are the hardware's).
"""

import numpy as np
import pytest
from scalar_jit import ScalarKernels, make_op, reference, run_all
from scalar_values import int_values, pair_values, values

from naiad.dialects.arith.attributes import CmpFPredicate
from naiad.dialects.tt.attributes import PropagateNan
from naiad.ir import FloatType, IntegerType
from naiad.runtime.evaluator.values import host_dtype
from naiad.testing.tolerance import check

KINDS = ("f16", "bf16", "f32", "f64", "f8E5M2", "f8E4M3FN", "f8E4M3FNUZ", "f8E5M2FNUZ")
FP8 = ("f8E5M2", "f8E4M3FN", "f8E4M3FNUZ", "f8E5M2FNUZ")
I1 = IntegerType(1)

BINARY = (
    "arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.remf", "arith.maximumf",
    "arith.minimumf", "arith.maxnumf", "arith.minnumf", "tt.precise_divf", "math.copysign",
)  # fmt: skip
UNARY = (
    "arith.negf", "math.absf", "math.sqrt", "tt.precise_sqrt", "math.rsqrt", "math.floor",
    "math.ceil", "math.trunc", "math.round", "math.roundeven",
)  # fmt: skip
PREDICATES = (
    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
    "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true",
)  # fmt: skip


def _pairs(ty, n, rng):
    if ty.kind in FP8 and n >= 1 << 16:  # every pair of bit patterns
        every = np.arange(256, dtype=np.uint8).view(host_dtype(ty))
        return np.repeat(every, 256), np.tile(every, 256)
    return pair_values(ty, n, rng)


def _nonzero(x, ty):
    """x with zeros replaced by ones: the reference's clamp leaves the order of +-0 ties to
    NumPy's loops (which differ by dtype and length), so clamp bounds avoid them."""
    one = np.array(1.0).astype(host_dtype(ty))
    with np.errstate(invalid="ignore"):  # the cases hold signaling NaNs, "invalid" as they widen
        return np.where(x.astype(np.float64) == 0, one, x).astype(host_dtype(ty))


def _float_cases(kind: str, n: int, rng):
    ty = FloatType(kind)
    cases = [(make_op(name, [ty, ty], [ty]), list(_pairs(ty, n, rng))) for name in BINARY]
    cases += [(make_op(name, [ty], [ty]), [values(ty, n, rng)]) for name in UNARY]
    for name in ("math.isnan", "math.isinf"):
        cases.append((make_op(name, [ty], [I1]), [values(ty, n, rng)]))
    for predicate in PREDICATES:
        op = make_op("arith.cmpf", [ty, ty], [I1], {"predicate": CmpFPredicate.get(predicate)})
        cases.append((op, list(_pairs(ty, n, rng))))
    select = make_op("arith.select", [I1, ty, ty], [ty])
    cases.append((select, [int_values(1, n, rng), values(ty, n, rng), values(ty, n, rng)]))
    for mode in ("all", "none"):
        op = make_op("tt.clampf", [ty, ty, ty], [ty], {"propagateNan": PropagateNan.get(mode)})
        lo, hi = (_nonzero(values(ty, n, rng), ty) for _ in range(2))
        cases.append((op, [values(ty, n, rng), lo, hi]))
    fma_n = min(n, 512) if kind == "f64" else n  # the reference's f64 fma is exact rationals
    fma_inputs = [values(ty, fma_n, rng) for _ in range(3)]
    cases.append((make_op("math.fma", [ty, ty, ty], [ty]), fma_inputs))
    return cases


@pytest.mark.parametrize("kind", KINDS)
def test_float_ops_match_the_reference(kind):
    cases = _float_cases(kind, 4096, np.random.default_rng(len(kind)))
    fma = [case for case in cases if case[0].name == "math.fma"]
    exact = [case for case in cases if case[0].name != "math.fma"]
    run_all(exact)
    if kind != "f32":  # narrow formats: the same f64 computation; f64: both exact
        run_all(fma)
    else:  # a true fused multiply-add; the reference rounds an f64 sum once more
        [(op, inputs)] = fma
        kernels = ScalarKernels()
        name = kernels.add(op)
        kernels.compile()
        check("fma", kernels.run(name, inputs), reference(op, inputs), "cpu", np.float32)


def test_negf_flips_the_sign_bit_of_fp8e4b15():
    ty = FloatType("f8E4M3B11FNUZ")
    run_all([(make_op("arith.negf", [ty], [ty]), [values(ty, 256, np.random.default_rng(3))])])


@pytest.mark.full
@pytest.mark.parametrize("kind", KINDS)
def test_float_ops_match_the_reference_on_many_inputs(kind):
    cases = _float_cases(kind, 1 << 16, np.random.default_rng(100 + len(kind)))
    run_all([case for case in cases if case[0].name != "math.fma" or kind != "f32"], vectorize=True)
