"""`noinline` functions on the GPU path: the kernel's TTIR keeps the calls, the NVIDIA back end
inlines them before its TTGIR (its lowering makes one function), and ptxas assembles the PTX;
the same kernel compiled for the CPU gives the expected values. A noinline function called
with a block is refused at the call by every compiled target, as Triton's compiler refuses it;
the interpreter runs it, as Triton's interpreter does. Values on the GPU:
tests/gpu/test_noinline_gpu.py."""

import numpy as np
import pytest
from fixture_kernels.noinline_calls import expected, noinline_block_kernel, noinline_scalars_kernel
from test_toolchain import assemble, needs_ptxas

import naiad
from naiad.errors import UnsupportedLanguageConstruct


@needs_ptxas
def test_noinline_calls_compile_for_the_gpu(tmp_path):
    compiled = noinline_scalars_kernel.warmup(
        "*fp32", "*fp32", "*fp32", grid=(1,), num_warps=1, target="cuda:sm_90a"
    )
    assert compiled.asm["ttir"].count("tt.call") == 3  # pick, and plus_one twice in it
    assert "tt.call" not in compiled.asm["ttgir"]
    assert compiled.asm["ttgir"].count("tt.func") == 1
    assemble(compiled.asm["ptx"], "sm_90a", tmp_path)


@pytest.mark.parametrize("x, y", [(1.5, -2.25), (-3.0, 0.75)])
def test_noinline_calls_on_the_cpu(cpu_fresh_cache, x, y):
    out = np.full(1, np.nan, np.float32)
    noinline_scalars_kernel[(1,)](np.float32([x]), np.float32([y]), out)
    assert out[0] == np.float32(expected(x, y))


@pytest.mark.parametrize("target", ["cpu", "cuda:sm_90a", "cuda:sm_80"])
def test_a_block_argument_to_a_noinline_function_is_refused_when_compiled(target):
    with pytest.raises(UnsupportedLanguageConstruct, match=r"`scale` is noinline.*`vec`"):
        noinline_block_kernel.warmup("*fp32", BLOCK=128, grid=(1,), target=target)


def test_the_interpreter_runs_a_noinline_function_on_a_block():
    """As Triton's interpreter does (test_core's test_call reads the values there), while the
    CPU back end refuses the launch as Triton's compiler does (test_call wants the error)."""
    x = np.random.default_rng(3).standard_normal(128).astype(np.float32)
    got = x.copy()
    with naiad.knobs.override(NAIAD_BACKEND="interpreter"):
        noinline_block_kernel[(1,)](got, BLOCK=128)
    assert np.array_equal(got, x * np.float32(3))
    refused = pytest.raises(UnsupportedLanguageConstruct, match="`scale` is noinline")
    with naiad.knobs.override(NAIAD_BACKEND="cpu"), refused:
        noinline_block_kernel[(1,)](x.copy(), BLOCK=128)
