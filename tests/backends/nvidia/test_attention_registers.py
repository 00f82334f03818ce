"""Tutorial 06's attention forward (examples/06_fused_attention.py, its descriptors made in the
kernel by a jit helper) at the configs bench/gpu/tensor_cores.py launches, compiled to a cubin
without a GPU: no spilled registers on sm_90a, where its K and V blocks come by tensor copies;
none on sm_80 where Triton's own sm_80 compile spills none either (the larger sm_80 tiles spill
in both compilers, Naiad's no more: bench/RESULTS.md)."""

from pathlib import Path

import pytest
from module_files import module_from_file

from naiad.backends.nvidia import link

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "06_fused_attention.py"

pytestmark = pytest.mark.skipif(link.linker_version() is None, reason="nvJitLink is not installed")


def _compile(arch: str, head_dim: int, block_m: int, block_n: int, warps: int, stage: int):
    attention = module_from_file("naiad_example_06_registers", EXAMPLE)
    return attention._attn_fwd.fn.warmup(
        0.125, "*fp32", 4, 32, "*fp16", "*fp16", "*fp16", "*fp16", 4096,
        HEAD_DIM=head_dim, BLOCK_M=block_m, BLOCK_N=block_n, FP8_OUTPUT=False, STAGE=stage,
        warp_specialize=False, IS_HOPPER=False, num_warps=warps, num_stages=3, grid=(1,),
        target=f"cuda:{arch}",
    )  # fmt: skip


@pytest.mark.parametrize(
    "arch, head_dim, block_m, block_n, warps, stage",
    [
        ("sm_90a", 128, 128, 128, 8, 1),
        pytest.param("sm_90a", 128, 128, 128, 8, 3, marks=pytest.mark.full),
        pytest.param("sm_90a", 128, 128, 64, 4, 1, marks=pytest.mark.full),
        pytest.param("sm_90a", 64, 128, 64, 4, 3, marks=pytest.mark.full),
        pytest.param("sm_80", 64, 128, 64, 4, 1, marks=pytest.mark.full),
        pytest.param("sm_80", 64, 64, 64, 4, 3, marks=pytest.mark.full),
    ],
)
def test_tutorial_attention_compiles_without_spills(arch, head_dim, block_m, block_n, warps, stage):
    compiled = _compile(arch, head_dim, block_m, block_n, warps, stage)
    ptx = compiled.asm["ptx"]
    assert compiled.n_spills == 0
    assert ("cp.async.bulk.tensor" in ptx) == (arch == "sm_90a")
    if arch == "sm_90a":  # both dots on wgmma, the loop's K and V blocks by copies
        assert "wgmma.mma_async" in ptx and "cp.async.cg" not in ptx
