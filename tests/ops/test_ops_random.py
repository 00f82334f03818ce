"""The random ops of naiad.ops: distributions checked statistically (mean, variance, a
Kolmogorov-Smirnov distance against the exact distribution function), seeds deterministically
(one seed, one result; torch.manual_seed decides), and dropout's forward and backward."""

import math

import pytest
import torch
import torch.nn.functional as F

import naiad.ops as ops

N = 32_768
# The Kolmogorov-Smirnov distance of N samples exceeds 1.95 / sqrt(N) with probability 0.001.
KS_BOUND = 1.95 / math.sqrt(N)


def _ks_distance(samples, cdf):
    ordered = samples.double().sort().values
    empirical = torch.arange(1, ordered.numel() + 1, dtype=torch.float64) / ordered.numel()
    return (empirical - cdf(ordered)).abs().max().item()


def test_uniform_and_normal(interpreted):
    torch.manual_seed(1)
    u = ops.rand(N)
    assert u.min() >= 0 and u.max() < 1
    assert _ks_distance(u, lambda t: t) < KS_BOUND
    z = ops.randn(N)
    normal_cdf = lambda t: 0.5 * (1 + torch.erf(t / math.sqrt(2)))
    assert _ks_distance(z, normal_cdf) < KS_BOUND
    x = ops.normal_(torch.empty(N // 2, 2)[:, 0], mean=3.0, std=0.5)  # strided target
    assert abs(x.mean().item() - 3.0) < 5 * 0.5 / math.sqrt(N / 2)
    assert abs(x.std().item() - 0.5) < 0.01
    y = ops.uniform_(torch.empty(N, dtype=torch.bfloat16), -2.0, 6.0)
    assert y.dtype == torch.bfloat16 and y.min() >= -2 and y.max() <= 6
    assert abs(y.float().mean().item() - 2.0) < 0.05


def test_seeds_decide(interpreted):
    torch.manual_seed(7)
    first = ops.rand(3, 1000)
    torch.manual_seed(7)
    assert torch.equal(ops.rand(3, 1000), first)
    assert not torch.equal(ops.rand(3, 1000), first)  # the generator moved on
    gen = torch.Generator().manual_seed(7)
    again = ops.randn(500, generator=gen)
    assert torch.equal(ops.randn(500, generator=torch.Generator().manual_seed(7)), again)


def test_bernoulli(gen, interpreted):
    torch.manual_seed(3)
    p = torch.rand(4, N // 4, generator=gen)
    draws = ops.bernoulli(p)
    assert set(draws.unique().tolist()) <= {0.0, 1.0}
    # Each draw is 1 with probability p: the sum's deviation is a few standard deviations.
    spread = (p * (1 - p)).sum().sqrt().item()
    assert abs(draws.sum().item() - p.sum().item()) < 5 * spread
    half = ops.bernoulli(torch.full((N,), 0.25))
    assert abs(half.mean().item() - 0.25) < 5 * math.sqrt(0.25 * 0.75 / N)
    for bad in (torch.tensor([0.5, 1.5]), torch.tensor([-0.1]), torch.tensor([math.nan])):
        with pytest.raises(RuntimeError, match="must lie in"):
            ops.bernoulli(bad)
    with ops.use(), pytest.raises(RuntimeError, match="expects p to be in"):
        torch.empty(4).bernoulli_(1.25)


def test_dropout(gen, interpreted):
    torch.manual_seed(5)
    x = (torch.rand(N // 64, 64, generator=gen) + 0.5).requires_grad_()
    y = ops.dropout(x, 0.3)
    kept = y != 0
    assert abs(kept.float().mean().item() - 0.7) < 5 * math.sqrt(0.21 / N)
    assert torch.allclose(y[kept], x[kept] / 0.7)
    (grad,) = torch.autograd.grad(y, x, torch.ones_like(y))
    assert torch.allclose(grad, kept.float() / 0.7)
    assert ops.dropout(x, 0.3, training=False) is x


def test_random_through_the_switch(interpreted):
    with ops.use(include=["uniform", "normal", "native_dropout", "bernoulli"]):
        torch.manual_seed(11)
        first = [torch.rand(1000), torch.randn(1000), F.dropout(torch.ones(1000), 0.5)]
        torch.manual_seed(11)
        second = [torch.rand(1000), torch.randn(1000), F.dropout(torch.ones(1000), 0.5)]
    torch.manual_seed(11)
    ours = ops.rand(1000)
    for a, b in zip(first, second, strict=True):
        assert torch.equal(a, b)
    assert torch.equal(first[0], ours)  # torch.rand went through Naiad's uniform_
    assert set(first[2].unique().tolist()) == {0.0, 2.0}


@pytest.mark.full
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_random_dtypes_compiled(dtype, compiled):
    torch.manual_seed(2)
    u = ops.uniform_(torch.empty(N, dtype=dtype))
    assert _ks_distance(u.float(), lambda t: t) < KS_BOUND + 2e-3  # rounding to dtype
    z = ops.normal_(torch.empty(N, dtype=dtype))
    assert abs(z.float().mean().item()) < 0.02 and abs(z.float().std().item() - 1) < 0.02
