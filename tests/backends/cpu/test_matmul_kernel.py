"""The register-blocked matmul micro-kernel (codegen/lower_matmul.py), compiled and run.

Each case checks the values against a float64 NumPy reference with the tolerance table's bound
for dots (exactly for integers), and that the micro-kernel, not the loop nest, made the code.
Operands come in every layout (transposed A, B or both: strided views and packed panels),
every accumulator type, and tile blockings forced small and odd, so full tiles, edge rows and
edge columns of every kind run at the shapes a tl.dot has.
"""

import types

import ml_dtypes
import numpy as np
import pytest
from llvmlite import ir

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.backends.cpu.codegen import (
    lower_linalg,
    lower_matmul,
    lower_matmul_bf16,
    lower_matmul_int8,
)
from naiad.backends.cpu.codegen.element_math import multiply_add_intrinsic
from naiad.backends.cpu.codegen.lower_matmul import Blocking, RegisterFile, blocking, fit_rows
from naiad.backends.cpu.target import host_target
from naiad.runtime import compiler
from naiad.testing import check

BF16 = np.dtype(ml_dtypes.bfloat16)

# NumPy input dtype -> (dot output dtype, NumPy output dtype)
DTYPES = {
    "float32": (np.float32, tl.float32, np.float32),
    "float16": (np.float16, tl.float32, np.float32),
    "bfloat16": (BF16, tl.float32, np.float32),
    "int8": (np.int8, tl.int32, np.int32),
    "float64": (np.float64, tl.float64, np.float64),
    "float16->float16": (np.float16, tl.float16, np.float16),
    "float8e5m2": (np.dtype(ml_dtypes.float8_e5m2), tl.float32, np.float32),
}


@naiad.jit
def _dot(
    a_ptr,
    b_ptr,
    acc_ptr,
    c_ptr,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    M: tl.constexpr,
    N: tl.constexpr,
    K: tl.constexpr,
    OUT: tl.constexpr,
):
    om = tl.arange(0, M)
    on = tl.arange(0, N)
    ok = tl.arange(0, K)
    a = tl.load(a_ptr + om[:, None] * stride_am + ok[None, :] * stride_ak)
    b = tl.load(b_ptr + ok[:, None] * stride_bk + on[None, :] * stride_bn)
    co = om[:, None] * N + on[None, :]
    c = tl.dot(a, b, tl.load(acc_ptr + co), out_dtype=OUT)
    tl.store(c_ptr + co, c)


