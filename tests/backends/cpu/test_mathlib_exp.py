"""f32 exp and exp2 (mathlib/exp_single.py) over every float32 input.

The library states 2 ulp for them; these tests hold them to what the single-precision algorithm
measures over all 2**32 inputs (the `full` tier runs each input once; the default tier a strided
sweep of the same space), against NumPy's float64 functions, and check that the loop around
them is 16 lanes wide on AVX-512.
"""

from __future__ import annotations

import functools

import jit_helpers
import numpy as np
import pytest
from jit_helpers import compiled, map_module, optimize
from test_mathlib import _machine, inputs, ulp_errors

from naiad.backends.cpu.mathlib import NAMES, math_function
from naiad.backends.cpu.target import host_target

F32 = np.dtype(np.float32)
# Largest error over every input, measured: exp 1.013 ulp (at x = 59.306), exp2 0.893 ulp (at
# x = -126.4996, a subnormal result, rounded twice). The bounds leave a little room above.
BOUNDS = {"exp": 1.02, "exp2": 0.9}
REFERENCES = {"exp": np.exp, "exp2": np.exp2}
CHUNK = 1 << 24


def worst_over(name: str, stride: int, offset: int = 0) -> tuple[float, float]:
    """(largest ulp error, its input) over the bit patterns offset, offset + stride, ..."""
    function = compiled(name, "float32")
    out = np.empty(CHUNK, np.float32)
    worst = (0.0, 0.0)
    for start in range(offset, 1 << 32, CHUNK * stride):
        stop = min(start + CHUNK * stride, 1 << 32)
        x = np.arange(start, stop, stride, dtype=np.uint64).astype(np.uint32).view(np.float32)
        y = function(x, out=out[: x.size])
        with np.errstate(all="ignore"):
            errors = ulp_errors(y, REFERENCES[name](x.astype(np.float64)), F32)
        index = int(np.argmax(errors))
        if errors[index] > worst[0]:
            worst = (float(errors[index]), float(x[index]))
    return worst


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_strided_sweep_of_every_float32(name):
    """One input in 251 (a prime stride, so every exponent and many mantissa patterns)."""
    error, where = worst_over(name, stride=251, offset=len(name))
    assert error <= BOUNDS[name], f"{name}: {error:.4f} ulp at {where!r}"


@pytest.mark.full
@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_every_float32_input(name):
    error, where = worst_over(name, stride=1)
    assert error <= BOUNDS[name], f"{name}: {error:.4f} ulp at {where!r}"


def test_results_near_the_edges_of_the_range():
    """Around overflow, the normal/subnormal boundary and underflow to zero, input by input."""
    edges = {"exp": (88.72284, -87.33655, -103.97208), "exp2": (128.0, -126.0, -149.0)}
    for name, points in edges.items():
        x = np.concatenate(
            [np.arange(-2000, 2001, dtype=np.int32) + np.float32(p).view(np.int32) for p in points]
        ).view(np.float32)
        got = compiled(name, "float32")(x)
        with np.errstate(over="ignore"):
            errors = ulp_errors(got, REFERENCES[name](x.astype(np.float64)), F32)
        assert errors.max() <= BOUNDS[name], (name, x[int(np.argmax(errors))])


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_loop_is_sixteen_wide_on_avx512(name):
    machine = _machine("x86_64-unknown-linux-gnu", "znver4", "")
    optimized = str(optimize(map_module(name, F32, 1, machine), machine))
    body = optimized[optimized.index("define void @map") :]
    assert "<16 x float>" in body
    assert "call float @naiad" not in body  # inlined: no call left


def _with_features(monkeypatch, features: str) -> None:
    """Make jit_helpers' loops call the library built for a target with `features`."""
    built = functools.partial(math_function, features=features)
    monkeypatch.setattr(jit_helpers, "math_function", built)


@functools.cache
def _compiled_for_avx512(name: str, dtype_name: str, arity: int) -> jit_helpers.CompiledMap:
    """As `compiled`, with the library built for AVX-512. Cached like it: an execution engine
    owns the shared target machine, so none may be freed while the session runs."""
    portable = jit_helpers.math_function
    jit_helpers.math_function = functools.partial(math_function, features="+avx512f")
    try:
        return jit_helpers.CompiledMap(name, np.dtype(dtype_name), arity)
    finally:
        jit_helpers.math_function = portable


@pytest.mark.parametrize("dtype", [F32, np.dtype(np.float64)], ids=["f32", "f64"])
def test_avx512_scaling_gives_the_same_bits(dtype):
    """With AVX-512 the library scales by `llvm.ldexp` (vscalef) instead of two multiplies:
    every function must give the same bits either way, subnormal results included."""
    if "+avx512f" not in host_target().features.split(","):
        pytest.skip("the host has no AVX-512")
    rng = np.random.default_rng(5)
    for name in sorted(NAMES):
        arguments = inputs(name, dtype, 20_000, rng)
        arity = len(arguments)
        with np.errstate(all="ignore"):
            got = _compiled_for_avx512(name, dtype.name, arity)(*arguments)
            want = compiled(name, dtype.name, arity)(*arguments)
        assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), name


@pytest.mark.parametrize("features, scaled", [("+avx512f", True), ("", False)])
def test_vscalef_only_where_the_target_has_it(features, scaled, monkeypatch):
    """The AVX-512 loop scales with vscalefps; a loop built without the feature never calls
    the C library's ldexpf (which `llvm.ldexp` would become there)."""
    _with_features(monkeypatch, features)
    machine = _machine("x86_64-unknown-linux-gnu", "znver4" if scaled else "haswell", "")
    assembly = machine.emit_assembly(optimize(map_module("exp", F32, 1, machine), machine))
    assert ("vscalefps" in assembly) == scaled
    assert "ldexpf" not in assembly
