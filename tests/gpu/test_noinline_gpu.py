"""On the GPU: a kernel calling `noinline` functions with scalars (inlined by the NVIDIA back
end, tests/backends/nvidia/test_noinline_calls.py) gives the expected values, both branches."""

import numpy as np
import pytest
import torch
from fixture_kernels.noinline_calls import expected, noinline_scalars_kernel
from gpu_helpers import compiled  # noqa: F401  (the fixture: launches compile for the GPU)

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("x, y", [(1.5, -2.25), (-3.0, 0.75)])
def test_noinline_calls_give_the_expected_values(x, y):
    z = torch.full((1,), float("nan"), device="cuda")
    xs = torch.tensor([x], device="cuda")
    ys = torch.tensor([y], device="cuda")
    launched = noinline_scalars_kernel[(1,)](xs, ys, z, num_warps=1)
    assert "tt.call" in launched.asm["ttir"] and "tt.call" not in launched.asm["ttgir"]
    assert z.item() == np.float32(expected(x, y))
