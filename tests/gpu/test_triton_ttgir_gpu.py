"""Triton 3.6's printed TTGIR (fixture_kernels/triton_ttgir.py), compiled by Naiad from the file
for the GPU at hand and launched as Triton launches a file's kernel (`compiled[grid](*args)`,
the function's parameters in order); the values against float64 references. The files were
printed for sm_90a (wgmma, 132 SMs for the persistent matmul): run on an H100/H200.

Run on the GPU machine: `.device/h35_ttgir_gpu.sh` (or `python3 -m pytest tests/gpu -m gpu`).
"""

import math

import numpy as np
import pytest
import torch
from fixture_kernels.triton_ttgir import (
    ROUNDED_DIVISIONS,
    TOKENS,
    TRITON36,
    rounded_reference,
)

from naiad.backends.registry import CompileOptions
from naiad.runtime.ir_files import compile_ir_file, compile_ir_text
from naiad.runtime.tensor_descriptor import TensorDescriptor

pytestmark = pytest.mark.gpu
OPTIONS = CompileOptions(num_warps=4, num_stages=3)


def _file_kernel(name: str):
    return compile_ir_file(TRITON36 / f"{name}.ttgir", "cuda:sm_90a", OPTIONS)


def test_vector_add():
    kernel = _file_kernel("vector_add")
    x, y = (torch.randn(5000, device="cuda") for _ in range(2))
    out = torch.full_like(x, float("nan"))
    kernel[(math.ceil(5000 / 1024),)](x, y, out, 5000)
    torch.cuda.synchronize()
    torch.testing.assert_close(out.double(), x.double() + y.double(), rtol=1e-6, atol=1e-6)


def test_persistent_softmax():
    """300 rows of 1000 columns in rows of 1024 (the strides are multiples of 16), on 132
    programs that stride over the rows."""
    rows, cols, stride = 300, 1000, 1024
    x = torch.randn(rows, stride, device="cuda") * 3
    out = torch.full_like(x, float("nan"))
    _file_kernel("softmax")[(132,)](out, x, stride, stride, rows, cols)
    torch.cuda.synchronize()
    expected = torch.softmax(x[:, :cols].double(), dim=1)
    torch.testing.assert_close(out[:, :cols].double(), expected, rtol=1e-5, atol=1e-7)
    assert out[:, cols:].isnan().all()  # masked off


def _close_fp16(out, expected):
    torch.testing.assert_close(out.double(), expected, rtol=1e-2, atol=2e-2)


def test_pipelined_matmul():
    """M 300 and N 272 not multiples of the 128x128 tile (masked), K 256 (four k-steps)."""
    m, n, k = 300, 272, 256
    a = torch.randn(m, k, device="cuda", dtype=torch.float16) * 0.5
    b = torch.randn(k, n, device="cuda", dtype=torch.float16) * 0.5
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    grid = (math.ceil(m / 128), math.ceil(n / 128))
    _file_kernel("matmul")[grid](a, b, c, m, n, k, k, n, n)
    torch.cuda.synchronize()
    _close_fp16(c, a.double() @ b.double())


def test_a_matmul_carrying_views_through_its_loop():
    """Triton 3.8's sm_80 matmul (mma.sync, its ring slots' views carried by the loop): M and
    N multiples of its 128x128 tile (it loads A's rows unmasked), K 208 (the last k-step
    masked)."""
    m, n, k = 256, 256, 208
    a = torch.randn(m, k, device="cuda", dtype=torch.float16) * 0.5
    b = torch.randn(k, n, device="cuda", dtype=torch.float16) * 0.5
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    path = TRITON36.parent / "matmul_sm80.ttgir"
    kernel = compile_ir_file(path, "cuda:sm_90a", OPTIONS)
    kernel[(2, 2)](a, b, c, m, n, k, k, n, n)
    torch.cuda.synchronize()
    _close_fp16(c, a.double() @ b.double())


