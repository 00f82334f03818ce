"""Kernels compiled by `triton.compile` and relaunched through `CompiledKernel.run`, as Inductor
launches every kernel it generates: Triton's `debug` option compiles the assertions (and integer
overflow checks unless `sanitize_overflow=False`) without Naiad's debug mode, so relaunches take
the hot path; relaunches pass every argument or the non-constexpr ones, on 1-D and 3-D grids,
and run the compiled kernel wherever the arguments hold the facts it was compiled for."""

import re

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.backends.nvidia import link
from naiad.errors import KernelAssertionError
from naiad.runtime.jit import JITFunction
from naiad.triton.backends.compiler import GPUTarget
from naiad.triton.compiler import ASTSource, compile

CPU = GPUTarget("cpu", "x86_64", 1)
SIGNATURE = {"src": "*fp32", "index": "*i32", "out": "*fp32", "n": "i32", "size": "i32"}


@naiad.jit
def checked_gather(src, index, out, n, size, BLOCK: tl.constexpr):
    """out[i] = src[index[i]], asserting each index in range (as Inductor's indirect loads)."""
    offs = (tl.program_id(0) + tl.program_id(1) * tl.num_programs(0)) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    i = tl.load(index + offs, mask=mask, other=0)
    tl.device_assert((i >= 0) & (i < size), "index out of bounds")
    tl.store(out + offs, tl.load(src + i, mask=mask), mask=mask)


@naiad.jit
def scaled(a, out, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(a + offs, mask=mask) * factor, mask=mask)


def compiled_gather(**options):
    source = ASTSource(checked_gather, SIGNATURE, constexprs={"BLOCK": 32})
    return compile(source, target=CPU, options={"num_warps": 2, **options})


def relaunch(compiled, grid, *args):
    """What Inductor's generated launcher calls, with no launch hooks."""
    run = compiled.run
    run(*grid, 0, compiled.function, compiled.packed_metadata, None, None, None, *args)


@pytest.fixture(autouse=True)
def compiled_on_the_cpu(monkeypatch):
    """Launches run compiled (the tests' default is the interpreter), set in the environment
    as a program sets it: `knobs.override` would take the launch settings' slower branch."""
    monkeypatch.setenv("NAIAD_BACKEND", "cpu")


@pytest.fixture
def slow_launches(monkeypatch):
    """Counts the launches that take the slow path (JITFunction._run_slow)."""
    calls = []
    slow = JITFunction._run_slow

    def counted(self, *args):
        calls.append(self.__name__)
        return slow(self, *args)

    monkeypatch.setattr(JITFunction, "_run_slow", counted)
    return calls


def gather_inputs(n=100, size=70, seed=0):
    rng = np.random.default_rng(seed)
    src = rng.standard_normal(size).astype(np.float32)
    index = rng.integers(0, size, n).astype(np.int32)
    return src, index, np.full(n, np.nan, np.float32)


def test_tritons_debug_option_compiles_assertions_without_naiads_debug_mode(
    slow_launches, monkeypatch
):
    compiled = compiled_gather(debug=True, sanitize_overflow=False)
    assert compiled.options.asserts and not compiled.options.debug
    assert "tt.assert" in compiled.asm["ttir"]
    assert "tt.assert" not in compiled_gather().asm["ttir"]
    src, index, out = gather_inputs()
    for seed in range(4):  # the first launch loads the kernel; the others take the hot path
        src, index, out = gather_inputs(seed=seed)
        relaunch(compiled, (4, 1, 1), src, index, out, 100, 70, 32)
        np.testing.assert_array_equal(out, src[index])
    assert slow_launches == ["checked_gather"]
    index[37] = 70
    with pytest.raises(KernelAssertionError, match="index out of bounds"):
        relaunch(compiled, (4, 1, 1), src, index, out, 100, 70, 32)
    monkeypatch.setenv("NAIAD_BACKEND", "interpreter")  # the interpreter asserts as well
    with pytest.raises(KernelAssertionError, match="index out of bounds"):
        relaunch(compiled, (4, 1, 1), src, index, out, 100, 70, 32)


