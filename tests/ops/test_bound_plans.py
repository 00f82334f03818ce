"""One kept plan, many calls: the ops that launch through a launch bound to their plan
(JITFunction.bind_launch: products, the pointwise facility, row reductions) see tensors of one
dtype, shape and strides at other alignments, scalars of one type with other values (integers
of other ==1 / %16 classes), and other launch settings, and must compute what torch computes
in float64 for each call."""

import pytest
import torch

import naiad.ops as ops
from naiad import knobs

# Offsets in elements of fp32 views into one buffer: 16-byte aligned (0, 4) or not (1, 3).
OFFSETS = (0, 1, 4, 3, 0)


def _views(gen, shape, count=2):
    """`count` lists of views of `shape` into random buffers, one per offset: one plan, other
    addresses."""
    size = torch.Size(shape).numel()
    buffers = [torch.randn(size + 8, generator=gen) for _ in range(count)]
    return [[b[o : o + size].view(shape) for o in OFFSETS] for b in buffers]


def test_pointwise_plans_across_alignments_and_scalars(compiled, gen):
    xs, ys = _views(gen, (1000,))
    for x, y in zip(xs, ys):
        torch.testing.assert_close(ops.add(x, y).double(), x.double() + y.double())
    for k in (3, 1, 16, 32, 5, 1):  # one plan (an int scalar); other specializations
        x = xs[k % len(xs)]
        torch.testing.assert_close(ops.mul(x, k).double(), x.double() * k)
    for s in (0.5, 2.0, -1.25):
        torch.testing.assert_close(ops.add(xs[1], s).double(), xs[1].double() + s)


def test_products_across_alignments_and_factors(compiled, gen):
    as_, bs = _views(gen, (16, 16))
    (biases,) = _views(gen, (16,), count=1)
    for a, b, bias in zip(as_, bs, biases):
        expected = a.double() @ b.double()
        torch.testing.assert_close(ops.mm(a, b).double(), expected, rtol=1e-5, atol=1e-5)
        for alpha, beta in ((2.0, 1.0), (3.0, 0.5), (-0.25, 2.0)):  # one scaled plan
            result = ops.addmm(bias, a, b, alpha=alpha, beta=beta).double()
            reference = beta * bias.double() + alpha * expected
            torch.testing.assert_close(result, reference, rtol=1e-5, atol=1e-5)


def test_row_reductions_across_alignments(compiled, gen):
    (xs,) = _views(gen, (8, 64), count=1)
    for x in xs:
        close = {"rtol": 1e-5, "atol": 1e-5}  # fp32 sums against float64's
        torch.testing.assert_close(ops.sum(x, 1).double(), x.double().sum(1), **close)
        softmax = torch.softmax(x.double(), -1)
        torch.testing.assert_close(ops.softmax(x, -1).double(), softmax, **close)


@pytest.mark.parametrize("op", ["add", "mm", "sum"])
def test_a_change_of_back_end_between_calls_of_one_plan(op, gen):
    x, y = torch.randn(16, 16, generator=gen), torch.randn(16, 16, generator=gen)
    call, reference = {
        "add": (lambda: ops.add(x, y), x.double() + y.double()),
        "mm": (lambda: ops.mm(x, y), x.double() @ y.double()),
        "sum": (lambda: ops.sum(x, 1), x.double().sum(1)),
    }[op]
    for backend in ("cpu", "interpreter", "cpu"):
        with knobs.override(NAIAD_BACKEND=backend):
            torch.testing.assert_close(call().double(), reference, rtol=1e-5, atol=1e-5)
