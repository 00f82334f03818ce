"""Blackwell (compute capability 10.0) as a target without its tensor-memory MMA: a device of
10.0 gets `sm_100a`, as Triton compiles for it, and a dot there is Ampere's `mma.sync` (which
sm_100 keeps), never Hopper's `wgmma` (which it lacks). Checked as PTX and, where nvJitLink is
installed, linked into a cubin for sm_100a; the kernel's values on the CPU against NumPy."""

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad.backends.nvidia import link
from naiad.backends.nvidia import target as nv_target


@naiad.jit
def square_matmul(a_ptr, b_ptr, c_ptr, N: tl.constexpr):
    rows = tl.arange(0, N)[:, None] * N
    cols = tl.arange(0, N)[None, :]
    c = tl.dot(tl.load(a_ptr + rows + cols), tl.load(b_ptr + rows + cols))
    tl.store(c_ptr + rows + cols, c)


def test_a_blackwell_device_gets_its_arch_specific_target():
    assert nv_target.target_for_capability(10, 0).name == "cuda:sm_100a"
    assert nv_target.arch_name("sm100") == "cuda:sm_100a"
    assert nv_target.cuda_target("sm_100a").hopper_only is False
    assert nv_target.cuda_target("sm_90a").hopper_only is True


def test_a_dot_on_sm_100a_is_mma_sync_and_links():
    compiled = square_matmul.warmup(
        "*fp16", "*fp16", "*fp32", N=64, grid=(1,), target="cuda:sm_100a"
    )
    ptx = compiled.asm["ptx"]
    assert "\n.target sm_100a\n" in ptx
    assert "mma.sync.aligned" in ptx and "wgmma" not in ptx
    assert "ttng.warp_group_dot" not in compiled.asm["ttgir"]
    if link.linker_version() is None:
        pytest.skip("no nvJitLink: the PTX alone is checked")
    assert len(compiled.asm["cubin"]) > 0


def test_the_same_kernel_computes_the_product_on_the_cpu(cpu_fresh_cache):
    rng = np.random.default_rng(10)
    a, b = (rng.standard_normal((64, 64)).astype(np.float16) for _ in range(2))
    c = np.empty((64, 64), np.float32)
    square_matmul[(1,)](a, b, c, N=64)
    expected = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, expected, rtol=1e-3, atol=1e-2)
