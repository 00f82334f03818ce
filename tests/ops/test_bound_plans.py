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


@pytest.mark.parametrize("rows", [8, 600])  # one program's weight gradient, and a sum of rows
def test_rms_norm_plans_across_alignments_and_weights(rows, compiled, gen):
    """`_fused_rms_norm` and its backward keep a plan per kind of call: each call of a kind,
    at other alignments, with a weight, without, and with one that is not a contiguous vector
    (w[::2], which no plan takes as it is), against float64."""
    from naiad.ops.normalization.rms_norm import fused_rms_norm, fused_rms_norm_backward

    xs, gs = _views(gen, (rows, 64))
    (buffer,) = _views(gen, (128,), count=1)
    weights = [None, buffer[0][:64], buffer[1][:64], buffer[0][::2], buffer[0][:64]]
    close = {"rtol": 1e-4, "atol": 1e-4}
    for x, g, w in zip(xs, gs, weights):
        wide = [x.double().requires_grad_(), None if w is None else w.double().requires_grad_()]
        expected = torch.nn.functional.rms_norm(wide[0], (64,), wide[1], 1e-6)
        leaves = [t for t in wide if t is not None]
        expected_grads = torch.autograd.grad(expected, leaves, g.double())
        out, rstd = fused_rms_norm(x, [64], w, 1e-6)
        torch.testing.assert_close(out.double(), expected.detach(), **close)
        dx, dw = fused_rms_norm_backward(g, x, [64], rstd, w, [True, w is not None])
        torch.testing.assert_close(dx.double(), expected_grads[0], **close)
        if w is not None:
            torch.testing.assert_close(dw.double(), expected_grads[1], **close)


