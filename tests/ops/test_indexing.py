"""Indexing and data movement of naiad.ops against torch (exact): index_select along each dim
with negative indices, gather and take_along_dim, cat (mixed dtypes, empty inputs, strided
inputs) and stack; through the switch with autograd."""

import pytest
import torch
from ops_helpers import assert_matches, make

import naiad.ops as ops


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_select(dim, gen, backend):
    x = make((4, 5, 6), torch.float32, gen)
    index = torch.tensor([3, 0, -1, 2])
    expected = torch.index_select(x, dim, index % x.shape[dim])
    assert_matches(ops.index_select(x, dim, index), expected)
    with pytest.raises(IndexError):
        ops.index_select(x, dim, torch.tensor([9]))


def test_gather_and_take_along_dim(gen, backend):
    x = make((4, 5, 6), torch.float32, gen)
    index = torch.randint(0, 5, (3, 4, 6), generator=gen)
    assert_matches(ops.gather(x, 1, index), torch.gather(x, 1, index))
    index = torch.randint(0, 6, (2, 3, 3), generator=gen)
    assert_matches(
        ops.gather(x.transpose(0, 1), 2, index), torch.gather(x.transpose(0, 1), 2, index)
    )
    indices = torch.randint(0, 5, (4, 2, 1), generator=gen)
    assert_matches(ops.take_along_dim(x, indices, 1), torch.take_along_dim(x, indices, 1))


def test_cat_and_stack(gen, backend):
    a, b = make((2, 3), torch.float32, gen), make((4, 3), torch.float16, gen)
    assert_matches(ops.cat([a, b], 0), torch.cat([a, b], 0))
    c = make((3, 2), torch.float32, gen).t()
    assert_matches(ops.cat([a, c, a], 1), torch.cat([a, c, a], 1))
    assert_matches(ops.cat([torch.empty(0), a], 0), torch.cat([torch.empty(0), a], 0))
    assert_matches(ops.stack([a, a * 2], 1), torch.stack([a, a * 2], 1))


def test_indexing_through_the_switch(gen, interpreted):
    x = make((3, 4), torch.float32, gen).requires_grad_()
    index = torch.tensor([[0, 3]] * 6)

    def step():
        y = torch.cat([x, x * 2], 0).gather(1, index).index_select(0, torch.tensor([5, 0]))
        return [y, *torch.autograd.grad(y.sum(), x)]

    expected = step()
    with ops.use():
        actual = step()
    for a, e in zip(actual, expected, strict=True):
        assert_matches(a, e)


@pytest.mark.parametrize("diagonal", [0, 2, -1])
def test_triu_tril(diagonal, gen, backend):
    x = make((2, 5, 7), torch.float32, gen)
    assert_matches(ops.triu(x, diagonal), torch.triu(x, diagonal))
    assert_matches(ops.tril(x.transpose(1, 2), diagonal), torch.tril(x.transpose(1, 2), diagonal))
    mask = torch.ones(4, 4, dtype=torch.bool)
    assert_matches(ops.triu(mask, 1), torch.triu(mask, 1))
