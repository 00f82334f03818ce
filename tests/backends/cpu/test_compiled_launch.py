"""Kernels compiled for the CPU end to end: the stages a compile produces, the disk cache, the
launch path (arguments, grids, threads) and the checks a launch makes."""

import numpy as np
import pytest
from launch_kernels import add_kernel

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.runtime import compiler

pytestmark = pytest.mark.usefixtures("cpu_fresh_cache")

SCALE = tl.constexpr(3)


@naiad.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * SCALE, mask=mask)


@naiad.jit(noinline=True)
def _doubled(x):
    return x * 2


@naiad.jit
def assuming_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.assume(n > 0)
    tl.store(out_ptr + offsets, offsets * _doubled(1), mask=offsets < n)


def test_ttgir_is_the_ttir_the_cpu_lowers():
    """`asm["ttgir"]`, where Triton's users read the TTIR a back end lowers: every call
    inlined (noinline ones too), `tl.assume` kept as `llvm.intr.assume`, and given to LLVM as
    `llvm.assume` (Triton's test_assume reads both)."""
    out = np.full(64, -1, np.int32)
    kernel = assuming_kernel[(1,)](out, 40, BLOCK=64)
    assert np.array_equal(out, np.where(np.arange(64) < 40, np.arange(64) * 2, -1))
    ttgir = kernel.asm["ttgir"]
    assert "llvm.intr.assume" in ttgir and "tt.call" not in ttgir
    assert "tt.call" in kernel.asm["ttir"]
    assert "call void @llvm.assume" in kernel.asm["llir"]  # the hint reaches LLVM


def test_warmup_gives_every_cpu_stage():
    kernel = add_kernel.warmup("*fp32", "*fp32", "*fp32", 4096, grid=(1,), BLOCK=256, target="cpu")
    assert (
        "linalg.generic" in kernel.asm["linalg"]
        and "memref.reinterpret_cast" in kernel.asm["linalg"]
    )
    assert "define void @add_kernel(" in kernel.asm["llir"]
    assert kernel.binary[:4] == b"\x7fELF"
    assert kernel.asm["asm"]  # made on demand
    assert kernel.metadata["scratch_bytes"] > 0


def test_aarch64_objects_use_neon():
    kernel = add_kernel.warmup(
        "*fp32", "*fp32", "*fp32", 4096, grid=(1,), BLOCK=256, target="cpu:aarch64"
    )
    assert "v0.4s" in kernel.asm["asm"] or ".4s" in kernel.asm["asm"]


