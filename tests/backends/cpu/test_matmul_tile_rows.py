"""The micro-kernel's rows per CPU model (codegen/lower_matmul.py: `rows_for_cpu`, `tile_rows`).

Intel's AVX-512 server cores and Zen 5 take tiles of 12 rows for fused multiply-adds (and an
edge of the rows left), every other CPU 8, and the packed kernels 8 everywhere. Dots of many M
(fewer rows than a tile, a multiple of one, one more than one, M that leaves an edge of 4 or
8) are compiled with each row count forced (`tile_rows` replaced, so on any host) and checked
against float64 NumPy, exactly for integers: f32, f64, bf16 operands with an f32 accumulator
and int8 with an i32 one, through the fused multiply-add kernel or, on a CPU with AVX512-BF16
or AVX512-VNNI, the packed one (packed_tiles.py). M of a dot need not be a power of two in
TTIR, so the kernel is a TTIR file (compiled as `triton.compile` does).
"""

import os
import subprocess
import sys
import textwrap

import ml_dtypes
import numpy as np
import pytest

from naiad.backends.cpu.codegen import lower_matmul
from naiad.backends.cpu.codegen.lower_matmul import (
    Blocking,
    RegisterFile,
    fit_rows,
    rows_for_cpu,
    tile_rows,
)
from naiad.backends.cpu.target import CpuTarget, host_target
from naiad.testing import check
from naiad.triton.backends.compiler import GPUTarget
from naiad.triton.compiler import compile

AVX512 = RegisterFile(512, 32)
WIDE = ["skylake-avx512", "cascadelake", "icelake-server", "sapphirerapids", "emeraldrapids",
        "graniterapids", "znver5"]  # fmt: skip
OTHERS = ["znver4", "generic", "x86-64-v4", "haswell", "tigerlake", "neoverse-v2"]
M_VALUES = (1, 5, 12, 13, 24, 64, 100, 128)
N, K = 48, 24  # a full tile of 32 f32 columns and an edge of 16; K even, a multiple of 4
# name -> (operand TTIR type, NumPy dtype, accumulator TTIR type, NumPy dtype)
DTYPES = {
    "f32": ("f32", np.float32, "f32", np.float32),
    "f64": ("f64", np.float64, "f64", np.float64),
    "bf16": ("bf16", np.dtype(ml_dtypes.bfloat16), "f32", np.float32),
    "i8": ("i8", np.int8, "i32", np.int32),
}

