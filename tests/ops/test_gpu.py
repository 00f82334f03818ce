"""naiad.ops on CUDA tensors (`-m gpu`, skipped without a GPU): the same kernels compiled for
the GPU, against torch on float64 copies, and the Llama-style model's step through the switch."""

import pytest
import torch
import torch.nn.functional as F
from ops_helpers import assert_matches, reference
from tiny_llama import TinyLlama

import naiad.ops as ops

pytestmark = pytest.mark.gpu


def _cuda(*shape, dtype=torch.float32):
    return torch.randn(*shape, device="cuda").to(dtype)


@pytest.fixture
def on_gpu():
    from naiad import knobs

    with knobs.override(NAIAD_BACKEND="auto"):  # compiled for the tensors' device
        yield


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_pointwise_and_reductions_on_cuda(dtype, on_gpu):
    x, y = _cuda(33, 70, dtype=dtype), _cuda(70, dtype=dtype)
    assert_matches(ops.add(x, y), reference(torch.add, x, y))
    assert_matches(ops.mul(x.t(), 2.5), reference(torch.mul, x.t(), 2.5))
    assert_matches(ops.gelu(x), reference(F.gelu, x), 2)
    assert_matches(ops.where(x > 0, x, y), reference(torch.where, x > 0, x, y))
    assert_matches(ops.sum(x, 1), reference(torch.sum, x, 1), 4)
    assert_matches(ops.sum(x, 0), reference(torch.sum, x, 0), 4)
    assert_matches(ops.amax(x, 1), torch.amax(x, 1))
    assert_matches(ops.argmax(x, 1), torch.argmax(x, 1))
    assert_matches(ops.var(x, 1), reference(torch.var, x, 1), 4)
    assert_matches(ops.cumsum(x, 1), reference(torch.cumsum, x, 1), 8)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_norms_and_products_on_cuda(dtype, on_gpu):
    x, w, b = _cuda(16, 300, dtype=dtype), _cuda(300, dtype=dtype), _cuda(300, dtype=dtype)
    assert_matches(ops.softmax(x, 1), reference(torch.softmax, x, 1), 4)
    assert_matches(ops.log_softmax(x, 1), reference(torch.log_softmax, x, 1), 4, normwise=True)
    expected = reference(F.layer_norm, x, (300,), w, b)
    assert_matches(ops.layer_norm(x, 300, w, b), expected, 8, normwise=True)
    a, m = _cuda(70, 300, dtype=dtype), _cuda(300, 50, dtype=dtype)
    expected = (a.double() @ m.double()).to(dtype)
    assert_matches(ops.mm(a, m), expected, 4 * 300**0.5, normwise=True)


def test_llama_style_model_on_cuda(on_gpu):
    torch.manual_seed(0)
    model = TinyLlama().cuda()
    tokens = torch.randint(0, 64, (2, 8), device="cuda")
    labels = torch.randint(0, 64, (2, 8), device="cuda")

    def step():
        logits, loss = model(tokens, labels)
        return [logits, loss, *torch.autograd.grad(loss, list(model.parameters()))]

    torch.backends.cuda.matmul.allow_tf32 = False
    expected = step()
    with ops.use():
        actual = step()
    for a, e in zip(actual, expected, strict=True):
        torch.testing.assert_close(a, e, rtol=1e-3, atol=1e-4)