@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize("n", [1, 1000, 4096, 10001])
def test_launch_matches_numpy(n, threads):
    rng = np.random.default_rng(n)
    x, y = rng.standard_normal(n, np.float32), rng.standard_normal(n, np.float32)
    out = np.full(n, np.nan, np.float32)
    with knobs.override(NAIAD_NUM_THREADS=threads):
        add_kernel[(naiad.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    np.testing.assert_array_equal(out, x * np.float32(2.0) + y)


def test_second_process_loads_from_disk(monkeypatch):
    x = np.arange(300, dtype=np.float32)
    out = np.empty_like(x)
    scale_kernel[(3,)](x, out, 300, BLOCK=128)
    scale_kernel.forget_compiled()  # as a new process: nothing in memory
    compiler.disk_cache().clear_memory()

    def no_compile(*args, **kwargs):
        raise AssertionError("compiled again instead of loading the cached object")

    monkeypatch.setattr(compiler, "_run_stages", no_compile)
    out[:] = 0
    scale_kernel[(3,)](x, out, 300, BLOCK=128)
    np.testing.assert_array_equal(out, x * 3)


def test_changed_global_is_an_error():
    global SCALE
    x = np.ones(16, np.float32)
    out = np.empty_like(x)
    scale_kernel[(1,)](x, out, 16, BLOCK=16)
    saved = SCALE
    SCALE = tl.constexpr(4)
    try:
        with pytest.raises(naiad.errors.NaiadError, match="global variable `SCALE` has changed"):
            scale_kernel[(1,)](x, out, 16, BLOCK=16)
    finally:
        SCALE = saved


def test_interpreter_still_selectable():
    x = np.ones(16, np.float32)
    out = np.empty_like(x)
    with knobs.override(NAIAD_BACKEND="interpreter"):
        scale_kernel[(1,)](x, out, 16, BLOCK=16)
    np.testing.assert_array_equal(out, x * 3)


def test_read_only_array_a_kernel_stores_to_is_refused():
    x = np.ones(16, np.float32)
    out = np.zeros(16, np.float32)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="argument `out_ptr` is read-only"):
        scale_kernel[(1,)](x, out, 16, BLOCK=16)
    x.flags.writeable = False  # a read-only input is fine
    writable = np.zeros(16, np.float32)
    scale_kernel[(1,)](x, writable, 16, BLOCK=16)
    np.testing.assert_array_equal(writable, 3.0)


@naiad.jit
def _prints(x_ptr, h_ptr, n, HEX: tl.constexpr):
    offs = tl.arange(0, 4)
    x = tl.load(x_ptr + offs, mask=offs < n, other=-1)
    h = tl.load(h_ptr + offs)
    tl.device_print("x ", x, offs < 2, h, hex=HEX)
    tl.device_print("scalar ", n)
    tl.device_print("ptr ", x_ptr + offs)


@pytest.mark.parametrize("hex_bits", [False, True])
def test_device_print_prints_what_the_interpreter_prints(hex_bits, capsys):
    x = np.array([-3, 7, 127, -128], np.int8)
    h = np.array([1.5, -0.0, np.inf, 65504], np.float16)
    outputs = {}
    for backend in ("interpreter", "cpu"):
        with knobs.override(NAIAD_BACKEND=backend):
            _prints[(2,)](x, h, 3, HEX=hex_bits)
        outputs[backend] = capsys.readouterr().out
    assert outputs["cpu"] == outputs["interpreter"]
    assert outputs["cpu"].count("\n") == 2 * (3 * 4 + 1 + 4)  # three operands: their own lines
    assert "pid (1, 0, 0) idx (2) x: (operand 1) " in outputs["cpu"]


def test_host_arrays_run_compiled_by_default():
    x = np.ones(16, np.float32)
    out = np.empty_like(x)
    scale_kernel.forget_compiled()
    with knobs.override(NAIAD_BACKEND=""):
        scale_kernel[(1,)](x, out, 16, BLOCK=16)
    assert any(k is not None for k in scale_kernel._launchers["cpu"].kernels.values())
    np.testing.assert_array_equal(out, 3.0)


@naiad.jit
def _next_address(p):
    return p + 1


@naiad.jit
def _shifted_by_a_map(x_ptr, out_ptr, BLOCK: tl.constexpr):
    # tl.map_elementwise over pointers: no Linalg lowering.
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(tl.map_elementwise(_next_address, x_ptr + offs)))


def test_what_the_cpu_cannot_compile_runs_in_the_interpreter_with_a_warning():
    x = np.random.default_rng(5).standard_normal(9).astype(np.float32)
    out = np.full(8, np.nan, np.float32)
    with knobs.override(NAIAD_BACKEND=""), pytest.warns(RuntimeWarning, match="interpreter"):
        _shifted_by_a_map[(1,)](x, out, BLOCK=8)
    np.testing.assert_array_equal(out, x[1:])
    with knobs.override(NAIAD_BACKEND="cpu"), pytest.raises(naiad.errors.KernelNotImplementedError):
        _shifted_by_a_map.forget_compiled()
        _shifted_by_a_map[(1,)](x, out, BLOCK=8)


@naiad.jit
def batched_dot_kernel(a_ptr, b_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr, K: tl.constexpr):
    """One program: c[i] = a[i] @ b[i] for the B square matrices of each operand."""
    i = tl.arange(0, B)[:, None, None]
    r = tl.arange(0, M)[None, :, None]
    k = tl.arange(0, K)[None, None, :]
    a = tl.load(a_ptr + i * M * K + r * K + k)
    b = tl.load(
        b_ptr + i * K * M + tl.arange(0, K)[None, :, None] * M + tl.arange(0, M)[None, None, :]
    )
    c = tl.dot(a, b)
    tl.store(c_ptr + i * M * M + r * M + tl.arange(0, M)[None, None, :], c)


def test_scratch_memory_holds_a_batch_of_float64_dot_operands():
    """The CPU's `max_shared_mem` is a megabyte (compiled_kernel.py): a batch of 8 float64
    operand pairs of 32 x 64 and 64 x 32 (256 KiB, four times a GPU's 64 KiB) fits in it, and
    the compiled dot gives float64's products."""
    properties = naiad.runtime.driver.CpuDriver().utils.get_device_properties()
    assert properties["max_shared_mem"] == 1 << 20
    assert properties["max_shared_mem"] >= 8 * (32 * 64 + 64 * 32) * 8
    rng = np.random.default_rng(5)
    a = rng.standard_normal((8, 32, 64))
    b = rng.standard_normal((8, 64, 32))
    c = np.full((8, 32, 32), np.nan)
    batched_dot_kernel[(1,)](a, b, c, B=8, M=32, K=64)
    np.testing.assert_allclose(c, a @ b, rtol=1e-12, atol=1e-12)
