"""Gradients through naiad.ops that were silently wrong, each now right or an error.

Second derivatives (second_derivatives.py): a direct call whose backward is a fused kernel
without a derivative gives, with `create_graph=True`, the right first gradient and a second one
that raises naming the op, where it came out as zero without an error; one whose gradient is
made of differentiable ops gives float64 torch's second derivative; under naiad.ops.use()
torch's formulas give every second derivative. First derivatives: masked_fill and fill by a
value tensor give the value its gradient; max and min of all elements share theirs among ties;
an op without a derivative raises where its part of a gradient was dropped. In-place calls on
tensors of a graph are recorded as torch records its own (recorded_in_place.py), and `out=`
with an argument requiring a gradient raises as torch's differentiable functions do."""

import pytest
import torch
import torch.nn.functional as F

import naiad.ops as ops


def _inputs(seed: int):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(4, 16, generator=g, dtype=torch.float64, requires_grad=True)
    weights = torch.randn(4, 16, generator=g, dtype=torch.float64)
    return x, weights


def _gradient(fn, x, weights):
    (first,) = torch.autograd.grad((fn(x) * weights).sum(), x, create_graph=True)
    return first


ONCE = {
    "tanh": (ops.tanh, torch.tanh),
    "silu": (ops.silu, F.silu),
    "relu": (ops.relu, torch.relu),
    "softmax": (lambda x: ops.softmax(x, -1), lambda x: torch.softmax(x, -1)),
    "log_softmax": (lambda x: ops.log_softmax(x, -1), lambda x: torch.log_softmax(x, -1)),
    "layer_norm": (lambda x: ops.layer_norm(x, [16]), lambda x: F.layer_norm(x, [16])),
    "rms_norm": (lambda x: ops.rms_norm(x, [16]), lambda x: F.rms_norm(x, [16])),
}


@pytest.mark.parametrize("name", sorted(ONCE))
def test_a_second_derivative_through_a_fused_backward_raises(name):
    ours, theirs = ONCE[name]
    x, weights = _inputs(3)
    first = _gradient(ours, x, weights)
    torch.testing.assert_close(first, _gradient(theirs, x, weights))  # the first one is right
    with pytest.raises(RuntimeError, match=r"second derivative of \w+ is not implemented"):
        torch.autograd.grad((first * weights).sum(), x)
    # mixed with a differentiable part, the whole second backward raises too (it dropped it)
    with pytest.raises(RuntimeError, match=r"naiad\.ops: the second derivative"):
        torch.autograd.grad((first * weights).sum() + (x**3).sum(), x)


TWICE = {
    "exp": (ops.exp, torch.exp),
    "sin": (ops.sin, torch.sin),
    "mul": (lambda x: ops.mul(x, x), lambda x: x * x),
    "div": (lambda x: ops.div(x, ops.add(ops.mul(x, x), 1.0)), lambda x: x / (x * x + 1.0)),
}


@pytest.mark.parametrize("name", sorted(TWICE))
def test_a_gradient_made_of_differentiable_ops_differentiates_again(name):
    ours, theirs = TWICE[name]
    x, weights = _inputs(5)
    (second,) = torch.autograd.grad((_gradient(ours, x, weights) * weights).sum(), x)
    (expected,) = torch.autograd.grad((_gradient(theirs, x, weights) * weights).sum(), x)
    torch.testing.assert_close(second, expected)


@pytest.mark.parametrize("name", ["tanh", "softmax", "layer_norm"])
def test_under_the_switch_torchs_formulas_give_second_derivatives(name):
    _, theirs = ONCE[name]
    x, weights = _inputs(7)
    (expected,) = torch.autograd.grad((_gradient(theirs, x, weights) * weights).sum(), x)
    with ops.use():
        (second,) = torch.autograd.grad((_gradient(theirs, x, weights) * weights).sum(), x)
    torch.testing.assert_close(second, expected)


def test_masked_fill_and_fill_by_a_value_tensor_differentiate_the_value():
    x, weights = _inputs(11)
    mask = torch.rand(4, 16, generator=torch.Generator().manual_seed(1)) > 0.5
    row_mask = mask[0]  # broadcast along the rows
    value = torch.tensor(0.75, dtype=torch.float64, requires_grad=True)
    for ours, theirs in (
        (lambda: ops.masked_fill(x, mask, value), lambda: torch.masked_fill(x, mask, value)),
        (lambda: ops.masked_fill(x, row_mask, value), lambda: x.masked_fill(row_mask, value)),
        (lambda: ops.fill(x, value), lambda: torch.fill(x, value)),
    ):
        got = torch.autograd.grad((ours() * weights).sum(), [x, value])
        expected = torch.autograd.grad((theirs() * weights).sum(), [x, value])
        for a, b in zip(got, expected, strict=True):
            torch.testing.assert_close(a, b)


