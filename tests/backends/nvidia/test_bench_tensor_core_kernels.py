"""bench/gpu/tensor_core_kernels.py compiles for sm_90a with no GPU, at the configs
bench/gpu/tensor_cores.py launches on it: the pointer-based attention forward (D64 non-causal,
D128 causal) and the int8 matmul on the largest tile, all on wgmma. Register and
spill counts are the bench's to report (issue 14 wants the spills gone), not checked here."""

import re
from pathlib import Path

import pytest
from module_files import module_from_file

from naiad.backends.nvidia import link

KERNELS = Path(__file__).resolve().parents[3] / "bench" / "gpu" / "tensor_core_kernels.py"


def kernels():
    return module_from_file("naiad_bench_tensor_core_kernels_sm90", KERNELS)


def _counts_present(compiled) -> None:
    if link.linker_version() is not None:
        assert compiled.n_regs > 0 and compiled.n_spills is not None


@pytest.mark.parametrize(
    "head_dim, block_m, block_n, warps, causal", [(64, 128, 64, 4, False), (128, 128, 128, 8, True)]
)
def test_pointer_attention_compiles_for_sm_90a(causal, head_dim, block_m, block_n, warps):
    compiled = kernels().attention_fwd_pointers.warmup(
        "*fp16", "*fp16", "*fp16", "*fp16", 0.125, 4096 * head_dim, head_dim, 4096,
        HEAD_DIM=head_dim, BLOCK_M=block_m, BLOCK_N=block_n, CAUSAL=causal,
        num_warps=warps, num_stages=3, grid=(1,), target="cuda:sm_90a",
    )  # fmt: skip
    ptx = compiled.asm["ptx"]
    # Both dots on wgmma: Q K^T from two buffers, P V with P in registers.
    assert ptx.count("wgmma.mma_async") and "ex2.approx" in ptx
    assert re.search(r"wgmma\.mma_async\S* \{[^}]*\}, \{%r\d+,%r\d+,%r\d+,%r\d+\}", ptx)
    _counts_present(compiled)


def test_int8_matmul_compiles_for_sm_90a():
    compiled = kernels().int_matmul_kernel.warmup(
        "*i8", "*i8", "*i32", 4096, 4096, 4096, 4096, 1, 1, 4096, 4096, 1,
        BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, BLOCK_SIZE_K=64, GROUP_SIZE_M=8,
        num_warps=8, num_stages=3, grid=(1,), target="cuda:sm_90a",
    )  # fmt: skip
    assert "wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8" in compiled.asm["ptx"]
    _counts_present(compiled)
