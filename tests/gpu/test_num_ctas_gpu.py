"""On the GPU: a launch with `num_ctas > 1` gives the values of `num_ctas=1` on Hopper (each
program on one CTA: tests/backends/nvidia/test_arch_and_ctas.py) and is refused below sm_90;
`warmup(arch=...)` compiles for an older architecture than the device's."""

import pytest
import torch
from gpu_helpers import compiled  # noqa: F401  (the fixture: launches compile for the GPU)

import naiad
import naiad.language as tl

pytestmark = pytest.mark.gpu


@naiad.jit
def _scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 1.5 + 1.0, mask=mask)


@pytest.mark.parametrize("num_ctas", [2, 4])
def test_num_ctas_gives_the_values_of_one_cta(num_ctas):
    x = torch.randn(10_000, device="cuda")
    y = torch.full_like(x, float("nan"))
    if torch.cuda.get_device_capability()[0] < 9:
        with pytest.raises(ValueError, match="num_ctas > 1 requires"):
            _scale[(79,)](x, y, x.numel(), BLOCK=128, num_ctas=num_ctas)
        return
    _scale[(79,)](x, y, x.numel(), BLOCK=128, num_ctas=num_ctas)
    one = torch.full_like(x, float("nan"))
    _scale[(79,)](x, one, x.numel(), BLOCK=128, num_ctas=1)
    torch.testing.assert_close(y, one, rtol=0, atol=0)  # bit for bit: one multiply-add each
    torch.testing.assert_close(y, x * 1.5 + 1.0)


def test_warmup_arch_compiles_for_sm80():
    x = torch.randn(128, device="cuda")
    kernel = _scale.warmup(x, x, 128, BLOCK=128, grid=(1,), arch="sm80")
    assert kernel.metadata.target == "cuda:sm_80"