@pytest.mark.skipif(link.linker_version() is None, reason="nvJitLink is not installed")
def test_on_a_gpu_target_the_kernel_asserts_without_taking_extents():
    """Debug mode's kernels take each pointer's extent after their arguments; these do not."""
    source = ASTSource(checked_gather, SIGNATURE, constexprs={"BLOCK": 32})
    gpu = GPUTarget("cuda", 90, 32)
    parameters = {}
    for debug in (True, False):
        ptx = compile(source, target=gpu, options={"debug": debug}).asm["ptx"]
        assert ("__assertfail" in ptx) == debug
        entry = re.search(r"\.entry\s+\w+\s*\((.*?)\)", ptx, re.S).group(1)
        parameters[debug] = entry.count(".param")
    assert parameters[True] == parameters[False] == len(SIGNATURE)


def test_a_relaunch_passes_every_argument_or_the_non_constexpr_ones(slow_launches):
    compiled = compiled_gather(debug=True)
    src, index, out = gather_inputs(n=200, seed=5)
    relaunch(compiled, (2, 4, 1), src, index, out, 200, 70, None)  # a placeholder constexpr
    np.testing.assert_array_equal(out, src[index])
    out[:] = np.nan
    relaunch(compiled, (2, 4, 1), src, index, out, 200, 70)
    np.testing.assert_array_equal(out, src[index])
    assert slow_launches == ["checked_gather"]
    with pytest.raises(TypeError, match="takes the kernel's 6 arguments"):
        relaunch(compiled, (1, 1, 1), src, index, out)
    # Three sizes take the hot path inline within CUDA's limits; beyond them, and with an empty
    # dimension, the slow path says so or runs nothing.
    with pytest.raises(ValueError, match=r"grid dimension 1 is 65536 \(y\): at most 65535"):
        relaunch(compiled, (1, 65536, 1), src, index, out, 200, 70)
    out[:] = np.nan
    relaunch(compiled, (2, 0, 1), src, index, out, 200, 70)
    assert np.isnan(out).all()


@pytest.mark.parametrize("executor", ["cpu", "interpreter"])
@pytest.mark.parametrize("sanitize_overflow", [True, False])
def test_overflow_checks_follow_sanitize_overflow(sanitize_overflow, executor, monkeypatch):
    monkeypatch.setenv("NAIAD_BACKEND", executor)
    signature = {"a": "*i32", "out": "*i32", "n": "i32", "factor": "i32"}
    source = ASTSource(scaled, signature, constexprs={"BLOCK": 16})
    options = {"debug": True, "sanitize_overflow": sanitize_overflow}
    compiled = compile(source, target=CPU, options=options)
    rng = np.random.default_rng(3)
    a = rng.integers(-(2**20), 2**20, 40).astype(np.int32)
    out = np.zeros_like(a)
    relaunch(compiled, (3, 1, 1), a, out, 40, 1000, 16)
    np.testing.assert_array_equal(out, a * 1000)
    a[7] = 2**30  # times 4 wraps around in int32
    if sanitize_overflow:
        with pytest.raises(KernelAssertionError, match="int32 overflow"):
            relaunch(compiled, (3, 1, 1), a, out, 40, 4, 16)
    else:
        relaunch(compiled, (3, 1, 1), a, out, 40, 4, 16)
        np.testing.assert_array_equal(out, a * np.int32(4))


