"""naiad.ops.multinomial: the frequencies of draws with replacement and the ordered pairs of draws
without, against the exact probabilities (within five standard deviations); categories of
weight 0 never drawn; one seed, one result, the same on the interpreter and compiled for the CPU;
torch's argument errors; torch.multinomial through the switch."""

import math

import pytest
import torch

import naiad.ops as ops


def _bound(p: torch.Tensor, n: int) -> torch.Tensor:
    """Five standard deviations of a frequency of probability p over n draws (at least one
    draw's worth)."""
    return 5 * (p * (1 - p) / n).sqrt() + 1 / n


def test_with_replacement_frequencies(gen, interpreted):
    weights = torch.rand(4, 12, generator=gen) + 0.05
    weights[1, 3] = 0
    weights[2, :6] = 0
    n = 20_000
    torch.manual_seed(1)
    drawn = ops.multinomial(weights, n, replacement=True)
    assert drawn.shape == (4, n) and drawn.dtype == torch.int64
    counts = torch.stack([torch.bincount(row, minlength=12) for row in drawn]).double()
    p = weights.double() / weights.double().sum(1, keepdim=True)
    assert ((counts / n - p).abs() <= _bound(p, n)).all()
    assert counts[1, 3] == 0 and counts[2, :6].sum() == 0


def test_without_replacement_pairs(gen, compiled):
    weights = torch.tensor([0.5, 0.25, 0.15, 0.1, 0.0])
    rows = 10_000
    torch.manual_seed(2)
    drawn = ops.multinomial(weights.expand(rows, 5), 2)
    assert (drawn[:, 0] != drawn[:, 1]).all() and (drawn != 4).all()
    pairs = torch.bincount(drawn[:, 0] * 5 + drawn[:, 1], minlength=25).double() / rows
    p = weights.double()
    exact = torch.zeros(25, dtype=torch.float64)  # first i, then j from what is left
    for i in range(4):
        for j in range(4):
            if i != j:
                exact[i * 5 + j] = p[i] * p[j] / (1 - p[i])
    assert ((pairs - exact).abs() <= _bound(exact, rows)).all()
    whole = ops.multinomial(weights[:4], 4)  # every positive category, each once
    assert sorted(whole.tolist()) == [0, 1, 2, 3]


@pytest.mark.parametrize("replacement", [True, False])
def test_same_seed_same_draws_on_both_executors(replacement, interpreted):
    # Integer weights: every cumulative sum is exact in either executor's order of additions.
    weights = torch.randint(0, 6, (3, 300), generator=torch.Generator().manual_seed(3)).float()
    torch.manual_seed(4)
    first = ops.multinomial(weights, 7, replacement)
    torch.manual_seed(4)
    assert torch.equal(ops.multinomial(weights, 7, replacement), first)
    assert not torch.equal(ops.multinomial(weights, 7, replacement), first)  # the generator moved
    from naiad import knobs

    with knobs.override(NAIAD_BACKEND="cpu"):
        torch.manual_seed(4)
        assert torch.equal(ops.multinomial(weights, 7, replacement), first)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_weight_dtypes_and_a_vector(dtype, interpreted):
    weights = torch.tensor([0.0, 3.0, 1.0, 0.0], dtype=dtype)
    torch.manual_seed(5)
    drawn = ops.multinomial(weights, 4000, True)
    assert drawn.shape == (4000,)
    share = (drawn == 1).double().mean().item()
    assert set(drawn.unique().tolist()) == {1, 2}
    assert abs(share - 0.75) < 5 * math.sqrt(0.75 * 0.25 / 4000)


@pytest.mark.parametrize(
    "weights, n, replacement, message",
    [
        (torch.rand(2, 2, 3), 1, True, "1 or 2 dim"),
        (torch.tensor([0.5, -0.1]), 1, True, "element < 0"),
        (torch.tensor([0.5, float("nan")]), 1, True, "nan"),
        (torch.tensor([[0.5, 0.5], [0.0, 0.0]]), 1, True, "sum of probabilities <= 0"),
        (torch.tensor([0.5, 0.5]), 3, False, "n_sample > prob_dist.size"),
        (torch.tensor([0.5, 0.0, 0.5]), 3, False, "not enough non-negative category"),
        (torch.tensor([0.5, 0.5]), 0, True, "n_sample <= 0"),
        (torch.tensor([1, 2]), 1, True, "floating-point"),
    ],
)
def test_torch_argument_errors(weights, n, replacement, message, interpreted):
    with pytest.raises(RuntimeError, match=message):
        ops.multinomial(weights, n, replacement)


def test_multinomial_through_the_switch(gen, interpreted):
    weights = torch.rand(3, 50, generator=gen)
    with ops.use(include=["multinomial"]):
        torch.manual_seed(6)
        switched = torch.multinomial(weights, 5)
    torch.manual_seed(6)
    assert torch.equal(switched, ops.multinomial(weights, 5))


@pytest.mark.gpu
@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial_on_cuda(replacement):
    """On a GPU (`-m gpu`): the draws of integer weights with replacement equal the CPU's for the
    same seed (Philox is one function on every target, the sums exact); without, the race's
    keys may differ in a logarithm's last bit, so nearly every draw is the CPU's."""
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    from naiad import knobs

    weights = torch.randint(0, 6, (3, 3000), generator=torch.Generator().manual_seed(8)).float()
    with knobs.override(NAIAD_BACKEND="auto"):
        torch.manual_seed(9)
        on_gpu = ops.multinomial(weights.cuda(), 200, replacement)
    torch.manual_seed(9)
    on_cpu = ops.multinomial(weights, 200, replacement)
    if replacement:
        assert torch.equal(on_gpu.cpu(), on_cpu)
        return
    for gpu_row, cpu_row, row in zip(on_gpu.cpu(), on_cpu, weights, strict=True):
        assert len(set(gpu_row.tolist())) == 200 and (row[gpu_row] > 0).all()
        assert len(set(gpu_row.tolist()) & set(cpu_row.tolist())) >= 190