def test_the_extreme_of_all_elements_shares_its_gradient_among_ties():
    g = torch.Generator().manual_seed(13)
    x = torch.randint(-3, 4, (5, 7), generator=g).to(torch.float64).requires_grad_()
    for ours, theirs in ((ops.max, torch.max), (ops.min, torch.min)):
        (got,) = torch.autograd.grad(ours(x) * 1.5, x)
        (expected,) = torch.autograd.grad(theirs(x) * 1.5, x)
        assert (expected > 0).sum() > 1  # ties among the extremes
        torch.testing.assert_close(got, expected)


@pytest.mark.parametrize(
    "call",
    [
        lambda x: ops.floor_divide(x, 2.0),
        lambda x: ops.remainder(3.0, x),
        lambda x: torch.ops.naiad._scaled_dot_product_efficient_attention(
            *[x.float()[None, None]] * 3, None, False
        )[0],
    ],
    ids=["floor_divide", "remainder_of_a_scalar", "attention_custom_op"],
)
def test_an_op_without_a_derivative_raises_instead_of_dropping_its_part(call):
    """Mixed with a differentiable term, the op's part would have been dropped silently."""
    x, _ = _inputs(17)
    with pytest.raises(RuntimeError, match=r"naiad\.ops: the derivative of \w+ is not implemented"):
        torch.autograd.grad(call(x).sum() + (x**2).sum(), x)


IN_PLACE = {
    "mul_": (lambda y, w: ops.mul_(y, w), lambda y, w: y.mul_(w)),
    "add_": (lambda y, w: ops.add_(y, w, alpha=2.0), lambda y, w: y.add_(w, alpha=2.0)),
    "div_": (lambda y, w: ops.div_(y, w.abs() + 1), lambda y, w: y.div_(w.abs() + 1)),
    "exp_": (lambda y, w: ops.exp_(y), lambda y, w: y.exp_()),
    "sigmoid_": (lambda y, w: ops.sigmoid_(y), lambda y, w: y.sigmoid_()),
    "relu_": (lambda y, w: ops.relu_(y), lambda y, w: y.relu_()),
    "clamp_": (lambda y, w: ops.clamp_(y, -0.5, 0.5), lambda y, w: y.clamp_(-0.5, 0.5)),
    "masked_fill_": (
        lambda y, w: ops.masked_fill_(y, w > 0, 0.25),
        lambda y, w: y.masked_fill_(w > 0, 0.25),
    ),
    "fill_": (lambda y, w: ops.fill_(y, 3.0), lambda y, w: y.fill_(3.0)),
    "lerp_": (lambda y, w: ops.lerp_(y, w, 0.3), lambda y, w: y.lerp_(w, 0.3)),
    "addcmul_": (
        lambda y, w: ops.addcmul_(y, w, w, value=0.5),
        lambda y, w: y.addcmul_(w, w, value=0.5),
    ),
}


@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_an_in_place_call_is_recorded_as_torchs(name):
    """The target part of a graph, and an operand requiring a gradient: both get torch's
    gradients (the old value's gradient was taken as the new one's, without an error)."""
    ours, theirs = IN_PLACE[name]
    x, weights = _inputs(19)
    operand = (torch.randn(4, 16, dtype=torch.float64) * 0.8).requires_grad_()
    results = []
    for call in (ours, theirs):
        target = x * 1.0  # not a leaf: in place is allowed
        assert call(target, operand) is target
        results.append((target, *torch.autograd.grad((target * weights).sum(), [x, operand],
                                                     allow_unused=True)))  # fmt: skip
    for got, expected in zip(*results, strict=True):
        if expected is None:
            assert got is None or not got.any()
        else:
            torch.testing.assert_close(got, expected)


def test_in_place_random_fills_and_leaves_behave_as_torchs():
    x, weights = _inputs(23)
    target = x * 1.0
    ops.normal_(target)
    (gradient,) = torch.autograd.grad((target * weights).sum(), x)
    assert not gradient.any()  # the drawn values do not depend on x
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        ops.mul_(x, weights)
    with torch.no_grad():  # outside a graph the kernel writes in place as before
        target = x.detach().clone()
        assert ops.mul_(target, weights) is target
        torch.testing.assert_close(target, x.detach() * weights)


def test_out_with_an_argument_requiring_a_gradient_raises_as_torch():
    x, _ = _inputs(29)
    with pytest.raises(RuntimeError, match=r"add\(\): functions with out=\.\.\. arguments"):
        ops.add(x, x, out=torch.empty_like(x))
    ops.eq(x, x, out=torch.empty(x.shape, dtype=torch.bool))  # not differentiable: allowed
