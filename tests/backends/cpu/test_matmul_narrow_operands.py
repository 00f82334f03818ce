"""Half- and low-precision dots on the CPU (codegen/lower_matmul.py, lower_matmul_bf16.py): never
scalar. On a CPU with AVX512-BF16, bf16 operands run on `vdpbf16ps`; elsewhere every narrow
operand is converted to the accumulator's type with vector instructions, once per element.

Code for other CPU models is compiled in a child process (NAIAD_HOST_CPU: the host target is
read once per process) and only read there: this machine may not run it. The values are checked
here against float64 wherever the host has the instructions.
"""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.backends.cpu.codegen import lower_matmul_bf16
from naiad.backends.cpu.target import host_target
from naiad.runtime import compiler
from naiad.testing import check

BF16 = np.dtype(ml_dtypes.bfloat16)


@naiad.jit
def _matmul(
    a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, TB: tl.constexpr
):
    """C = A @ B, B read transposed from a (N, K) array when TB."""
    om, on, ok = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + om[:, None] * K + ok[None, :])
    if TB:
        b = tl.load(b_ptr + ok[:, None] + on[None, :] * K)
    else:
        b = tl.load(b_ptr + ok[:, None] * N + on[None, :])
    tl.store(c_ptr + om[:, None] * N + on[None, :], tl.dot(a, b))


@pytest.fixture(autouse=True)
def compiled(tmp_path):
    with knobs.override(NAIAD_BACKEND="cpu", NAIAD_CACHE_DIR=str(tmp_path / "cache")):
        compiler._cache = None
        yield
    compiler._cache = None


_COMPILE_FOR = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {folder!r})
    import test_matmul_bf16_pairs as t
    for operand in sys.argv[1:]:
        out = "*i32" if operand == "i8" else "*fp32"
        kernel = t._matmul.warmup(
            f"*{{operand}}", f"*{{operand}}", out, grid=(1,), M=32, N=64, K=32, TB=False,
            target="cpu",
        )
        pairs = kernel.asm["asm"].count("vdpbf16ps")
        print("@@", operand, pairs, len(t.vector_loads(kernel.asm["llir"], operand)))
    """
)


def vector_loads(llir: str, operand: str) -> list[str]:
    """The vector loads of the operand's element bits in optimized LLVM IR."""
    bits = 8 if operand in ("fp8e5", "fp8e4nv", "i8") else 16
    return re.findall(rf"load <\d+ x i{bits}>", llir)


def _compile_for(model: str, operands: list[str]) -> dict:
    """{operand: (vdpbf16ps count, vector loads of the operand)} of the matmul compiled for
    the CPU `model`, in a child process."""
    done = subprocess.run(
        [sys.executable, "-c", _COMPILE_FOR.format(folder=str(Path(__file__).parent)), *operands],
        capture_output=True,
        text=True,
        env={**os.environ, "NAIAD_HOST_CPU": model},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = {}
    for line in done.stdout.splitlines():
        if line.startswith("@@ "):
            _, operand, pairs, loads = line.split()
            found[operand] = (int(pairs), int(loads))
    return found


def test_bf16_dot_uses_vdpbf16ps_where_the_cpu_has_it():
    found = _compile_for("sapphirerapids", ["bf16"])
    assert found["bf16"][0] > 0


@pytest.mark.parametrize("model", ["x86-64-v3", pytest.param("x86-64-v2", marks=pytest.mark.full)])
def test_narrow_operands_convert_in_vectors_elsewhere(model):
    """No AVX512-BF16 (AVX2, or SSE4.2 only): no vdpbf16ps, and every narrow operand is read
    with vector loads (its conversion vectorized)."""
    operands = ["bf16", "fp16", "fp8e5", "fp8e4nv", "i8"]
    found = _compile_for(model, operands)
    for operand in operands:
        pairs, loads = found[operand]
        assert pairs == 0 and loads > 0, (operand, found[operand])


needs_bf16_pairs = pytest.mark.skipif(
    not lower_matmul_bf16.has_bf16_pairs(host_target().triple),
    reason="this CPU has no AVX512-BF16",
)


@needs_bf16_pairs
@pytest.mark.parametrize("m,n,k", [(16, 16, 16), (32, 64, 32), (8, 16, 64), (64, 32, 128)])
@pytest.mark.parametrize("transposed", [False, True])
def test_bf16_pairs_values(m, n, k, transposed):
    """Full tiles (8 rows of 32 columns), an edge column tile (N = 16: one vector), rows fewer
    than a tile's (M = 8 is one; 16, 32, 64 are two or more), B as stored and transposed."""
    gen = np.random.default_rng(m * n + k)
    a = (gen.uniform(0.5, 2.0, (m, k)) * gen.choice([-1.0, 1.0], (m, k))).astype(BF16)
    b = (gen.uniform(0.5, 2.0, (k, n)) * gen.choice([-1.0, 1.0], (k, n))).astype(BF16)
    c = np.full((m, n), np.nan, np.float32)
    b_given = np.ascontiguousarray(b.T) if transposed else b
    _matmul[(1,)](a, b_given, c, m, n, k, transposed)
    check("dot", c, a.astype(np.float64) @ b.astype(np.float64), "cpu", np.float32, k=k)
