"""The autograd formulas of arith_, statistic_ and index_derivatives.py: each op's direct call
recording a gradient differentiates through its custom op and gives float64 torch's gradient of
the same op (random inputs away from zero; prod and cumprod with zeros as their own cases, one
and two zeros in a row as ATen's zero-safe path handles them). The full tier compiles them
(fullgraph, aot_eager) as one graph and checks values and gradients likewise."""

import math
import types
from functools import partial

import pytest
import torch
from ops_helpers import assert_matches, make

import naiad.ops as ops

_TORCH = types.SimpleNamespace(
    **{name: getattr(torch, name) for name in dir(torch) if not name.startswith("_")}
)
_TORCH.norm = torch.linalg.vector_norm
_TORCH.repeat = lambda x, repeats: x.repeat(repeats)

_INDEX = torch.tensor([[1, 4, 0], [5, 2, 3], [0, 1, 2], [3, 5, 4]])  # distinct in each row
_ROWS = torch.tensor([2, 0, 3, 2, 1])


def _with_zeros(x, zeros):
    """x with zeros at `zeros`, through a mask (the gradient still reaches every element)."""
    mask = torch.ones(x.shape, dtype=torch.bool)
    for at in zeros:
        mask[at] = False
    return x * mask


_CASES = {
    "pow_scalar_base": lambda m, x, y: m.pow(2.5, x) + m.pow(0.0, m.abs(x)),
    "pow_tensors": lambda m, x, y: m.pow(m.add(m.abs(x), 0.5), y),
    "clamp_tensor_bounds": lambda m, x, y: m.clamp_min(x, m.mul(y, 0.5)) + m.clamp_max(x, y),
    "fmod": lambda m, x, y: m.fmod(m.mul(x, 3.0), m.add(m.abs(y), 0.5)) + m.fmod(x, 0.7),
    "remainder": lambda m, x, y: (
        m.remainder(m.mul(x, 3.0), m.add(m.abs(y), 0.5)) + m.remainder(x, -0.7)
    ),
    "prod": lambda m, x, y: m.prod(x, 1) + m.prod(x, 0, keepdim=True).sum() + m.prod(y),
    "prod_zeros": lambda m, x, y: (
        m.prod(_with_zeros(x, [(1, 2), (3, 0), (3, 4)]), 1) + m.prod(_with_zeros(y, [(2,)]))
    ),
    "cumprod": lambda m, x, y: m.cumprod(x, 1) + m.cumprod(x, 0) + m.cumprod(y, 0),
    "cumprod_zeros": lambda m, x, y: (
        m.cumprod(_with_zeros(x, [(1, 2), (3, 0), (3, 4)]), 1)
        + m.cumprod(_with_zeros(x, [(3, 1), (0, 5), (2, 5)]), 0)  # last, first and third
    ),
    "var_mean": lambda m, x, y: torch.stack(m.var_mean(x, 1)) + m.var_mean(y, correction=0)[1],
    "std_mean": lambda m, x, y: torch.stack(m.std_mean(x, 0, keepdim=True)).sum(1),
    "norms": lambda m, x, y: (
        torch.stack([m.norm(x, order, 1) for order in (math.inf, -math.inf, 0, 3, 0.5, 1.5)])
        + m.norm(y, math.inf)
    ),
    "scatter": lambda m, x, y: (
        m.scatter(x, 1, _INDEX, m.mul(x[:, :3], y[:3])) + m.scatter(x, 1, _INDEX, 2.0)
    ),
    "scatter_add": lambda m, x, y: m.scatter_add(x, 1, _INDEX % 2, m.mul(x[:, 3:], y[:3])),
    "index_add": lambda m, x, y: (
        m.index_add(x, 0, _ROWS[:3], m.mul(x[1:], y), alpha=2.0)
        + m.index_add(x, 1, _ROWS, x[:, :5])
    ),
    "take_along_dim": lambda m, x, y: torch.cat(
        [
            m.take_along_dim(x, _INDEX, 1).reshape(-1),
            m.take_along_dim(x[:1], _INDEX, 1).reshape(-1),  # x broadcast: its row added up
            m.take_along_dim(x, _INDEX[:1], -1).reshape(-1),  # the indices broadcast
            m.take_along_dim(x, _ROWS[:3, None], 0).reshape(-1),
            m.take_along_dim(y, _INDEX),  # no dim: the flattened operand, repeated indices
        ]
    ),
    "flip_triangles": lambda m, x, y: m.flip(x, [0, 1]) + m.triu(x, 1) + m.tril(x, -1),
    "repeat": lambda m, x, y: m.repeat(x, [2, 1, 3]).sum(0)[:, 5:11] + m.repeat(y, [4, 6])[:, ::6],
    "sort_topk": lambda m, x, y: (
        m.sort(x, dim=1, descending=True)[0]
        + m.sort(x, dim=0, stable=True)[0] * y
        + m.topk(x, 6, 1, largest=False)[0]
    ),
}


def _gradients(naiad_f, torch_f, x, y, gen):
    """(naiad's value and gradients of x, y; float64 torch's) of the output times random
    weights, summed."""
    x64, y64 = (t.detach().double().requires_grad_() for t in (x, y))
    expected = torch_f(x64, y64)
    weights = make(expected.shape, torch.float64, gen, 0.5, 1.5)
    loss = (expected * weights).sum()
    expected_grads = torch.autograd.grad(loss, (x64, y64), allow_unused=True)
    actual = naiad_f(x, y)
    loss = (actual.double() * weights).sum()
    grads = torch.autograd.grad(loss, (x, y), allow_unused=True)
    return (actual, grads), (expected, expected_grads)


def _inputs(gen):
    x = make((4, 6), torch.float32, gen, 0.4, 1.6).requires_grad_()
    y = make((6,), torch.float32, gen, -1.5, 1.5, nonzero=True).requires_grad_()
    signs = torch.tensor([1.0, -1.0, 1.0, 1.0, -1.0, 1.0])
    return (x * signs).detach().requires_grad_(), y


def _check(actual, expected):
    (values, grads), (expected_values, expected_grads) = actual, expected
    assert_matches(values, expected_values.float(), scale=4)
    for a, e in zip(grads, expected_grads, strict=True):
        assert (a is None) == (e is None)
        if e is not None:
            assert_matches(a, e.float(), scale=4)


@pytest.mark.parametrize("case", sorted(_CASES))
def test_direct_calls_give_torchs_gradients(case, gen, interpreted):
    f = _CASES[case]
    actual, expected = _gradients(partial(f, ops), partial(f, _TORCH), *_inputs(gen), gen)
    assert actual[0].grad_fn is not None
    _check(actual, expected)


@pytest.mark.full
@pytest.mark.parametrize("case", sorted(_CASES))
def test_compiled_calls_give_torchs_gradients(case, gen):
    f = _CASES[case]
    torch._dynamo.reset()
    compiled = torch.compile(partial(f, ops), fullgraph=True, backend="aot_eager")
    _check(*_gradients(compiled, partial(f, _TORCH), *_inputs(gen), gen))