# C = A @ B + ACC for row-major A [M, K], B [K, N], ACC and C [M, N].
DOT = """
module {{
  tt.func public @dot(%a: !tt.ptr<{x}>, %b: !tt.ptr<{x}>, %acc: !tt.ptr<{y}>, %c: !tt.ptr<{y}>) {{
    %rm = tt.make_range {{end = {m} : i32, start = 0 : i32}} : tensor<{m}xi32>
    %rn = tt.make_range {{end = {n} : i32, start = 0 : i32}} : tensor<{n}xi32>
    %rk = tt.make_range {{end = {k} : i32, start = 0 : i32}} : tensor<{k}xi32>
    %m1 = tt.expand_dims %rm {{axis = 1 : i32}} : tensor<{m}xi32> -> tensor<{m}x1xi32>
    %n1 = tt.expand_dims %rn {{axis = 0 : i32}} : tensor<{n}xi32> -> tensor<1x{n}xi32>
    %kc = tt.expand_dims %rk {{axis = 0 : i32}} : tensor<{k}xi32> -> tensor<1x{k}xi32>
    %kr = tt.expand_dims %rk {{axis = 1 : i32}} : tensor<{k}xi32> -> tensor<{k}x1xi32>
    %ks = arith.constant dense<{k}> : tensor<{m}x1xi32>
    %nk = arith.constant dense<{n}> : tensor<{k}x1xi32>
    %nm = arith.constant dense<{n}> : tensor<{m}x1xi32>
    %am = arith.muli %m1, %ks : tensor<{m}x1xi32>
    %amb = tt.broadcast %am : tensor<{m}x1xi32> -> tensor<{m}x{k}xi32>
    %akb = tt.broadcast %kc : tensor<1x{k}xi32> -> tensor<{m}x{k}xi32>
    %ao = arith.addi %amb, %akb : tensor<{m}x{k}xi32>
    %bk = arith.muli %kr, %nk : tensor<{k}x1xi32>
    %bkb = tt.broadcast %bk : tensor<{k}x1xi32> -> tensor<{k}x{n}xi32>
    %bnb = tt.broadcast %n1 : tensor<1x{n}xi32> -> tensor<{k}x{n}xi32>
    %bo = arith.addi %bkb, %bnb : tensor<{k}x{n}xi32>
    %cm = arith.muli %m1, %nm : tensor<{m}x1xi32>
    %cmb = tt.broadcast %cm : tensor<{m}x1xi32> -> tensor<{m}x{n}xi32>
    %cnb = tt.broadcast %n1 : tensor<1x{n}xi32> -> tensor<{m}x{n}xi32>
    %co = arith.addi %cmb, %cnb : tensor<{m}x{n}xi32>
    %as = tt.splat %a : !tt.ptr<{x}> -> tensor<{m}x{k}x!tt.ptr<{x}>>
    %ap = tt.addptr %as, %ao : tensor<{m}x{k}x!tt.ptr<{x}>>, tensor<{m}x{k}xi32>
    %av = tt.load %ap : tensor<{m}x{k}x!tt.ptr<{x}>>
    %bs = tt.splat %b : !tt.ptr<{x}> -> tensor<{k}x{n}x!tt.ptr<{x}>>
    %bp = tt.addptr %bs, %bo : tensor<{k}x{n}x!tt.ptr<{x}>>, tensor<{k}x{n}xi32>
    %bv = tt.load %bp : tensor<{k}x{n}x!tt.ptr<{x}>>
    %accs = tt.splat %acc : !tt.ptr<{y}> -> tensor<{m}x{n}x!tt.ptr<{y}>>
    %accp = tt.addptr %accs, %co : tensor<{m}x{n}x!tt.ptr<{y}>>, tensor<{m}x{n}xi32>
    %accv = tt.load %accp : tensor<{m}x{n}x!tt.ptr<{y}>>
    %d = tt.dot %av, %bv, %accv : tensor<{m}x{k}x{x}> * tensor<{k}x{n}x{x}> -> tensor<{m}x{n}x{y}>
    %cs = tt.splat %c : !tt.ptr<{y}> -> tensor<{m}x{n}x!tt.ptr<{y}>>
    %cp = tt.addptr %cs, %co : tensor<{m}x{n}x!tt.ptr<{y}>>, tensor<{m}x{n}xi32>
    tt.store %cp, %d : tensor<{m}x{n}x!tt.ptr<{y}>>
    tt.return
  }}
}}
"""


@pytest.mark.parametrize("cpu", WIDE)
def test_intel_server_cores_and_zen5_take_12_rows(cpu):
    assert rows_for_cpu(cpu, AVX512) == 12
    assert rows_for_cpu(cpu, AVX512, packed=True) == 8  # vdpbf16ps, vpdpbusd
    assert rows_for_cpu(cpu, RegisterFile(256, 16)) == 8  # compiled without AVX-512


@pytest.mark.parametrize("cpu", OTHERS)
def test_other_cpus_take_8_rows(cpu):
    assert rows_for_cpu(cpu, AVX512) == 8
    assert rows_for_cpu(cpu, RegisterFile(128, 32)) == 8


def test_tile_rows_reads_the_host_cpu_model(monkeypatch):
    """The host's model (NAIAD_HOST_CPU's where set) decides; another triple's code takes 8."""
    triple = "x86_64-unknown-linux-gnu"
    for cpu, rows in (("sapphirerapids", 12), ("znver4", 8)):
        host = CpuTarget("cpu", triple, cpu, "+avx,+avx2,+fma,+avx512f")
        monkeypatch.setattr(lower_matmul, "host_target", lambda host=host: host)
        assert tile_rows(triple, False) == rows
        assert tile_rows(triple, True) == 8
        assert tile_rows("aarch64-unknown-linux-gnu", False) == 8


def test_a_wide_tile_shrinks_only_while_it_stays_wide():
    """12 rows keep their edge where only 8 or fewer divide M (64: 5 tiles and 4 rows)."""
    wide = Blocking(16, 12, 2)
    for m in (1, 5, 8, 13, 64, 128):
        assert fit_rows(wide, m) == wide
    assert fit_rows(wide, 24) == wide
    assert fit_rows(wide, 100) == Blocking(16, 10, 2)
    assert fit_rows(wide, 18) == Blocking(16, 9, 2)
    assert fit_rows(Blocking(16, 8, 2), 100) == Blocking(16, 5, 2)  # the standard tile as before


