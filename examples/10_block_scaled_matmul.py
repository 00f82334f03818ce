"""Tutorial 10 — block-scaled matmul (Triton's `python/tutorials/10-block-scaled-matmul.py`).

C = (A * scale_A) @ (B * scale_B)^T, where A and B are microscaled: fp4 (e2m1, two codes per byte
along K) or fp8 (e4m3) elements, each run of VEC elements along K sharing one scale, an e8m0
power of two (mxfp4, mxfp8, and "mixed": fp8 A with fp4 B) or an fp8 e4m3 number (nvfp4, VEC 16).
As in the tutorial, every operand is read through a tensor descriptor, B is stored N x K
(K-major, so fp4 B is packed along K) and transposed in the kernel, and the product is one
`tl.dot_scaled` per K step into an fp32 accumulator. The kernel is our own: its scales are plain
[rows, K / VEC] tensors, where the tutorial lays them out as Blackwell's tensor cores read them.
The operands come from `naiad.tools.mxfp` (Triton's `triton.tools.mxfp`). Checked against a
float64 NumPy product of the decoded values; the tiles' edges are ragged in M and N. Run alone:
`python examples/10_block_scaled_matmul.py`.
"""

import numpy as np
import torch

import naiad as triton
import naiad.language as tl
from naiad.tools.mxfp import MXFP4Tensor, MXScaleTensor
from naiad.tools.tensor_descriptor import TensorDescriptor

# The device the tensors are made on: the GPU where one is present, else the CPU.
DEVICE = triton.runtime.driver.active.get_active_torch_device()

# name -> (A's format, B's format, elements per scale)
FORMATS = {
    "mxfp4": ("e2m1", "e2m1", 32),
    "nvfp4": ("e2m1", "e2m1", 16),
    "mxfp8": ("e4m3", "e4m3", 32),
    "mixed": ("e4m3", "e2m1", 32),
}


@triton.jit
def block_scaled_matmul_kernel(a_desc, a_scale_desc, b_desc, b_scale_desc, c_desc, K,
                               A_FORMAT: tl.constexpr, B_FORMAT: tl.constexpr, VEC: tl.constexpr,
                               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # fp4 operands hold two elements a byte along K, so their K offsets are in bytes.
    A_PER_BYTE: tl.constexpr = 2 if A_FORMAT == "e2m1" else 1
    B_PER_BYTE: tl.constexpr = 2 if B_FORMAT == "e2m1" else 1
    first_row = tl.program_id(0) * BLOCK_M
    first_col = tl.program_id(1) * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for step in tl.range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([first_row, step * (BLOCK_K // A_PER_BYTE)])
        b = b_desc.load([first_col, step * (BLOCK_K // B_PER_BYTE)])
        a_scale = a_scale_desc.load([first_row, step * (BLOCK_K // VEC)])
        b_scale = b_scale_desc.load([first_col, step * (BLOCK_K // VEC)])
        acc = tl.dot_scaled(a, a_scale, A_FORMAT, b.T, b_scale, B_FORMAT, acc)
    c_desc.store([first_row, first_col], acc)


# ---------------------------------------------------------------------------------------------
# Host side (Naiad's own)
# ---------------------------------------------------------------------------------------------

def make_operand(fmt, rows, K):
    """(what the kernel reads, the float32 values it stands for) of a rows x K operand: fp4
    codes packed along K, or fp8 e4m3 numbers."""
    if fmt == "e2m1":
        codes = MXFP4Tensor(size=(rows, K), device=DEVICE).random()
        return codes.to_packed_tensor(dim=1), codes.to(torch.float32)
    data = torch.randn(rows, K, device=DEVICE).mul(8).to(torch.float8_e4m3fn)
    return data, data.to(torch.float32)


def make_scales(name, rows, K):
    """(what the kernel reads, float32 values) of a rows x (K / VEC) block of scales: e8m0
    powers of two from 1/16 to 16, or (nvfp4) fp8 e4m3 numbers."""
    vec = FORMATS[name][2]
    if name == "nvfp4":
        data = (torch.rand(rows, K // vec, device=DEVICE) * 4 + 0.25).to(torch.float8_e4m3fn)
        return data, data.to(torch.float32)
    scales = MXScaleTensor(size=(rows, K // vec), device=DEVICE).random(low=1 / 16, high=16)
    return scales.data, scales.to(torch.float32)


def block_scaled_matmul(a, a_scale, b, b_scale, name, M, N, K, BLOCK_M=32, BLOCK_N=32, BLOCK_K=512):
    """The fp32 product of M x K A and N x K B (as `make_operand` makes them) with their scales.
    A descriptor's block spans at least 16 bytes along its last dimension (Triton's rule, from
    the GPU's bulk copies): BLOCK_K = 512 gives 16 e8m0 scales."""
    a_format, b_format, vec = FORMATS[name]
    a_per_byte = 2 if a_format == "e2m1" else 1
    b_per_byte = 2 if b_format == "e2m1" else 1
    c = torch.empty((M, N), dtype=torch.float32, device=DEVICE)
    a_desc = TensorDescriptor.from_tensor(a, [BLOCK_M, BLOCK_K // a_per_byte])
    b_desc = TensorDescriptor.from_tensor(b, [BLOCK_N, BLOCK_K // b_per_byte])
    a_scale_desc = TensorDescriptor.from_tensor(a_scale, [BLOCK_M, BLOCK_K // vec])
    b_scale_desc = TensorDescriptor.from_tensor(b_scale, [BLOCK_N, BLOCK_K // vec])
    c_desc = TensorDescriptor.from_tensor(c, [BLOCK_M, BLOCK_N])
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    block_scaled_matmul_kernel[grid](a_desc, a_scale_desc, b_desc, b_scale_desc, c_desc, K,
                                     A_FORMAT=a_format, B_FORMAT=b_format, VEC=vec,
                                     BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
    return c


def check_one(name, M=72, N=48, K=1024, seed=0):
    """One format: the kernel's product against float64 NumPy (ragged tiles in M and N)."""
    torch.manual_seed(seed)
    a_format, b_format, vec = FORMATS[name]
    a, a_values = make_operand(a_format, M, K)
    b, b_values = make_operand(b_format, N, K)
    a_scale, a_scale_values = make_scales(name, M, K)
    b_scale, b_scale_values = make_scales(name, N, K)
    out = block_scaled_matmul(a, a_scale, b, b_scale, name, M, N, K)

    def scaled(values, scales):
        return values.cpu().double().numpy() * np.repeat(scales.cpu().double().numpy(), vec, axis=1)

    ref = scaled(a_values, a_scale_values) @ scaled(b_values, b_scale_values).T
    diff = out.cpu().double().numpy() - ref
    rel = float(np.linalg.norm(diff) / np.linalg.norm(ref))
    # Decoding and scaling are exact; only the fp32 accumulation of K products rounds.
    assert rel <= 2.0 ** -18, f"{name}: relative error {rel:.2e}"
    return {"max_err": float(np.abs(diff).max()), "rel_err": rel}


def check(formats=tuple(FORMATS), **sizes):
    results = [check_one(name, **sizes) for name in formats]
    return {key: max(result[key] for result in results) for key in ("max_err", "rel_err")}


def main():
    result = check()
    print(f"block_scaled_matmul (mxfp4, nvfp4, mxfp8, mixed): ok "
          f"(max err {result['max_err']:.2e}, rel {result['rel_err']:.1e})")
    return result


if __name__ == "__main__":
    main()
