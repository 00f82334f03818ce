"""`tl.dot_scaled` compiled for sm_80 and sm_90a: the operands are upcast to bf16 (unscaled fp16
stays fp16, scaled fp16 is split into bf16 parts) and multiplied by the tensor cores, as
Triton does where the GPU has no block-scaled instructions; the PTX assembles. Values:
tests/language/test_dot_scaled.py (and its `cuda` runs on a GPU)."""

import numpy as np
import pytest
from fixture_kernels.dot_scaled import scaled_matmul
from test_lowering import ARCHES, assemble
from test_toolchain import needs_ptxas

_PACKED = {"e2m1": 2}


@needs_ptxas
@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize(
    "formats", [("e2m1", "e4m3"), ("e5m2", "e2m1"), ("fp16", "fp16"), ("e5m2", "fp16")]
)
def test_dot_scaled_assembles_onto_tensor_cores(arch, formats, tmp_path):
    a_format, b_format = formats
    m, n, k = 64, 64, 64
    a = np.zeros((m, k // _PACKED.get(a_format, 1)), np.uint16 if a_format == "fp16" else np.uint8)
    b = np.zeros((k // _PACKED.get(b_format, 1), n), np.uint16 if b_format == "fp16" else np.uint8)
    scales = np.zeros((m, k // 32), np.uint8)
    out = np.zeros((m, n), np.float32)
    compiled = scaled_matmul.warmup(
        a, scales, b, scales, out, out, M=m, N=n, K=k, A_FORMAT=a_format, B_FORMAT=b_format,
        A_K_PACK=True, B_K_PACK=True, SCALED=a_format != "fp16", WITH_ACC=False,
        grid=(1,), target=f"cuda:{arch}",
    )  # fmt: skip
    ptx = compiled.asm["ptx"]
    assemble(ptx, arch, tmp_path)
    # A scaled fp16 operand is split into exact bf16 parts (bf16x3) for the tensor cores.
    operand = "f16" if formats == ("fp16", "fp16") else "bf16"
    # The upcast operands come from registers: mma.sync reads them there; on sm_90a they are
    # stored to shared memory (fenced for the asynchronous proxy) for wgmma.
    if "fp16" in formats and a_format != "fp16":  # split products: mma.sync on either arch
        assert "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32" in ptx
    elif arch == "sm_90a":
        assert f"wgmma.mma_async.sync.aligned.m64n64k16.f32.{operand}.{operand}" in ptx
        assert "fence.proxy.async.shared::cta" in ptx
    else:
        assert f"mma.sync.aligned.m16n8k16.row.col.f32.{operand}.{operand}.f32" in ptx
