"""cross_entropy (log_softmax and nll_loss, with class weights, label smoothing, ignore_index
and each reduction) and embedding (with padding_idx), forward and backward through the switch
against torch on the same inputs, and the direct calls."""

import importlib
import types

import pytest
import torch
import torch.nn.functional as F
from ops_helpers import assert_matches, make

import naiad.ops as ops

FULL = pytest.mark.full

CROSS_ENTROPY = {
    "mean": {},
    "weighted": {"weight": "w"},
    "sum": {"reduction": "sum"},
    "none": {"reduction": "none"},
    "smoothed": {"label_smoothing": 0.1},
    "weighted smoothed": {"weight": "w", "label_smoothing": 0.2},
}


def _forward_and_grad(fn, x):
    y = fn(x)
    return y, torch.autograd.grad(y, x, torch.ones_like(y))[0]


@pytest.mark.parametrize("case", list(CROSS_ENTROPY))
def test_cross_entropy(case, gen, backend):
    x = make((8, 5), torch.float32, gen).requires_grad_()
    labels = torch.tensor([0, 4, 2, -100, 1, 1, 3, 2])
    w = make((5,), torch.float32, gen, low=0.1, high=1)
    kwargs = {k: (w if v == "w" else v) for k, v in CROSS_ENTROPY[case].items()}
    expected = _forward_and_grad(lambda t: F.cross_entropy(t, labels, **kwargs), x)
    with ops.use():
        actual = _forward_and_grad(lambda t: F.cross_entropy(t, labels, **kwargs), x)
    for a, e in zip(actual, expected, strict=True):
        assert_matches(a, e, 4)


def test_nll_loss_direct(gen, backend):
    logp = torch.log_softmax(make((6, 7), torch.float32, gen), 1)
    labels = torch.tensor([1, 0, 6, 3, 3, 2])
    for reduction in ("mean", "sum", "none"):
        expected = F.nll_loss(logp, labels, reduction=reduction)
        assert_matches(ops.nll_loss(logp, labels, reduction=reduction), expected, 2)
    assert_matches(ops.nll_loss(logp[0], labels[0]), F.nll_loss(logp[0], labels[0]))


def test_nll_loss_of_strided_targets(gen, backend):
    """Targets that are a column of a label table (not contiguous), forward and backward
    through the switch, for each reduction."""
    x = make((6, 5), torch.float32, gen).requires_grad_()
    labels = torch.randint(0, 5, (6, 2), generator=gen)[:, 1]
    for reduction in ("mean", "sum", "none"):
        expected = _forward_and_grad(lambda t: F.cross_entropy(t, labels, reduction=reduction), x)
        with ops.use():
            actual = _forward_and_grad(lambda t: F.cross_entropy(t, labels, reduction=reduction), x)
        for a, e in zip(actual, expected, strict=True):
            assert_matches(a, e, 4)


def test_nll_loss_backward_of_one_sample(gen, backend):
    """A (C,) input and a 0-dim target: each reduction's gradient, through the switch (the
    gradient of reduction='none' is 0-dim too)."""
    logp = torch.log_softmax(make((7,), torch.float32, gen), 0).requires_grad_()
    label = torch.tensor(3)
    for reduction in ("none", "mean", "sum"):
        expected = torch.autograd.grad(F.nll_loss(logp, label, reduction=reduction), logp)
        with ops.use():
            actual = torch.autograd.grad(F.nll_loss(logp, label, reduction=reduction), logp)
        assert_matches(actual[0], expected[0])


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_nll_loss_backward_in_tiles(dtype, gen, backend):
    """The backward writes the whole gradient, zeros too, in tiles: 2100 classes take three
    column blocks and 4 rows a tile, 9 samples three row blocks; targets in every column
    block, some ignored; each reduction, with class weights and without, against torch's
    autograd in float64 (a gradient of ones for 'none')."""
    logp = torch.log_softmax(make((9, 2100), torch.float32, gen), 1).to(dtype)
    labels = torch.tensor([0, 2099, 1024, 1023, 7, -100, 2048, 5, -100])
    w = make((2100,), dtype, gen, low=0.1, high=1)
    for reduction in ("none", "mean", "sum"):
        for weight in (w, None):
            x = logp.detach().double().requires_grad_()
            wide = None if weight is None else weight.double()
            loss = F.nll_loss(x, labels, wide, reduction=reduction)
            expected = torch.autograd.grad(loss, x, torch.ones_like(loss))[0].to(dtype)
            x = logp.detach().requires_grad_()
            with ops.use():
                loss = F.nll_loss(x, labels, weight, reduction=reduction)
                actual = torch.autograd.grad(loss, x, torch.ones_like(loss))[0]
            assert_matches(actual, expected, 2)


def test_nll_loss_past_one_program(gen, backend):
    """More samples than one program sums (_ONE_PROGRAM_SAMPLES): a gather, then sums; some
    targets ignored; the mean with class weights, the sum without."""
    n = 65536 + 3
    logp = torch.log_softmax(make((n, 3), torch.float32, gen), 1)
    labels = torch.randint(0, 3, (n,), generator=gen)
    labels[::7] = -100
    w = make((3,), torch.float32, gen, low=0.1, high=1)
    for reduction, weight in (("mean", w), ("sum", None)):
        wide = None if weight is None else weight.double()
        expected = F.nll_loss(logp.double(), labels, wide, reduction=reduction)
        actual = ops.nll_loss(logp, labels, weight, reduction=reduction)
        assert_matches(actual, expected.float(), 8)


