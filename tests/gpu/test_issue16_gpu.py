"""Issue 16's GPU half: pointers made from integers (tutorial 08's grouped GEMM over a table of
CUDA `data_ptr()`s) and `tl.dot_scaled` (upcast to bf16 tensor-core dots), run on the GPU
against float64 references.

Run on the GPU machine: `scripts/gpu-check OUTDIR` (or `python3 -m pytest tests/gpu -m gpu`).
"""

import ml_dtypes
import numpy as np
import pytest
import torch
from gpu_helpers import ROOT, compiled, load_module  # noqa: F401 (compiled: autouse fixture)

pytestmark = pytest.mark.gpu

pointers = load_module("gpu_pointer_kernels", ROOT / "tests" / "fixture_kernels" / "pointers.py")
scaled = load_module("gpu_scaled_kernels", ROOT / "tests" / "fixture_kernels" / "dot_scaled.py")


def test_a_grouped_matmul_over_a_table_of_device_addresses():
    gen = torch.Generator(device="cuda").manual_seed(16)
    shapes = [(128, 128, 64), (64, 192, 128), (192, 64, 64)]
    a = [torch.randn(m, k, device="cuda", generator=gen).half() for m, n, k in shapes]
    b = [torch.randn(k, n, device="cuda", generator=gen).half() for m, n, k in shapes]
    c = [torch.full((m, n), float("nan"), device="cuda") for m, n, k in shapes]

    def table(ts):
        return torch.tensor([t.data_ptr() for t in ts], device="cuda", dtype=torch.int64)

    sizes = torch.tensor([v for s in shapes for v in s], device="cuda", dtype=torch.int32)
    lds = [v for x, y, z in zip(a, b, c) for v in (x.stride(0), y.stride(0), z.stride(0))]
    lds = torch.tensor(lds, device="cuda", dtype=torch.int32)
    pointers.grouped_matmul[(8,)](
        table(a), table(b), table(c), sizes, lds, len(shapes), NUM_SM=8, BM=64, BN=64, BK=32
    )
    torch.cuda.synchronize()
    for x, y, z in zip(a, b, c):
        want = x.double() @ y.double()
        assert torch.allclose(z.double(), want, rtol=1e-3, atol=1e-3)


FP4 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])


@pytest.mark.parametrize("formats", [("e2m1", "e4m3"), ("e5m2", "e2m1"), ("e4m3", "e4m3")])
def test_dot_scaled_on_the_gpu(formats):
    a_format, b_format = formats
    rng = np.random.default_rng(5)
    m, n, k = 64, 64, 128

    def operand(fmt, shape, axis):
        if fmt == "e2m1":
            packed = list(shape)
            packed[axis] //= 2
            bits = rng.integers(0, 256, packed, dtype=np.uint8)
            values = np.stack([FP4[bits & 15], FP4[bits >> 4]], axis=axis + 1).reshape(shape)
            return bits, values
        dtype = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}[fmt]
        values = rng.uniform(-4, 4, shape).astype(dtype)
        return values.view(np.uint8), values.astype(np.float64)

    a, av = operand(a_format, (m, k), 1)
    b, bv = operand(b_format, (k, n), 0)
    sa = rng.integers(120, 134, (m, k // 32), dtype=np.uint8)
    sb = rng.integers(120, 134, (n, k // 32), dtype=np.uint8)
    want = (av * np.repeat(2.0 ** (sa - 127.0), 32, axis=1)) @ (
        bv * np.repeat(2.0 ** (sb - 127.0), 32, axis=1).T
    )
    out = torch.full((m, n), float("nan"), device="cuda")
    cuda = [torch.from_numpy(x).cuda() for x in (a, sa, b, sb)]
    scaled.scaled_matmul[(1,)](
        cuda[0], cuda[1], cuda[2], cuda[3], out, out, M=m, N=n, K=k, A_FORMAT=a_format,
        B_FORMAT=b_format, A_K_PACK=True, B_K_PACK=True, SCALED=True, WITH_ACC=False,
    )  # fmt: skip
    got = out.cpu().double().numpy()
    assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max()
