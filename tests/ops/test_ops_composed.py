"""matmul, linear and cross_entropy called directly (naiad/ops/composed.py) against torch on
float64 inputs: every rank pair of matmul with broadcast batches, linear with and without a
bias, cross_entropy over class indices and class probabilities with each reduction, weights,
ignore_index and label smoothing; gradients against torch's autograd; the errors torch raises."""

import pytest
import torch
import torch.nn.functional as F
from ops_helpers import FLOATS, assert_matches, make

import naiad.ops as ops

FULL = pytest.mark.full
DTYPES = [torch.float32] + [pytest.param(d, marks=FULL) for d in FLOATS[1:]]

RANK_PAIRS = [
    ((7,), (7,)),  # a dot product: a 0-dim result
    ((3, 7), (7,)),
    ((7,), (7, 5)),
    ((3, 7), (7, 5)),
    ((2, 3, 7), (7, 5)),  # the batch folds into one product's rows
    ((2, 3, 7), (7,)),
    ((7,), (2, 7, 5)),
    ((2, 1, 3, 7), (4, 7, 5)),  # batches broadcast
    ((0, 3, 7), (7, 5)),
    ((2, 3, 0), (0, 5)),  # nothing to sum: zeros
]


@pytest.mark.parametrize("shapes", RANK_PAIRS, ids=lambda s: f"{s[0]}@{s[1]}")
def test_matmul_takes_torchs_shapes(shapes, gen, interpreted):
    a, b = (make(shape, torch.float32, gen) for shape in shapes)
    expected = torch.matmul(a.double(), b.double()).float()
    assert_matches(ops.matmul(a, b), expected, scale=8, normwise=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_matmul_and_linear_values_and_gradients(dtype, gen, backend):
    x = make((2, 3, 24), dtype, gen).requires_grad_()
    w = make((16, 24), dtype, gen).requires_grad_()
    bias = make((16,), dtype, gen).requires_grad_()
    other = make((2, 24, 5), dtype, gen).requires_grad_()
    for fn, args in ((F.linear, (x, w, bias)), (F.linear, (x, w)), (torch.matmul, (x, other))):
        actual_fn = getattr(ops, fn.__name__)
        g = make(fn(*args).shape, dtype, gen)
        actual = [actual_fn(*args), *torch.autograd.grad(actual_fn(*args), args, g)]
        args64 = [t.detach().double().requires_grad_() for t in args]
        y64 = fn(*args64)
        expected = [y64, *torch.autograd.grad(y64, args64, g.double())]
        for a, e in zip(actual, expected, strict=True):
            assert_matches(a, e.to(dtype), scale=8 * 24**0.5, normwise=True)


def test_linear_with_a_vector_of_weights(gen, interpreted):
    x, w = make((2, 4, 6), torch.float32, gen), make((6,), torch.float32, gen)
    bias = make((), torch.float32, gen)
    for args in ((x, w, bias), (x[0], w), (x[0, 0], w, bias)):
        expected = F.linear(*(t.double() for t in args)).float()
        assert_matches(ops.linear(*args), expected, scale=8, normwise=True)


def test_matmul_refuses_what_torch_refuses(gen, interpreted):
    a = make((3, 4), torch.float32, gen)
    with pytest.raises(RuntimeError, match="at least 1D, but they are 0D and 2D"):
        ops.matmul(torch.tensor(2.0), a)
    out = torch.empty(0)
    assert ops.matmul(a, a.t(), out=out) is out
    assert_matches(out, (a.double() @ a.double().t()).float(), scale=8, normwise=True)
    with pytest.raises(RuntimeError, match=r"out=\.\.\. arguments don't support automatic"):
        ops.matmul(a.requires_grad_(), a.t(), out=torch.empty(0))


# cross_entropy's keyword arguments (`weight: True`: a weight drawn per class); label 2 is
# among the targets, so ignore_index=2 ignores two of six.
INDEX_CASES = [
    {},
    {"reduction": "sum"},
    {"reduction": "none"},
    {"ignore_index": 2},
    {"label_smoothing": 0.2},
    {"label_smoothing": 0.2, "reduction": "sum", "ignore_index": 2},
    {"label_smoothing": 0.3, "reduction": "none", "ignore_index": 2},
    {"weight": True},
    {"weight": True, "label_smoothing": 0.1, "ignore_index": 2},
    {"weight": True, "label_smoothing": 0.1, "reduction": "none"},
]


def _arguments(kwargs, classes, gen):
    kwargs = dict(kwargs)
    if kwargs.get("weight"):
        kwargs["weight"] = make((classes,), torch.float32, gen, low=0.1, high=2.0)
    return kwargs


def _check_loss(scores, target, kwargs, gen):
    """ops.cross_entropy's loss and gradient against torch's on float64 copies."""
    scores = scores.requires_grad_()
    loss = ops.cross_entropy(scores, target, **kwargs)
    g = make(loss.shape, torch.float32, gen)
    (grad,) = torch.autograd.grad(loss, scores, g)
    scores64 = scores.detach().double().requires_grad_()
    kwargs64 = {k: v.double() if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
    if target.dtype.is_floating_point:
        target = target.double()
    loss64 = F.cross_entropy(scores64, target, **kwargs64)
    (grad64,) = torch.autograd.grad(loss64, scores64, g.double())
    assert_matches(loss, loss64.float(), scale=4)
    assert_matches(grad, grad64.float(), scale=4)


@pytest.mark.parametrize("kwargs", INDEX_CASES, ids=lambda k: "-".join(map(str, k.items())))
def test_cross_entropy_over_class_indices(kwargs, gen, interpreted):
    scores = make((6, 5), torch.float32, gen)
    labels = torch.tensor([0, 2, 4, 1, 2, 3])
    _check_loss(scores, labels, _arguments(kwargs, 5, gen), gen)


@pytest.mark.parametrize(
    "shape", [(5,), (3, 5, 4), (2, 5, 3, 2)], ids=["one-sample", "N-C-d", "N-C-d1-d2"]
)
@pytest.mark.parametrize("kwargs", [{}, {"reduction": "none", "label_smoothing": 0.2}])
def test_cross_entropy_of_other_ranks(shape, kwargs, gen, interpreted):
    scores = make(shape, torch.float32, gen)
    target_shape = () if len(shape) == 1 else (shape[0], *shape[2:])
    labels = torch.randint(0, 5, target_shape, generator=gen)
    if labels.dim():
        labels.view(-1)[0] = -100  # ignored
    _check_loss(scores, labels, kwargs, gen)


@pytest.mark.parametrize(
    "kwargs", [{}, {"reduction": "none"}, {"weight": True, "label_smoothing": 0.25}]
)
def test_cross_entropy_over_class_probabilities(kwargs, gen, interpreted):
    scores = make((4, 6, 3), torch.float32, gen)
    probabilities = torch.softmax(make((4, 6, 3), torch.float32, gen), 1)
    _check_loss(scores, probabilities, _arguments(kwargs, 6, gen), gen)


def test_cross_entropy_reads_the_deprecated_arguments_and_refuses_bad_ones(gen, interpreted):
    scores, labels = make((4, 3), torch.float32, gen), torch.tensor([0, 1, 2, 1])
    for legacy, reduction in (({"reduce": False}, "none"), ({"size_average": False}, "sum")):
        actual = ops.cross_entropy(scores, labels, **legacy)
        assert_matches(actual, F.cross_entropy(scores, labels, reduction=reduction), scale=4)
    with pytest.raises(ValueError, match="avg is not a valid value for reduction"):
        ops.cross_entropy(scores, labels, reduction="avg")
    with pytest.raises(ValueError, match=r"label_smoothing must be between 0\.0 and 1\.0"):
        ops.cross_entropy(scores, labels, label_smoothing=1.5)
    with pytest.raises(ValueError, match="must have the input's shape"):
        ops.cross_entropy(scores, torch.rand(4, 2))
    every_label_ignored = torch.full((4,), -100)
    assert ops.cross_entropy(scores, every_label_ignored).isnan()


@pytest.mark.parametrize("kwargs", [{}, {"weight": True, "label_smoothing": 0.1}])
def test_cross_entropy_compiled(kwargs, gen, compiled):
    scores = make((40, 33), torch.float32, gen)
    labels = torch.randint(0, 33, (40,), generator=gen)
    labels[3] = -100
    _check_loss(scores, labels, _arguments(kwargs, 33, gen), gen)
