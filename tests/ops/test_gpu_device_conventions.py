"""What torch's CUDA kernels hand back that its CPU kernels do not, under the switch on a GPU
(`-m gpu`): the statistics layer_norm and batch_norm save in fp32 for half inputs, batch_norm's
running statistics in inference; and fill_ of a float64 tensor, whose only operand is a number
(its kernel ran where no tensor said, the CPU). Found by a sweep of torch's OpInfo samples on an
H200."""

import pytest
import torch
import torch.nn.functional as F
from ops_helpers import assert_matches

import naiad.ops as ops

pytestmark = pytest.mark.gpu


@pytest.fixture
def on_gpu():
    from naiad import knobs

    with knobs.override(NAIAD_BACKEND="auto"):
        yield


def _both(fn):
    """fn's results from torch's kernels, then from Naiad's."""
    expected = fn()
    with ops.use():
        return expected, fn()


def test_fill_of_float64_runs_on_the_tensors_device(on_gpu):
    x = torch.randn(7, device="cuda")
    calls = [
        lambda: torch.full_like(x, -0.6046891126565539, dtype=torch.float64),
        lambda: x.new_ones(10, dtype=torch.float64),
        lambda: torch.empty(5, dtype=torch.float64, device="cuda").fill_(1 / 3),
    ]
    for fn in calls:
        expected, actual = _both(fn)
        assert actual.device == expected.device and torch.equal(actual, expected)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_layer_norm_saves_fp32_statistics_for_half_inputs(dtype, on_gpu):
    x, w, b = (torch.randn(s, device="cuda").to(dtype) for s in ((6, 40), (40,), (40,)))
    expected, actual = _both(lambda: torch.native_layer_norm(x, [40], w, b, 1e-5))
    for a, e in zip(actual, expected, strict=True):
        assert a.dtype == e.dtype and a.shape == e.shape
        assert_matches(a, e, 4)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_batch_norm_saves_statistics_as_torchs_gpu_kernel(training, dtype, on_gpu):
    x = torch.randn(3, 4, 5, device="cuda").to(dtype)
    w, b = torch.randn(4, device="cuda").to(dtype), torch.randn(4, device="cuda").to(dtype)
    running = [torch.randn(4, device="cuda").to(dtype), torch.rand(4, device="cuda").to(dtype)]
    copies = [[t.clone() for t in running] for _ in range(2)]
    expected = torch.native_batch_norm(x, w, b, *copies[0], training, 0.1, 1e-5)
    with ops.use():
        actual = torch.native_batch_norm(x, w, b, *copies[1], training, 0.1, 1e-5)
    for a, e in zip(actual, expected, strict=True):
        assert a.dtype == e.dtype and a.shape == e.shape
        assert_matches(a, e, 4)
    for a, e in zip(copies[1], copies[0], strict=True):
        assert_matches(a, e, 4)
    grad = torch.randn_like(x)
    leaf = x.clone().requires_grad_()
    with ops.use():
        (dx,) = torch.autograd.grad(F.batch_norm(leaf, *copies[1], w, b, training), leaf, grad)
    (expected_dx,) = torch.autograd.grad(F.batch_norm(leaf, *copies[0], w, b, training), leaf, grad)
    assert_matches(dx, expected_dx, 8)
