"""`tl.target_info` (`triton.language.target_info`, Triton 3.4+) is a module of constexpr
functions: in a kernel they answer for the target being compiled (a guarded branch is the only
one compiled), on the host for the active driver. The interpreter and the CPU back end answer
as the host's CPU, so a kernel guarded by `if is_cuda():` takes its portable branch there; a
kernel compiled for `cuda:sm_90a` takes the CUDA one, checked here without a GPU."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import naiad
import naiad.language as tl
import naiad.language.target_info
from naiad import knobs
from naiad.ir.parser import parse_module
from naiad.language.target import GPUTarget
from naiad.language.target_info import (
    cuda_capability_geq,
    current_target,
    is_cuda,
    is_hip,
    is_hip_cdna3,
    is_hip_cdna4,
    is_hip_gfx1250,
)
from naiad.runtime import driver
from naiad.runtime.evaluator import evaluate

BACKENDS = ["interpreter", "cpu"]


@pytest.fixture(params=BACKENDS)
def backend(request):
    with knobs.override(NAIAD_BACKEND=request.param):
        yield request.param


@naiad.jit
def guarded_kernel(X, Y, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(X + offs)
    if is_cuda():
        y = x * 2.0
    else:
        y = x + 1.0
    if cuda_capability_geq(9, 0):
        y = y * 3.0
    if is_hip() or is_hip_cdna3() or is_hip_cdna4() or is_hip_gfx1250():
        y = y - 5.0
    tl.store(Y + offs, y)


@naiad.jit
def answers_kernel(F, MAJOR: tl.constexpr, MINOR: tl.constexpr):
    """Stores 1 or 0 for each function (guarded_kernel takes their branches); then the
    warp size."""
    tl.store(F + 0, 1 if is_cuda() else 0)
    tl.store(F + 1, 1 if cuda_capability_geq(MAJOR, MINOR) else 0)
    tl.store(F + 2, 1 if is_hip() else 0)
    tl.store(F + 3, 1 if is_hip_cdna3() else 0)
    tl.store(F + 4, 1 if is_hip_cdna4() else 0)
    tl.store(F + 5, 1 if is_hip_gfx1250() else 0)
    tl.static_assert(current_target().backend == "cpu" or current_target().backend == "cuda")
    tl.store(F + 6, current_target().warp_size)


def test_the_module_is_triton_s_spelling():
    assert tl.target_info is naiad.language.target_info
    assert tl.target_info.is_cuda is is_cuda and "target_info" in tl.__all__


def test_a_guarded_kernel_takes_the_portable_branch_on_the_host(backend):
    x = np.random.default_rng(3).standard_normal(64).astype(np.float32)
    y = np.full(64, np.nan, np.float32)
    guarded_kernel[(1,)](x, y, 64)
    np.testing.assert_array_equal(y, x + np.float32(1.0))


@pytest.mark.parametrize("major, minor", [(0, 0), (8, 0)])
def test_every_function_answers_for_the_host_in_a_kernel(backend, major, minor):
    flags = np.full(7, -1, np.int32)
    answers_kernel[(1,)](flags, major, minor)
    assert flags.tolist() == [0, 0, 0, 0, 0, 0, 1]


def _flags_compiled_for(target: str, major: int, minor: int) -> list[int]:
    """The flags `answers_kernel` stores when compiled for `target` (no GPU needed): its TTIR
    run by the reference evaluator."""
    flags = np.full(7, -1, np.int32)
    compiled = answers_kernel.warmup(flags, major, minor, grid=(1,), target=target)
    evaluate(parse_module(compiled.asm["ttir"]), "answers_kernel", [flags])
    return flags.tolist()


def test_a_kernel_compiled_for_hopper_takes_the_cuda_branches():
    x = np.random.default_rng(4).standard_normal(64).astype(np.float32)
    y = np.full(64, np.nan, np.float32)
    ttir = guarded_kernel.warmup(x, y, 64, grid=(1,), target="cuda:sm_90a").asm["ttir"]
    assert "arith.addf" not in ttir and "arith.subf" not in ttir  # the other branches: gone
    evaluate(parse_module(ttir), "guarded_kernel", [x, y])
    np.testing.assert_array_equal(y, x * np.float32(2.0) * np.float32(3.0))
    host = guarded_kernel.warmup(x, y, 64, grid=(1,), target="cpu").asm["ttir"]
    assert "arith.addf" in host and "arith.mulf" not in host


@pytest.mark.parametrize("major, minor, geq", [(9, 0, 1), (8, 9, 1), (9, 1, 0), (10, 0, 0)])
def test_cuda_capability_geq_compares_with_the_compiled_arch(major, minor, geq):
    assert _flags_compiled_for("cuda:sm_90a", major, minor) == [1, geq, 0, 0, 0, 0, 32]
    assert _flags_compiled_for("cpu", major, minor) == [0, 0, 0, 0, 0, 0, 1]


def test_on_the_host_they_answer_for_the_active_driver():
    assert current_target() == driver.active.get_current_target()
    target = current_target()
    assert is_cuda() == (target.backend == "cuda")
    try:
        driver.set_active(driver.CpuDriver())
        assert current_target() == GPUTarget("cpu", driver.host_gpu_target().arch, 1)
        assert not is_cuda() and not cuda_capability_geq(0) and not is_hip()
        assert not (is_hip_cdna3() or is_hip_cdna4() or is_hip_gfx1250())
        driver.set_active(_Hopper())
        assert current_target() == GPUTarget("cuda", 90, 32)
        assert is_cuda() and cuda_capability_geq(9) and cuda_capability_geq(8, 9)
        assert not cuda_capability_geq(9, 1) and not cuda_capability_geq(10)
        assert not is_hip()
    finally:
        driver.reset_active()


class _Hopper(driver.CpuDriver):
    """A driver that says it is an H100/H200, for the host-side answers."""

    backend = "cuda"

    def get_current_target(self):
        return GPUTarget("cuda", 90, 32)


def test_triton_s_module_path_through_the_switch():
    program = textwrap.dedent(
        """
        import numpy as np
        import naiad
        naiad.install_as_triton()
        import triton
        import triton.language as tl
        import triton.language.target_info
        from triton.language.target_info import current_target, is_cuda, cuda_capability_geq
        assert triton.language.target_info is naiad.language.target_info
        assert tl.target_info is triton.language.target_info
        print("host", is_cuda(), current_target().backend)
        """
    )
    env = dict(os.environ, NAIAD_BACKEND="cpu")
    env.pop("NAIAD_AS_TRITON", None)
    done = subprocess.run(
        [sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.split() == ["host", "False", "cpu"]
