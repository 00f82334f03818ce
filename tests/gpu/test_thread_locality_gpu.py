"""On the GPU: a reduction a loop accumulates, reduced within threads in the loop and across
them after it (tritongpu-optimize-thread-locality), gives the values NumPy gives in float64:
max and min exactly, sums within the reductions' norm-wise bound, integer sums exactly. The
compile-side checks (two `tt.reduce`, no shuffle in the loop): tests/backends/nvidia/
test_thread_locality.py."""

import numpy as np
import pytest
import torch
from fixture_kernels.loop_reductions import OPS, loop_row_reduce_kernel, reference
from gpu_helpers import compiled  # noqa: F401  (the fixture: launches compile for the GPU)

pytestmark = pytest.mark.gpu

SHAPES = [(32, 32, 4), (32, 128, 4), (4, 1024, 4), (8, 512, 8), (64, 64, 8)]


def _launch(x: np.ndarray, y: np.ndarray, op: str, block_m: int, block_n: int, warps: int):
    rows, n = x.shape
    out = torch.from_numpy(y.copy()).cuda()
    grid = (rows // block_m,)
    kernel = loop_row_reduce_kernel[grid]
    launched = kernel(torch.from_numpy(x).cuda(), out, n, op, block_m, block_n, num_warps=warps)
    assert launched.asm["ttgir"].count('"tt.reduce"') == 2
    return out.cpu().numpy()


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("op", OPS)
def test_loop_reductions_give_numpys_values(op, shape):
    block_m, block_n, warps = shape
    rng = np.random.default_rng(block_m * block_n + warps)
    x = rng.standard_normal((4 * block_m, 4096)).astype(np.float32)
    y = rng.standard_normal(4 * block_m).astype(np.float32)
    got = _launch(x, y, op, block_m, block_n, warps)
    want = reference(x, y, op)
    if op == "sum":
        bound = 8 * np.finfo(np.float32).eps * np.sqrt(4096) * np.abs(x).sum(axis=1)
        assert np.all(np.abs(got - want) <= bound)
    else:
        assert np.array_equal(got, want.astype(np.float32))


def test_integer_loop_sums_are_exact():
    rng = np.random.default_rng(5)
    x = rng.integers(-(2**20), 2**20, (16, 4096)).astype(np.int32)
    y = rng.integers(-(2**20), 2**20, 16).astype(np.int32)
    got = _launch(x, y, "sum", 4, 1024, 4)
    assert np.array_equal(got, reference(x, y, "sum").astype(np.int32))