def test_launch_settings_follow_tritons_twins_on_the_hot_path(monkeypatch):
    """While Naiad stands in for Triton, an unset NAIAD_* launch setting reads its TRITON_*
    twin on the hot path too; a set one (even empty) wins."""
    monkeypatch.delenv("NAIAD_INTERPRET", raising=False)
    monkeypatch.delenv("NAIAD_DEBUG", raising=False)
    monkeypatch.setenv("TRITON_DEBUG", "1")
    knobs.read_triton_twins(True)
    try:
        with_twin = knobs.launch_settings()
        monkeypatch.setenv("TRITON_DEBUG", "0")
        assert knobs.launch_settings() != with_twin
        monkeypatch.setenv("NAIAD_DEBUG", "")
        monkeypatch.setenv("TRITON_DEBUG", "1")
        emptied = knobs.launch_settings()
        assert emptied != with_twin and emptied[2] in (b"", "")
        assert not knobs.debug.get()
    finally:
        knobs.read_triton_twins(False)


def loaded_ttir(kernel) -> list:
    """The TTIR of every kernel `kernel` loaded on the CPU."""
    return [loaded.kernel.asm["ttir"] for loaded in kernel._launchers["cpu"].kernels.values()]


def test_a_relaunch_runs_the_compiled_kernel_for_arguments_that_hold_more_facts():
    """Compiled without alignment facts (as Inductor compiles its graph inputs), relaunched with
    aligned arrays: that kernel runs, and none is compiled for the alignment."""
    kernel = naiad.JITFunction(checked_gather.fn)
    compiled = compile(ASTSource(kernel, SIGNATURE, {"BLOCK": 32}), target=CPU)
    assert "tt.divisibility" not in compiled.asm["ttir"]
    src, index, out = gather_inputs(n=64, seed=7)  # NumPy's buffers are 16-byte aligned
    relaunch(compiled, (2, 1, 1), src, index, out, 64, 70, 32)
    np.testing.assert_array_equal(out, src[index])
    assert loaded_ttir(kernel) == [compiled.asm["ttir"]]


def test_a_relaunch_breaking_a_compiled_fact_compiles_its_own_kernel():
    """Compiled for aligned pointers, relaunched with a misaligned one: the kernel compiled for
    the arguments runs (Triton would run the aligned one on it)."""
    kernel = naiad.JITFunction(checked_gather.fn)
    aligned = {(i,): [["tt.divisibility", 16]] for i in range(3)}
    source = ASTSource(kernel, SIGNATURE, {"BLOCK": 32}, attrs=aligned)
    compiled = compile(source, target=CPU)
    src, index, out = gather_inputs(n=64, seed=8)
    shifted = np.empty(71, np.float32)[1:]  # 4 bytes past an aligned buffer
    shifted[:] = src
    relaunch(compiled, (2, 1, 1), shifted, index, out, 64, 70, 32)
    np.testing.assert_array_equal(out, src[index])
    (ran,) = loaded_ttir(kernel)
    aligned_src = "%src: !tt.ptr<f32> {tt.divisibility = 16"
    assert aligned_src in compiled.asm["ttir"] and aligned_src not in ran


def test_a_relaunch_with_every_argument_runs_without_the_launch_entry(slow_launches):
    """After its first launch, a relaunch passing every argument (a placeholder constexpr
    among them, as Inductor passes its constexprs) runs the prepared launch from the kernel's
    relaunch entry, keyed with the compiled options once, without a call of the launch entry
    that `kernel[grid]` calls."""
    kernel = naiad.JITFunction(checked_gather.fn)
    source = ASTSource(kernel, SIGNATURE, {"BLOCK": 32})
    compiled = compile(source, target=CPU, options={"debug": True, "sanitize_overflow": False})
    src, index, out = gather_inputs(n=90, seed=11)
    relaunch(compiled, (3, 1, 1), src, index, out, 90, 70, None)
    np.testing.assert_array_equal(out, src[index])
    entry, entered = kernel._entry, []
    kernel._entry = lambda *args, **kwargs: entered.append(1) or entry(*args, **kwargs)
    for seed in range(3):
        src, index, out = gather_inputs(n=90, seed=12 + seed)
        relaunch(compiled, (1, 3, 1), src, index, out, 90, 70, None)
        np.testing.assert_array_equal(out, src[index])
    assert entered == [] and slow_launches == ["checked_gather"]
