"""`tl.range(..., warp_specialize=True)` changes no value: the matmuls whose loops ask for it
(fixture_kernels/warp_specialized.py) against float64, on every executor here (the NVIDIA back
end splits their warps, tests/backends/nvidia/test_warp_specialize.py; the GPU runs them in
tests/gpu/test_warp_specialize_gpu.py). Shapes with ragged edges: the descriptors' copies
zero-fill past them and never write there."""

import numpy as np
import pytest
from fixture_kernels.warp_specialized import k_loop, persistent_tiles, pointer_k_loop, two_k_loops
from memory_helpers import poisoned, random_array, rng

from naiad.tools.tensor_descriptor import TensorDescriptor

SHAPES = [(40, 48, 56), (64, 32, 16), (16, 16, 8)]  # M, N, K: edges, whole blocks, one K step


def _operands(m, n, k, seed):
    gen = rng(seed)
    return random_array((m, k), np.float16, gen), random_array((k, n), np.float16, gen)


def _expected(a, b):
    return a.astype(np.float64) @ b.astype(np.float64)


@pytest.mark.parametrize("subtile", [False, True])
@pytest.mark.parametrize("m, n, k", SHAPES)
def test_a_persistent_tile_loop(m, n, k, subtile):
    a, b = _operands(m, n, k, 51)
    c = poisoned((m, n), np.float16)
    persistent_tiles[(3,)](a, np.ascontiguousarray(b.T), c, m, n, k, PROGRAMS=3, BLOCK_M=16,
                           BLOCK_N=16, BLOCK_K=16, SUBTILE=subtile)  # fmt: skip
    np.testing.assert_allclose(c.astype(np.float64), _expected(a, b), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("m, n, k", SHAPES)
def test_a_k_loop_over_host_descriptors(m, n, k):
    a, b = _operands(m, n, k, 52)
    c = poisoned((m, n), np.float16)
    descriptors = [TensorDescriptor.from_tensor(x, [16, 16]) for x in (a, b, c)]
    k_loop[(-(-m // 16), -(-n // 16))](*descriptors, k, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)
    np.testing.assert_allclose(c.astype(np.float64), _expected(a, b), rtol=2e-2, atol=2e-2)


def test_a_k_loop_through_pointers():
    m, n, k = SHAPES[0]
    a, b = _operands(m, n, k, 53)
    c = poisoned((m, n), np.float16)
    pointer_k_loop[(3, 3)](a, b, c, m, n, k, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)
    np.testing.assert_allclose(c.astype(np.float64), _expected(a, b), rtol=2e-2, atol=2e-2)


def test_two_marked_k_loops():
    m, n, k = SHAPES[0]
    a, b = _operands(m, n, k, 54)
    c, d = poisoned((m, n), np.float16), poisoned((m, n), np.float16)
    descriptors = [TensorDescriptor.from_tensor(x, [16, 16]) for x in (a, b, c, d)]
    two_k_loops[(-(-m // 16), -(-n // 16))](*descriptors, k, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)
    for out in (c, d):
        np.testing.assert_allclose(out.astype(np.float64), _expected(a, b), rtol=2e-2, atol=2e-2)