def test_attention_forward():
    heads, n_ctx, d = 4, 512, 64
    q, k, v = (torch.randn(heads, n_ctx, d, device="cuda", dtype=torch.float16) for _ in "qkv")
    o = torch.full_like(q, float("nan"))
    scale = 0.125
    _file_kernel("attention")[(n_ctx // 128, heads)](q, k, v, o, scale, n_ctx, n_ctx * d, d)
    torch.cuda.synchronize()
    p = torch.softmax(q.double() @ k.double().transpose(1, 2) * scale, dim=-1)
    _close_fp16(o, p @ v.double())


def test_persistent_matmul():
    """288 tiles of 128x256 on 132 programs (two or three each), K 336: six k-steps, the last
    one masked. B is given as its transpose (N x K)."""
    m, n, k = 4096, 2064, 336
    a = torch.randn(m, k, device="cuda", dtype=torch.float16) * 0.5
    bt = torch.randn(n, k, device="cuda", dtype=torch.float16) * 0.5
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    _file_kernel("persistent_matmul")[(132,)](a, bt, c, m, n, k, k, k, n)
    torch.cuda.synchronize()
    _close_fp16(c, a.double() @ bt.double().T)


def test_persistent_matmul_with_descriptors_made_in_the_kernel():
    """The tensor maps written by the kernel into the launch's global scratch (torch's bytes:
    no allocator set); K 336 ends in a box the copy engine fills with zeros."""
    m, n, k = 4096, 2064, 336
    a = torch.randn(m, k, device="cuda", dtype=torch.float16) * 0.5
    bt = torch.randn(n, k, device="cuda", dtype=torch.float16) * 0.5
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    _file_kernel("persistent_matmul_descriptors")[(132,)](a, bt, c, m, n, k)
    torch.cuda.synchronize()
    _close_fp16(c, a.double() @ bt.double().T)


def test_persistent_matmul_with_host_descriptors():
    """Each descriptor parameter takes a TensorDescriptor (its map encoded at the launch), then
    the shape (i32) and strides (i64) the file declares after it, as numbers."""
    m, n, k = 4096, 2064, 336
    a = torch.randn(m, k, device="cuda", dtype=torch.float16) * 0.5
    bt = torch.randn(n, k, device="cuda", dtype=torch.float16) * 0.5
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    descriptors = [
        (TensorDescriptor.from_tensor(a, [128, 64]), m, k),
        (TensorDescriptor.from_tensor(bt, [256, 64]), n, k),
        (TensorDescriptor.from_tensor(c, [128, 256]), m, n),
    ]
    args = [x for desc, rows, cols in descriptors for x in (desc, rows, cols, cols, 1)]
    _file_kernel("persistent_matmul_tma")[(132,)](*args, m, n, k)
    torch.cuda.synchronize()
    _close_fp16(c, a.double() @ bt.double().T)


def test_rounded_divisions():
    """The GPU's values are the CPU's (tests/backends/nvidia/test_triton_ttgir_files.py):
    Naiad's division, by 0 and INT_MIN / -1 included."""
    rng = np.random.default_rng(35)
    a = rng.integers(-(2**31), 2**31, 128, dtype=np.int64).astype(np.int32)
    d = rng.integers(-50, 50, 128).astype(np.int32)
    a[:8] = [7, -7, 7, -7, 0, 5, -5, -(2**31)]
    d[:8] = [2, 2, -2, -2, 3, 0, 0, -1]
    kernel = compile_ir_text(ROUNDED_DIVISIONS, "rounded.ttgir", "cuda:sm_90a", OPTIONS, True)
    out = torch.zeros(384, dtype=torch.int32, device="cuda")
    kernel[(1,)](torch.from_numpy(a).cuda(), torch.from_numpy(d).cuda(), out)
    torch.cuda.synchronize()
    for got, expected in zip(np.split(out.cpu().numpy(), 3), rounded_reference(a, d)):
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("n", [0, 3])
def test_tokens_through_a_branch_and_a_loop(n):
    kernel = compile_ir_text(TOKENS, "tokens.ttgir", "cuda:sm_90a", OPTIONS, True)
    x = torch.randn(128, device="cuda")
    out = torch.full_like(x, float("nan"))
    kernel[(1,)](x, out, n)
    torch.cuda.synchronize()
    assert torch.equal(out, x)