@naiad.jit
def _dot_loop(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K, BK: tl.constexpr):
    """The tutorial's shape: the accumulator carried through a loop over K (updated in place)."""
    om = tl.arange(0, M)
    on = tl.arange(0, N)
    ok = tl.arange(0, BK)
    acc = tl.full((M, N), 0.5, dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + om[:, None] * K + (k0 + ok)[None, :])
        b = tl.load(b_ptr + (k0 + ok)[:, None] * N + on[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + om[:, None] * N + on[None, :], acc)


@naiad.jit
def _dot3d(a_ptr, b_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    ob = tl.arange(0, B)[:, None, None]
    om = tl.arange(0, M)[None, :, None]
    on = tl.arange(0, N)[None, None, :]
    a = tl.load(a_ptr + ob * M * K + om * K + tl.arange(0, K)[None, None, :])
    b = tl.load(b_ptr + ob * K * N + tl.arange(0, K)[None, :, None] + on * K)  # B transposed
    tl.store(c_ptr + ob * M * N + om * N + on, tl.dot(a, b))


KERNELS = (_dot, _dot_loop, _dot3d)


@pytest.fixture(autouse=True)
def compiled(cpu_fresh_cache):
    """Compiled for this CPU, from a fresh cache: a test that forces a blocking must not load
    an object compiled under another one."""
    _forget_compiled()
    yield
    _forget_compiled()


def _forget_compiled():
    compiler._cache = None
    for kernel in KERNELS:
        kernel.forget_compiled()


@pytest.fixture
def micro_kernels(monkeypatch) -> list:
    """The shapes (M, N, K) the micro-kernel compiled in this test, in order: the f32 one's or,
    on a CPU with AVX512-BF16 or AVX512-VNNI, the packed operands' (lower_matmul_bf16.py,
    lower_matmul_int8.py)."""
    calls = []
    blocked = lower_matmul._blocked

    def spy(fl, tile, element, a, b, c, shape):
        calls.append(shape)
        blocked(fl, tile, element, a, b, c, shape)

    def spy_on(multiply):
        def spy_packed(fl, rows, a, b, c, shape):
            calls.append(shape)
            multiply(fl, rows, a, b, c, shape)

        return spy_packed

    monkeypatch.setattr(lower_matmul, "_blocked", spy)
    for kernel in (lower_matmul_bf16, lower_matmul_int8):
        monkeypatch.setattr(kernel, "multiply", spy_on(kernel.multiply))
    return calls


@pytest.fixture
def forced_blocking(monkeypatch):
    """Make every matmul use the blocking given to the returned function."""

    def force(tile: Blocking):
        monkeypatch.setattr(lower_matmul, "blocking", lambda registers, bits: tile)
        monkeypatch.setattr(lower_matmul, "fit_rows", lambda tile, m: tile)  # edges stay

    return force


def _random(shape, dtype, gen):
    """Never zero: +-[0.5, 2) for floats, [-100, 100] without 0 for int8."""
    dtype = np.dtype(dtype)
    if dtype.kind == "i":
        values = gen.integers(-100, 100, size=shape, endpoint=True)
        return np.where(values == 0, 1, values).astype(dtype)
    return (gen.uniform(0.5, 2.0, shape) * gen.choice([-1.0, 1.0], shape)).astype(dtype)


def _operand(shape, dtype, transposed, gen):
    """A random matrix of `shape`; when `transposed`, a view of a transposed array."""
    if transposed:
        return np.ascontiguousarray(_random(shape[::-1], dtype, gen)).T
    return _random(shape, dtype, gen)


def _run_dot(name, m, n, k, layout="nn", seed=0):
    in_np, out_tl, out_np = DTYPES[name]
    gen = np.random.default_rng(seed)
    a = _operand((m, k), in_np, layout[0] == "t", gen)
    b = _operand((k, n), in_np, layout[1] == "t", gen)
    acc = _random((m, n), out_np, gen)
    c = np.full((m, n), 7, out_np)
    strides = [s // a.itemsize for s in a.strides] + [s // b.itemsize for s in b.strides]
    _dot[(1,)](a, b, acc, c, *strides, m, n, k, out_tl)
    exact = np.dtype(in_np).kind == "i"
    wide = np.int64 if exact else np.float64
    ref = a.astype(wide) @ b.astype(wide) + acc.astype(wide)
    if exact:
        np.testing.assert_array_equal(c, ref.astype(out_np))
    else:
        check("dot", c, ref, "cpu", out_np, k=k)
    return c
    return _dot.warmup(a, b, acc, c, *strides, m, n, k, out_tl, grid=(1,), target="cpu").asm["llir"]


@pytest.mark.parametrize("name", list(DTYPES))
@pytest.mark.parametrize("layout", ["nn", "tn", "nt", "tt"])
def test_dtypes_and_layouts(micro_kernels, name, layout):
    _run_dot(name, 32, 64, 32, layout, seed=1)
    assert micro_kernels == [(32, 64, 32)]


@pytest.mark.parametrize(
    "tile",
    [Blocking(4, 3, 3), Blocking(16, 5, 1), Blocking(8, 8, 2), Blocking(4, 1, 1)],
    ids=str,
)
@pytest.mark.parametrize("name", ["float32", "int8", "float16->float16"])
def test_edge_tiles(micro_kernels, forced_blocking, tile, name):
    """Rows not a multiple of MR, columns not a multiple of NR, vectors shorter than a
    register, N narrower than one vector."""
    forced_blocking(tile)
    for m, n, k in [(16, 32, 16), (32, 16, 64), (16, 8, 32)]:
        _run_dot(name, m, n, k, "tn", seed=m + n + k)
    assert len(micro_kernels) == 3


@pytest.mark.full
@pytest.mark.parametrize("name", list(DTYPES))
@pytest.mark.parametrize("m,n,k", [(16, 16, 16), (64, 64, 32), (128, 32, 64), (32, 256, 16)])
@pytest.mark.parametrize("layout", ["nn", "tt"])
def test_shapes(name, m, n, k, layout):
    _run_dot(name, m, n, k, layout, seed=m * n + k)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_accumulator_carried_through_a_loop(micro_kernels, dtype):
    gen = np.random.default_rng(2)
    m, n, k = 64, 32, 96
    a, b = _random((m, k), dtype, gen), _random((k, n), dtype, gen)
    c = np.full((m, n), np.nan, np.float32)
    _dot_loop[(1,)](a, b, c, m, n, k, 32)
    ref = a.astype(np.float64) @ b.astype(np.float64) + 0.5
    check("dot", c, ref, "cpu", np.float32, k=k)
    assert micro_kernels == [(m, n, 32)]


def test_batched_with_a_transposed_operand(micro_kernels):
    gen = np.random.default_rng(3)
    bsz, m, n, k = 2, 16, 32, 16
    a = _random((bsz, m, k), np.float32, gen)
    bt = _random((bsz, n, k), np.float32, gen)
    c = np.full((bsz, m, n), np.nan, np.float32)
    _dot3d[(1,)](a, bt, c, bsz, m, n, k)
    ref = np.matmul(a.astype(np.float64), bt.astype(np.float64).transpose(0, 2, 1))
    check("dot", c, ref, "cpu", np.float32, k=k)
    assert micro_kernels == [(m, n, k)]


@pytest.mark.parametrize("name", ["float32", "float16->float16", "bfloat16"])
def test_equals_the_loop_nest_bit_for_bit(monkeypatch, tmp_path, micro_kernels, name):
    """Each C element sums its products in increasing k with one fused multiply-add each, as
    the loop nest of lower_linalg.py does, so the two agree exactly. (bf16 on a CPU with
    AVX512-BF16 sums each pair of k second first: test_matmul_bf16_pairs.py.)"""
    if name == "bfloat16" and lower_matmul_bf16.has_bf16_pairs():
        pytest.skip("this CPU's bf16 dots take vdpbf16ps's order")
    blocked = _run_dot(name, 32, 64, 32, "tn", seed=4)
    _forget_compiled()
    monkeypatch.setattr(lower_linalg, "matmul_kernel", lambda *operands: False)
    with knobs.override(NAIAD_CACHE_DIR=str(tmp_path / "loop-nest")):
        loop_nest = _run_dot(name, 32, 64, 32, "tn", seed=4)
    assert len(micro_kernels) == 1
    np.testing.assert_array_equal(blocked.view(np.uint8), loop_nest.view(np.uint8))


def test_blocking_follows_the_vector_registers():
    assert blocking(RegisterFile(512, 32), 32) == Blocking(16, 8, 2)  # AVX-512: 8 x 32 f32
    assert blocking(RegisterFile(256, 16), 32) == Blocking(8, 6, 2)  # AVX2: 6 x 16 f32
    assert blocking(RegisterFile(128, 32), 32) == Blocking(4, 8, 2)  # NEON: 8 x 8 f32
    assert blocking(RegisterFile(512, 32), 64) == Blocking(8, 8, 2)  # AVX-512: 8 x 16 f64


def test_tiles_take_as_many_rows_as_divide_m():
    avx2 = Blocking(8, 6, 2)
    assert fit_rows(avx2, 60) == avx2
    assert fit_rows(avx2, 64) == Blocking(8, 4, 2)  # not 10 tiles of 6 and an edge of 4
    assert fit_rows(avx2, 10) == Blocking(8, 5, 2)
    assert fit_rows(avx2, 7) == avx2  # no divisor of at least MIN_FITTED_ROWS: an edge tile
    assert fit_rows(Blocking(16, 8, 2), 64) == Blocking(16, 8, 2)  # AVX-512


def test_a_dot_of_64_rows_takes_tiles_of_4_rows_with_6_row_registers(monkeypatch):
    """With the 16 registers of AVX2 (6-row tiles), 64 rows are cut into 16 tiles of 4 rows,
    not 10 of 6 and an edge of 4: values against float64."""
    chosen = []
    blocked = lower_matmul._blocked
    monkeypatch.setattr(lower_matmul, "blocking", lambda registers, bits: Blocking(8, 6, 2))

    def spy(fl, tile, *rest):
        chosen.append(tile)
        blocked(fl, tile, *rest)

    monkeypatch.setattr(lower_matmul, "_blocked", spy)
    _run_dot("float32", 64, 32, 32, "nn", seed=64)
    assert chosen == [Blocking(8, 4, 2)]


def test_aarch64_uses_neon_multiply_adds():
    a = np.ones((32, 32), np.float32)
    kernel = _dot.warmup(
        a, a, a, a, 32, 1, 32, 1, 32, 32, 32, tl.float32, grid=(1,), target="cpu:aarch64"
    )
    assert "fmla\tv" in kernel.asm["asm"] and ".4s" in kernel.asm["asm"]


@pytest.mark.parametrize(
    "triple, features, intrinsic",
    [
        ("x86_64-unknown-linux-gnu", "+popcnt,+sse4.2", "llvm.fmuladd"),  # x86-64-v2
        ("x86_64-unknown-linux-gnu", "+avx,+avx2,+f16c,+fma", "llvm.fma"),
        ("x86_64-unknown-linux-gnu", "+avx,-fma,+fma4", "llvm.fma"),
        ("aarch64-unknown-linux-gnu", "+neon", "llvm.fma"),
    ],
)
def test_multiply_adds_fuse_where_the_target_has_the_instruction(triple, features, intrinsic):
    module = ir.Module(name="dot")
    module.triple = triple
    fl = types.SimpleNamespace(module=module, context=types.SimpleNamespace(features=features))
    assert multiply_add_intrinsic(fl) == intrinsic


def test_this_hosts_dot_never_calls_the_c_librarys_fma():
    """Without FMA (NAIAD_HOST_CPU=x86-64-v2) a fused multiply-add would be a call of fmaf per
    element; the dot multiplies and adds instead, and fuses where the host can."""
    a = np.ones((32, 32), np.float32)
    kernel = _dot.warmup(a, a, a, a, 32, 1, 32, 1, 32, 32, 32, tl.float32, grid=(1,), target="cpu")
    host = host_target()
    fused = host.arch != "x86_64" or "+fma" in host.features.split(",")
    assert ("@llvm.fma.v" in kernel.asm["llir"]) == fused
    assert "fmaf" not in kernel.asm["asm"]
