"""Results laid out as torch lays them out: an op along a dim that is not the last (softmax,
a scan, a sort) runs with that dim moved last, and hands back a contiguous result as torch
does, not a permuted view of its buffer. A caller may view the result (`.view(-1)`), and torch's
own kernels that follow may require it: nll_loss's backward over spatial dims refused the
permuted log_softmax ("grad_input must be contiguous")."""

import pytest
import torch
import torch.nn.functional as F
from ops_helpers import assert_matches, make

import naiad.ops as ops

CASES = {
    "softmax": lambda x: torch.softmax(x, 1),
    "log_softmax": lambda x: torch.log_softmax(x, 0),
    "cumsum": lambda x: torch.cumsum(x, 1),
    "cumprod": lambda x: torch.cumprod(x, 0),
    "sort": lambda x: torch.sort(x, 1),
    "topk": lambda x: torch.topk(x, 2, 0),
}


@pytest.mark.parametrize("name", list(CASES))
def test_results_along_a_middle_dim_are_contiguous_as_torchs(name, gen, backend):
    x = make((3, 4, 5), torch.float32, gen)
    expected = CASES[name](x)
    with ops.use():
        actual = CASES[name](x)
    for a, e in zip(
        torch.utils._pytree.tree_leaves(actual), torch.utils._pytree.tree_leaves(expected)
    ):
        assert a.stride() == e.stride()
        assert_matches(a, e, 4)
        a.view(-1)


def test_cross_entropy_over_spatial_dims_has_its_gradient(gen, interpreted):
    """(batch, classes, height, width) logits: log_softmax over dim 1, then torch's nll_loss2d,
    whose backward wants a contiguous gradient of its input."""
    logits = make((2, 3, 2, 2), torch.float32, gen).requires_grad_()
    target = torch.randint(0, 3, (2, 2, 2), generator=gen)
    expected = torch.autograd.grad(F.cross_entropy(logits, target), logits)
    with ops.use():
        actual = torch.autograd.grad(F.cross_entropy(logits, target), logits)
    assert_matches(actual[0], expected[0], 4)


def test_nonzero_lays_its_coordinates_out_a_dim_at_a_time_as_torch(gen, backend):
    """torch's nonzero hands back (count, rank) with strides (1, count), on the CPU and on a
    GPU, and torch's own code reads it by that layout: a sparse CSR product's gradient
    (sampled_addmm's) came out wrong from row-major coordinates."""
    x = make((5, 6, 3), torch.float32, gen) > 0.5
    expected = torch.nonzero(x)
    with ops.use():
        actual = torch.nonzero(x)
    assert torch.equal(actual, expected) and actual.stride() == expected.stride()


def test_cat_of_channels_last_images_stays_channels_last(gen, backend):
    """torch's cat keeps the format its inputs share (channels-last images joined along the
    channels stay channels-last), and is contiguous where they differ."""
    a = make((2, 3, 4, 5), torch.float32, gen).to(memory_format=torch.channels_last)
    b = make((2, 2, 4, 5), torch.float32, gen).to(memory_format=torch.channels_last)
    for tensors in ([a, b, a], [a, b.contiguous()]):
        expected = torch.cat(tensors, 1)
        with ops.use():
            actual = torch.cat(tensors, 1)
        assert torch.equal(actual, expected) and actual.stride() == expected.stride()