def _random(shape, dtype, gen):
    """Never zero: +-[0.5, 2) for floats, [-100, 100] without 0 for int8."""
    dtype = np.dtype(dtype)
    if dtype.kind == "i":
        values = gen.integers(-100, 100, size=shape, endpoint=True)
        return np.where(values == 0, 1, values).astype(dtype)
    return (gen.uniform(0.5, 2.0, shape) * gen.choice([-1.0, 1.0], shape)).astype(dtype)


@pytest.fixture
def rows_taken(monkeypatch):
    """Force the most rows a tile takes (the returned function's argument); the list of
    (M, rows) each dot compiled took, after `fit_rows`."""
    taken = []

    def record(tile, m):
        fitted = fit_rows(tile, m)
        taken.append((m, fitted.rows))
        return fitted

    def force(rows):
        monkeypatch.setattr(lower_matmul, "tile_rows", lambda triple, packed: rows)
        monkeypatch.setattr(lower_matmul, "fit_rows", record)
        return taken

    return force


@pytest.mark.parametrize("rows", [8, 12])
@pytest.mark.parametrize("name", list(DTYPES))
def test_dot_values_with_tiles_of_8_and_12_rows(cpu_fresh_cache, tmp_path, rows_taken, rows, name):
    x, in_np, y, out_np = DTYPES[name]
    taken = rows_taken(rows)
    cpu = GPUTarget("cpu", host_target().arch, 1)
    for m in M_VALUES:
        path = tmp_path / f"dot_{m}.ttir"
        path.write_text(textwrap.dedent(DOT.format(x=x, y=y, m=m, n=N, k=K)))
        kernel = compile(str(path), target=cpu)
        gen = np.random.default_rng(m)
        a, b, acc = (
            _random((m, K), in_np, gen),
            _random((K, N), in_np, gen),
            _random((m, N), out_np, gen),
        )
        c = np.full((m, N), 7, out_np)
        kernel[(1, 1, 1)](a, b, acc, c)
        if name == "i8":
            ref = a.astype(np.int64) @ b.astype(np.int64) + acc
            np.testing.assert_array_equal(c, ref.astype(np.int32))
        else:
            ref = a.astype(np.float64) @ b.astype(np.float64) + acc.astype(np.float64)
            check("dot", c, ref, "cpu", out_np, k=K)
    expected = [(m, fit_rows(Blocking(16, rows, 2), m).rows) for m in M_VALUES]
    assert taken == expected  # every dot on the micro-kernel, with `rows` rows or fewer
    assert (64, rows) in taken and (13, rows) in taken


CHILD = """
from naiad.backends.cpu.codegen import lower_matmul
from naiad.backends.cpu.target import host_target
import naiad, naiad.language as tl, numpy as np

@naiad.jit
def dot(a_ptr, c_ptr, M: tl.constexpr):
    r = tl.arange(0, M)
    a = tl.load(a_ptr + r[:, None] * M + r[None, :])
    tl.store(c_ptr + r[:, None] * M + r[None, :], tl.dot(a, a))

fit_rows, taken = lower_matmul.fit_rows, []

def record(tile, m):
    fitted = fit_rows(tile, m)
    taken.append(fitted.rows)
    return fitted

lower_matmul.fit_rows = record
a = np.ones((64, 64), np.float32)
dot.warmup(a, a, 64, grid=(1,), target="cpu")
print(host_target().cpu, taken)
"""


@pytest.mark.skipif(host_target().arch != "x86_64", reason="NAIAD_HOST_CPU names x86-64 models")
@pytest.mark.parametrize("model, rows", [("icelake-server", 12), ("znver4", 8)])
def test_host_cpu_model_chooses_the_rows(tmp_path, model, rows):
    """Compiled (not run: any x86-64 host) in a process whose NAIAD_HOST_CPU names the model: a
    dot of 64 rows takes 12-row tiles with an edge for an Intel server, 8-row ones for Zen 4."""
    env = {**os.environ, "NAIAD_HOST_CPU": model, "NAIAD_CACHE_DIR": str(tmp_path)}
    env["NAIAD_BACKEND"] = "cpu"
    script = tmp_path / "child.py"  # a file: the kernel's source is read
    script.write_text(CHILD)
    done = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.split("\n")[-2] == f"{model} [{rows}]"