def test_layer_norm_plans_across_alignments_parameters_and_eps(compiled, gen):
    """native_layer_norm keeps a plan per kind of call: each call of a kind at other
    alignments, with weight and bias, without, with a weight that is not a contiguous vector
    (w[::2], which no plan takes as it is), and another eps, against float64; a weight of the
    wrong shape is still refused after a plan was made."""
    from naiad.ops.normalization.layer_norm import native_layer_norm

    xs, _ = _views(gen, (8, 64))
    (buffer,) = _views(gen, (128,), count=1)
    weights = [None, buffer[0][:64], buffer[1][:64], buffer[0][::2], buffer[2][:64]]
    biases = [None, buffer[1][64:], None, buffer[3][64:], buffer[4][64:]]
    for x, w, b, eps in zip(xs, weights, biases, (1e-5, 1e-5, 1e-5, 1e-3, 1e-5)):
        wide = [None if t is None else t.double() for t in (x, w, b)]
        expected = torch.nn.functional.layer_norm(wide[0], (64,), wide[1], wide[2], eps)
        out, mean, rstd = native_layer_norm(x, [64], w, b, eps)
        torch.testing.assert_close(out.double(), expected, rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(mean.double(), wide[0].mean(1, True), rtol=1e-5, atol=1e-5)
        inverse = (wide[0].var(1, correction=0, keepdim=True) + eps).rsqrt()
        torch.testing.assert_close(rstd.double(), inverse, rtol=1e-4, atol=1e-4)
    with pytest.raises(RuntimeError, match="Expected weight to be of same shape"):
        native_layer_norm(xs[0], [64], buffer[0][:32], None, 1e-5)


@pytest.mark.parametrize("log", [False, True])
def test_softmax_backward_plans_across_alignments(log, compiled, gen):
    """`_softmax_backward_data` / `_log_softmax_backward_data` keep a plan per kind of call:
    each call of a kind at other alignments of the gradient and the output, against float64."""
    from naiad.ops.normalization.softmax import _log_softmax_backward_data, _softmax_backward_data

    backward = _log_softmax_backward_data if log else _softmax_backward_data
    xs, gs = _views(gen, (8, 64))
    for x, g in zip(xs, gs):
        wide = x.double().requires_grad_()
        y = (torch.log_softmax if log else torch.softmax)(wide, -1)
        (expected,) = torch.autograd.grad(y, wide, g.double())
        output = torch.empty_like(g).copy_(y.detach())  # fp32, at the gradient's alignment
        result = backward(g, output, -1, torch.float32)
        torch.testing.assert_close(result.double(), expected, rtol=1e-4, atol=1e-4)


def test_product_plans_key_every_operands_dtype_and_device(compiled, gen):
    """A product's plan passes its tensors keyed by their alignment alone, so the plan's key
    holds each one's dtype and device: a bias of another dtype takes a plan of its own, and
    an operand on another device is a clear error, not a pointer the kernel cannot read."""
    a, b = torch.randn(16, 16, generator=gen), torch.randn(16, 16, generator=gen)
    bias = torch.randn(16, generator=gen)
    ops.addmm(bias, a, b)
    result = ops.addmm(bias.double(), a, b).double()
    expected = bias.double() + a.double() @ b.double()
    torch.testing.assert_close(result, expected, rtol=1e-5, atol=1e-5)
    with pytest.raises(RuntimeError, match="on one device"):
        ops.mm(a, torch.empty(16, 16, device="meta"))


def test_reduction_plans_across_alignments_dims_and_keepdim(compiled, gen):
    """Reductions and the extremes' positions keep a plan per kind of call (the operand's
    kind, the dims, keepdim, the reduction): each kind at other alignments, with a dim as an
    int, a list and None, against float64; a dim out of range is still an error after a plan
    was made."""
    (xs,) = _views(gen, (8, 64), count=1)
    close = {"rtol": 1e-5, "atol": 1e-5}
    for x in xs:
        wide = x.double()
        torch.testing.assert_close(ops.sum(x, 1).double(), wide.sum(1), **close)
        torch.testing.assert_close(ops.sum(x, [0], True).double(), wide.sum(0, True), **close)
        torch.testing.assert_close(ops.mean(x, [-1], True).double(), wide.mean(-1, True), **close)
        torch.testing.assert_close(ops.amax(x, 1).double(), wide.amax(1))
        torch.testing.assert_close(ops.sum(x).double(), wide.sum(), **close)
        for ours, theirs in ((ops.argmax(x, 1), wide.argmax(1)),
                             (ops.argmin(x, 0, True), wide.argmin(0, True)),
                             (ops.argmax(x), wide.argmax()),
                             (ops.argmax(x, None, True), wide.argmax(None, True)),
                             (ops.max(x, 1).indices, wide.max(1).indices)):  # fmt: skip
            assert ours.shape == theirs.shape and torch.equal(ours, theirs)
        torch.testing.assert_close(ops.min(x, 1, True).values.double(), wide.min(1, True).values)
        for correction in (1, 0, 2):  # one plan, the correction a call's own
            torch.testing.assert_close(ops.var(x, 1, correction=correction).double(),
                                       wide.var(1, correction=correction), **close)  # fmt: skip
        variance, mean = ops.std_mean(x, [0], keepdim=True)
        torch.testing.assert_close(variance.double(), wide.std(0, keepdim=True), **close)
        torch.testing.assert_close(mean.double(), wide.mean(0, keepdim=True), **close)
    with pytest.raises(IndexError, match="out of range"):
        ops.sum(xs[0], 2)
    with pytest.raises(IndexError, match="out of range"):
        ops.argmax(xs[0], 2)


def test_reduction_plans_over_a_middle_dim(compiled, gen):
    """A reduction whose kept dims do not fold (a middle dim of a contiguous operand, read in
    place by grouped.py's column form; of a transposed one, which as_rows copies at every call)
    keeps a plan: other values and alignments of one kind, each against float64."""
    (xs,) = _views(gen, (2, 4, 3, 5), count=1)
    close = {"rtol": 1e-5, "atol": 1e-5}
    for x in xs:
        for operand in (x, x.transpose(2, 3)):
            wide = operand.double()
            torch.testing.assert_close(ops.sum(operand, [1], True).double(), wide.sum(1, True),
                                       **close)  # fmt: skip
            torch.testing.assert_close(ops.amax(operand, 2).double(), wide.amax(2))
            torch.testing.assert_close(ops.mean(operand, [0, 2]).double(), wide.mean((0, 2)),
                                       **close)  # fmt: skip


def test_cat_plans_across_calls(compiled, gen):
    """cat keeps a plan per kind of call (its inputs' kinds, the dim): calls of one kind at
    other alignments and values, with an empty input skipped and with a mixed dtype, each
    against torch's; `out=` takes the whole path."""
    (xs,) = _views(gen, (3, 4), count=1)
    (ys,) = _views(gen, (3, 2), count=1)
    for x, y in zip(xs, ys):
        for tensors, dim in (([x, y], 1), ([y, x, y], -1), ([torch.empty(0), x, x], 0)):
            torch.testing.assert_close(ops.cat(tensors, dim), torch.cat(tensors, dim))
        mixed = [x, y.double()]
        torch.testing.assert_close(ops.cat(mixed, 1), torch.cat(mixed, 1))
        out = torch.empty(1)
        torch.testing.assert_close(ops.cat([x, y], 1, out=out), torch.cat([x, y], 1))


def test_index_plans_across_calls(compiled, gen):
    """index_select and gather keep a plan per kind of call (the operand's and the index's
    kinds, the dim): calls of one kind at other alignments and with other indices (negative
    ones too) give torch's values; an index out of range is still an IndexError after a plan
    was made; a transposed operand and an expanded index take plans of their own."""
    (xs,) = _views(gen, (6, 5), count=1)
    for x in xs:
        picks = torch.randint(-6, 6, (4,), generator=gen)
        assert torch.equal(ops.index_select(x, 0, picks), torch.index_select(x, 0, picks % 6))
        columns = torch.randint(0, 5, (6, 3), generator=gen)
        assert torch.equal(ops.gather(x, 1, columns), torch.gather(x, 1, columns))
        assert torch.equal(ops.gather(x.t(), 0, columns.t()), torch.gather(x.t(), 0, columns.t()))
        one = torch.randint(0, 5, (1, 1), generator=gen).expand(6, 2)
        assert torch.equal(ops.gather(x, 1, one), torch.gather(x, 1, one))
    with pytest.raises(IndexError, match="out of range"):
        ops.index_select(xs[0], 0, torch.tensor([0, 6, 1, 2]))
    with pytest.raises(IndexError, match="out of range"):
        ops.gather(xs[0], 1, torch.full((6, 3), 5))


def test_scan_plans_across_calls(compiled, gen):
    """cumsum and cumprod keep a plan per kind of call (the operand's kind, the dim, the
    result's dtype): calls of one kind at other alignments, a transposed operand and a dtype=
    call each against torch's."""
    (xs,) = _views(gen, (4, 6), count=1)
    close = {"rtol": 1e-5, "atol": 1e-5}
    for x in xs:
        wide = x.double()
        torch.testing.assert_close(ops.cumsum(x, -1).double(), wide.cumsum(-1), **close)
        torch.testing.assert_close(ops.cumsum(x.t(), 1).double(), wide.t().cumsum(1), **close)
        torch.testing.assert_close(ops.cumprod(x, 1).double(), wide.cumprod(1), **close)
        result = ops.cumsum(x, 1, dtype=torch.float64)
        assert result.dtype == torch.float64
        torch.testing.assert_close(result, wide.cumsum(1), **close)
