"""On the GPU (sm_90): kernels split by Triton's multi-partition `ttg.warp_specialize`, compiled
from hand-written TTIR and TTGIR files (fixture_kernels/warp_partitions.py) and launched as
Triton launches them: each region's stores and reductions give NumPy's values, several grids
and fresh random inputs. The CPU checks of their PTX: tests/backends/nvidia/test_warp_partitions.py.

Run on the GPU machine: `scripts/gpu-check OUTDIR` (or `python3 -m pytest tests/gpu -m gpu`).
"""

import numpy as np
import pytest
import torch
from fixture_kernels.warp_partitions import REGION_WARPS, SCALARS, reductions

from naiad.triton.backends.compiler import GPUTarget
from naiad.triton.compiler import compile

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _hopper():
    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("warp specialization is lowered for sm_90a")


def _compiled(text: str, suffix: str, tmp_path):
    path = tmp_path / f"kernel{suffix}"
    path.write_text(text)
    return compile(str(path), target=GPUTarget("cuda", 90, 32))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_scalar_partitions_store_their_values(seed, tmp_path):
    kernel = _compiled(SCALARS, ".ttir", tmp_path)
    base = int(np.random.default_rng(seed).integers(-30000, 30000))
    out = torch.full((3,), -1, dtype=torch.int32, device="cuda")
    kernel[(1, 1, 1)](out, base)
    torch.cuda.synchronize()
    assert out.tolist() == [base + 7, base * base, base]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_region_reduces_its_quarter(seed, tmp_path):
    kernel = _compiled(reductions(), ".ttgir", tmp_path)
    values = np.random.default_rng(seed).integers(-(2**20), 2**20, 1024, dtype=np.int32)
    x = torch.from_numpy(values).cuda()
    out = torch.full((len(REGION_WARPS),), -1, dtype=torch.int32, device="cuda")
    for _ in range(3):  # launched again: the barriers and scratch start clean each time
        kernel[(1, 1, 1)](x, out)
    torch.cuda.synchronize()
    quarters = values.reshape(4, 256).astype(np.int64)
    expected = [quarters[r].max() if r % 2 else quarters[r].sum() for r in range(4)]
    assert out.tolist() == expected
