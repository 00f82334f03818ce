"""Literals, constexpr assignment and loops against Triton's interpreter (types of Python numbers,
weak scalars, int32 wrap-around), and the constants compiled Triton makes of Python floats."""

import numpy as np

from .frontend_oracle import CONSTANTS
from .gpu_model import gpu_float_binary, scalar_constant
from .harness import (
    NUMPY,
    PYTESTMARK,
    WIDTH,
    Mismatches,
    both,
    both_dtype,
    compare,
    launch,
    tensor_of,
    values_of,
)
from .kernel_sources import LITERALS

pytestmark = PYTESTMARK


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
            t, n = both_dtype(kernels, "const_full", dtype, N=16, C=c)
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
# The constants of Python floats: compiled Triton's front end is the oracle (frontend_oracle.py)
# -------------------------------------------------------------------------------------------------
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
                quirk = float(np.array(float(f"{float(np.float32(s)):f}")).astype(NUMPY["bf16"]))
                if compiled == quirk:
                    continue
            mism.add(
                f"{a} + {s!r}", f"compiled Triton's constant {compiled!r}, Naiad's {naiad_value!r}"
            )
    mism.check()
