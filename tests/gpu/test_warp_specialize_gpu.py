"""On the GPU (sm_90): warp-specialized matmuls (a producer warpgroup issuing the tensor copies,
the kernel's warps running the dots, passes/warp_specialize.py) give torch's values: a
persistent tile loop of 4 warps, and of 8 (not split, as Triton's Hopper rule) with its split
epilogue, a K loop over host descriptors; ragged edges, K shorter
than a block, more tiles than programs and fewer. (The rows of A, B and C are 16-byte
multiples, which a tensor map needs: other shapes read through pointers, unspecialized.) The
CPU checks of the same kernels: tests/backends/nvidia/test_warp_specialize.py."""

import pytest
import torch
from fixture_kernels.warp_specialized import k_loop, persistent_tiles, two_k_loops
from gpu_helpers import compiled  # noqa: F401  (the fixture: launches compile for the GPU)

import naiad
from naiad.tools.tensor_descriptor import TensorDescriptor

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _hopper():
    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("warp specialization is lowered for sm_90a")
    naiad.set_allocator(
        lambda size, alignment, stream: torch.empty(size, dtype=torch.int8, device="cuda")
    )


def _operands(m, n, k, seed):
    generator = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn((m, k), device="cuda", generator=generator).to(torch.float16)
    b = torch.randn((k, n), device="cuda", generator=generator).to(torch.float16)
    return a, b


def _check(c, a, b):
    expected = a.double() @ b.double()
    torch.testing.assert_close(c.double(), expected, rtol=1e-2, atol=5e-2)


@pytest.mark.parametrize(
    "m, n, k, programs, num_warps, block_n, subtile",
    [
        (1024, 768, 512, 132, 4, 128, False),  # fewer tiles than programs
        (2048, 2048, 1024, 16, 4, 128, False),  # many tiles per program
        (1000, 784, 336, 7, 4, 128, False),  # ragged edges, K not a multiple of the block
        (1024, 1024, 48, 5, 4, 128, False),  # K shorter than one block
        (2048, 2048, 1024, 132, 8, 256, True),  # 8 warps: not split (Triton's rule)
    ],
)
def test_a_warp_specialized_persistent_matmul(m, n, k, programs, num_warps, block_n, subtile):
    a, b = _operands(m, n, k, m + n + k)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    launched = persistent_tiles[(programs,)](
        a, b.T.contiguous(), c, m, n, k, PROGRAMS=programs, BLOCK_M=128, BLOCK_N=block_n,
        BLOCK_K=64, SUBTILE=subtile, num_warps=num_warps, num_stages=3,
    )  # fmt: skip
    torch.cuda.synchronize()
    assert ("ttg.warp_specialize(" in launched.asm["ttgir"]) == (num_warps == 4)
    _check(c, a, b)


@pytest.mark.parametrize("m, n, k", [(512, 384, 256), (304, 208, 144)])
def test_a_warp_specialized_k_loop(m, n, k):
    a, b = _operands(m, n, k, 7)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    descriptors = [
        TensorDescriptor.from_tensor(x, block)
        for x, block in ((a, [128, 64]), (b, [64, 128]), (c, [128, 128]))
    ]
    grid = ((m + 127) // 128, (n + 127) // 128)
    launched = k_loop[grid](*descriptors, k, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_stages=4)
    torch.cuda.synchronize()
    assert "ttg.warp_specialize(" in launched.asm["ttgir"]
    _check(c, a, b)


def test_a_second_marked_loop_runs_in_the_consumers_region():
    """BLOCK_K 32: the producer's rings and the second loop's own pipeline are live together
    (at BLOCK_K 64 they need 262,240 bytes, past the 232,448 a block may have)."""
    m, n, k = 256, 256, 192
    a, b = _operands(m, n, k, 8)
    c, d = (torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16) for _ in "cd")
    descriptors = [
        TensorDescriptor.from_tensor(x, block)
        for x, block in ((a, [128, 32]), (b, [32, 128]), (c, [128, 128]), (d, [128, 128]))
    ]
    two_k_loops[(2, 2)](*descriptors, k, BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, num_stages=3)
    torch.cuda.synchronize()
    _check(c, a, b)
    _check(d, a, b)