@pytest.mark.parametrize("dtype", [torch.float32, pytest.param(torch.bfloat16, marks=FULL)])
def test_embedding(dtype, gen, backend):
    weight = make((10, 6), dtype, gen).requires_grad_()
    indices = torch.tensor([[1, 3, 3], [0, 9, 1]])
    grad = make((2, 3, 6), dtype, gen)
    expected = F.embedding(indices, weight, padding_idx=1)
    (expected_grad,) = torch.autograd.grad(expected, weight, grad)
    with ops.use():
        actual = F.embedding(indices, weight, padding_idx=1)
        (actual_grad,) = torch.autograd.grad(actual, weight, grad)
    assert_matches(actual, expected)
    assert_matches(actual_grad, expected_grad, 2)
    assert_matches(ops.embedding(weight, indices), F.embedding(indices, weight))
    with pytest.raises(RuntimeError, match="'weight' must be 2-D"):  # F.embedding's order
        ops.embedding(indices[0], weight)


def test_indices_outside_their_operand_raise_torchs_errors(gen, interpreted):
    """A class past C, an index past the weight's rows (inside the storage of the view it
    belongs to, where no bounds check of the kernel sees it) and a short target raise as torch
    does, directly and through the switch; ignore_index is no class and passes."""
    logp = torch.log_softmax(make((5, 3), torch.float32, gen), 1)
    labels = torch.tensor([0, 1, 2, 5, 1])
    weight = make((10, 4), torch.float32, gen)[:5]
    past, negative = torch.tensor([7]), torch.tensor([-1])
    cases = [
        (IndexError, "Target 5 is out of bounds", lambda f: f.nll_loss(logp, labels)),
        (IndexError, "Target 5 is out of bounds", lambda f: f.cross_entropy(logp, labels)),
        (IndexError, "index out of range in self", lambda f: f.embedding(past, weight)),
        (IndexError, "index out of range in self", lambda f: f.embedding(negative, weight)),
        (ValueError, "batch_size \\(5\\) to match target batch_size \\(2\\)",
         lambda f: f.cross_entropy(logp, labels[:2])),
        (RuntimeError, "int64 or int32|Long, Int", lambda f: f.embedding(past.float(), weight)),
    ]  # fmt: skip
    direct = types.SimpleNamespace(
        nll_loss=ops.nll_loss,
        cross_entropy=ops.cross_entropy,
        embedding=lambda indices, w: ops.embedding(w, indices),
    )
    for error, words, call in cases:
        for calls in (F, direct):
            with pytest.raises(error, match=words):
                call(calls)
        with ops.use(), pytest.raises(error, match=words):
            call(F)
    ignored = torch.tensor([0, 1, 2, -100, 1])
    assert_matches(ops.nll_loss(logp, ignored), F.nll_loss(logp, ignored))


@pytest.mark.parametrize("where", ["interpreter", "cpu"])
def test_kernels_stop_indices_outside_and_the_ops_raise_torchs_errors(where, gen):
    """The kernels reading by index assert their range (index_range.py) and the host does not
    check before them: on both CPU back ends an index outside stops the kernel, and the op
    raises torch's error in its place, forward and backward (embedding's and scatter_add's
    in-order kernels, nll_loss's one-program loss, its per-sample gather and its gradient),
    directly and through the switch; indices inside give torch's values."""
    from naiad import knobs

    embedding_backward = importlib.import_module("naiad.ops.nn.embedding").embedding_dense_backward
    nll_loss_backward = importlib.import_module("naiad.ops.nn.nll_loss").nll_loss_backward
    logp = torch.log_softmax(make((70, 3), torch.float32, gen), 1)
    labels = torch.randint(0, 3, (70,), generator=gen)
    weight = make((10, 4), torch.float32, gen)
    grad = make((2, 3, 4), torch.float32, gen)
    x = make((6, 5), torch.float32, gen)
    rows = torch.tensor([[0, 5, 2], [4, 1, 3]])
    one = torch.ones((), dtype=torch.float32)
    target_words, row_words = "Target 3 is out of bounds", "index out of range in self"
    scatter_words = "index 6 is out of bounds for dimension 0 with size 6"
    calls = [
        (lambda t: ops.nll_loss(logp, t), lambda t: F.nll_loss(logp, t), labels, 3,
         IndexError, target_words),
        (lambda t: ops.nll_loss(logp, t, reduction="none"),
         lambda t: F.nll_loss(logp, t, reduction="none"), labels, 3, IndexError, target_words),
        (lambda t: nll_loss_backward(one, logp, t, None, 1, -100, one), None,
         labels, 3, IndexError, target_words),
        (lambda t: ops.embedding(weight, t), lambda t: F.embedding(t, weight), rows, 10,
         IndexError, row_words),
        (lambda t: embedding_backward(grad, t, 10, -1, False), None, rows,
         10, IndexError, row_words),
        (lambda t: ops.index_select(x, 0, t), lambda t: x.index_select(0, t), rows[0], 6,
         IndexError, row_words),
        (lambda t: ops.gather(x, 0, t), lambda t: x.gather(0, t), rows, 6, IndexError,
         row_words),
        (lambda t: ops.scatter(x, 0, t, x), lambda t: x.scatter(0, t, x), rows[:, :1], 6,
         RuntimeError, scatter_words),
        (lambda t: ops.scatter_add(x, 0, t, x), lambda t: x.scatter_add(0, t, x), rows[:, :1],
         6, RuntimeError, scatter_words),
    ]  # fmt: skip
    with knobs.override(NAIAD_BACKEND=where):
        for ours, theirs, inside, bound, error, words in calls:
            if theirs is not None:
                assert_matches(ours(inside), theirs(inside))
            outside = inside.clone()
            outside.view(-1)[-1] = bound
            with pytest.raises(error, match=words):
                ours(outside)
            with ops.use(), pytest.raises(error, match=words):
                ours(outside)
