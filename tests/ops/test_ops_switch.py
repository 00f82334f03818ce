"""The switch: naiad.ops.enable/use/disable register Naiad's ATen overloads for the CPU and
CUDA keys and give them back; include=/exclude= choose; unhandled arguments go to torch's own
kernel; torch's autograd runs its formulas on the registered backward ops. Also: the facility's
layouts (non-contiguous, broadcast, empty, one element, rank 6, out=, in place), compiled for
the CPU, and `import naiad` without torch."""

import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F
from ops_helpers import assert_matches, make, reference

import naiad.ops as ops
from naiad.ops.registry import table


def _calls(monkeypatch, name):
    """Count the calls reaching Naiad's function for the overload `name`."""
    calls = []
    fn = table()[name]

    def counted(*args, **kwargs):
        calls.append(name)
        return fn(*args, **kwargs)

    monkeypatch.setitem(ops.registry._TABLE, name, counted)
    return calls


def test_enable_routes_torch_ops_to_naiad(monkeypatch, gen, interpreted):
    calls = _calls(monkeypatch, "add.Tensor")
    x, y = make((4, 5), torch.float32, gen), make((5,), torch.float32, gen)
    ops.enable()
    assert "add.Tensor" in ops.registered() and "exp.out" in ops.registered()
    result = x + y
    ops.disable()
    assert calls == ["add.Tensor"]
    assert_matches(result, reference(torch.add, x, y))
    assert ops.registered() == []
    x + y
    assert calls == ["add.Tensor"]


def test_use_is_scoped_and_restores_what_was_on(monkeypatch, gen, interpreted):
    calls = _calls(monkeypatch, "mul.Tensor")
    x = make((3,), torch.float32, gen)
    ops.enable(include=["add"])
    with ops.use(include=["mul"]):
        assert ops.registered() == [
            "mul.Scalar",
            "mul.Scalar_out",
            "mul.Tensor",
            "mul.out",
            "mul_.Scalar",
            "mul_.Tensor",
        ]
        x * x
    assert calls == ["mul.Tensor"]
    assert "add.Tensor" in ops.registered() and "mul.Tensor" not in ops.registered()
    x * x
    assert calls == ["mul.Tensor"]


def test_exclude(interpreted):
    ops.enable(exclude=["add", "sub.Tensor"])
    names = ops.registered()
    assert not any(n.startswith(("add.", "add_.")) for n in names)
    assert "sub.Tensor" not in names and "sub.Scalar" in names


def test_unhandled_arguments_go_to_torch(interpreted):
    ops.enable()
    z = torch.tensor([1 + 2j, 3 - 1j])
    assert torch.equal(z + z, torch.tensor([2 + 4j, 6 - 2j]))
    assert torch.equal(torch.tensor([2, 3]) ** 2, torch.tensor([4, 9]))  # integer powers


def test_no_registered_overload_is_composite_implicit():
    """A CPU kernel over a CompositeImplicitAutograd op would hide its autograd formula, unless
    the op has an autograd kernel of its own (`_fused_rms_norm`: composite on the CPU, a kernel
    on CUDA, its derivative formula on both)."""
    for name in table():
        op = f"aten::{name.removesuffix('.default')}"
        implicit = torch._C._dispatch_has_kernel_for_dispatch_key(op, "CompositeImplicitAutograd")
        assert not implicit or torch._C._dispatch_has_kernel_for_dispatch_key(op, "Autograd"), name


@pytest.mark.parametrize(
    ("fn", "backward"),
    [
        (torch.relu, "threshold_backward"),
        (F.gelu, "gelu_backward"),
        (lambda x: F.gelu(x, approximate="tanh"), "gelu_backward"),
        (F.silu, "silu_backward"),
        (torch.sigmoid, "sigmoid_backward"),
        (torch.tanh, "tanh_backward"),
        (lambda x: F.leaky_relu(x, 0.1), "leaky_relu_backward"),
    ],
)
def test_backward_through_registered_ops(fn, backward, monkeypatch, gen, interpreted):
    """torch's formula calls the activation's backward op, which is Naiad's."""
    calls = _calls(monkeypatch, f"{backward}.default")
    x = make((6, 7), torch.float64, gen).requires_grad_()
    g = make((6, 7), torch.float64, gen)
    (expected,) = torch.autograd.grad(fn(x), x, g)
    with ops.use():
        (actual,) = torch.autograd.grad(fn(x), x, g)
    assert calls == [f"{backward}.default"]
    assert_matches(actual, expected)


def test_out_and_in_place(gen, interpreted):
    x, y = make((4, 5), torch.float32, gen), make((5,), torch.float32, gen)
    out = torch.empty(0)
    assert ops.add(x, y, out=out) is out
    assert_matches(out, reference(torch.add, x, y))
    half = torch.empty(4, 5, dtype=torch.float16)
    ops.mul(x, y, out=half)
    assert_matches(half, reference(torch.mul, x, y, dtype=torch.float16))
    z = x.clone()
    assert ops.add_(z, y, alpha=2) is z
    assert_matches(z, reference(torch.add, x, y, alpha=2))
    with pytest.raises(RuntimeError, match="broadcast"):
        ops.add_(y.clone(), x)
    same = x.clone()  # an operand of the target's very shape (inplace_target's short way)
    assert ops.mul_(same, z) is same
    assert_matches(same, reference(torch.mul, x, z))
    with ops.use():
        w = x.clone()
        w.sub_(y)
        torch.exp(x, out=out)
    assert_matches(w, reference(torch.sub, x, y))
    assert_matches(out, reference(torch.exp, x))


# In-place overloads and a call of each: (the call on the target, its operands but the target).
IN_PLACE = {
    "fmod_.Scalar": lambda t, o: t.fmod_(-0.75),
    "fmod_.Tensor": lambda t, o: t.fmod_(o[0]),
    "remainder_.Scalar": lambda t, o: t.remainder_(0.6),
    "remainder_.Tensor": lambda t, o: t.remainder_(o[0]),
    "floor_divide_.Scalar": lambda t, o: torch.ops.aten.floor_divide_.Scalar(t, 0.3),
    "floor_divide_.Tensor": lambda t, o: t.floor_divide_(o[0]),
    "pow_.Scalar": lambda t, o: t.abs_().pow_(1.5),
    "pow_.Tensor": lambda t, o: t.abs_().pow_(o[0]),
    "clamp_min_.default": lambda t, o: t.clamp_min_(-0.25),
    "clamp_min_.Tensor": lambda t, o: t.clamp_min_(o[0]),
    "clamp_max_.default": lambda t, o: t.clamp_max_(0.25),
    "clamp_max_.Tensor": lambda t, o: t.clamp_max_(o[0]),
    "cumprod_.default": lambda t, o: t.cumprod_(1),
    "addmm_.default": lambda t, o: t.addmm_(o[1], o[2], beta=0.5, alpha=2),
    "baddbmm_.default": lambda t, o: t.unsqueeze(0).baddbmm_(o[1][None], o[2][None], alpha=2),
    "scatter_.value": lambda t, o: t.scatter_(1, o[3], 2.5),
}


@pytest.mark.parametrize("overload", list(IN_PLACE))
def test_in_place_overloads_under_the_switch(overload, monkeypatch, gen, interpreted):
    """Each in-place overload reaches Naiad under the switch and writes torch's values into its
    target (float64 reference; fmod_'s scalar kept at full precision, as its out-of-place
    form keeps it)."""
    calls = _calls(monkeypatch, overload)
    operands = (
        make((4, 5), torch.float32, gen, nonzero=True),
        make((4, 3), torch.float32, gen),
        make((3, 5), torch.float32, gen),
        torch.randint(0, 5, (4, 2), generator=gen),
    )
    x = make((4, 5), torch.float32, gen)
    expected = IN_PLACE[overload](
        x.double(), [o.double() if o.is_floating_point() else o for o in operands]
    )
    target = x.clone()
    with ops.use():
        result = IN_PLACE[overload](target, operands)
    assert calls == [overload]
    assert result.data_ptr() == target.data_ptr()
    assert_matches(target, expected.view(target.shape).float())


def test_out_of_a_narrower_kind_is_refused(gen, interpreted):
    """An `out=` the result cannot be cast to without changing kind (floats into integers or
    bools) raises as torch does, where the result had been truncated into it; a wider one takes
    the result."""
    x = make((3, 4), torch.float32, gen)
    calls = [
        lambda out: ops.amax(x, 1, out=out),
        lambda out: ops.gather(x, 1, torch.zeros(3, 2, dtype=torch.long), out=out),
        lambda out: ops.cat([x, x], 0, out=out),
        lambda out: ops.add(x, x, out=out),
    ]
    for call in calls:
        for narrower in (torch.int64, torch.bool):
            with pytest.raises((RuntimeError, TypeError), match="can't be cast"):
                call(torch.empty(0, dtype=narrower))
        wide = torch.empty(0, dtype=torch.float64)
        assert call(wide) is wide and wide.numel()
    # a scan runs in out's dtype, its operand converted first, as torch's does
    tenths = torch.tensor([[0.9, 0.9, -0.9, 2.5]])
    into = torch.empty(0, dtype=torch.int64)
    assert torch.equal(ops.cumsum(tenths, 1, out=into), torch.cumsum(tenths, 1, out=into.clone()))
    with ops.use(), pytest.raises(RuntimeError, match="same dtype"):  # not cast into integers
        torch.zeros(3, 5, dtype=torch.int64).addmm_(x[:, :2], make((2, 5), torch.float32, gen))
    # an operand as `out` of another shape: resizing it would lose what the op reads
    column, row = make((3, 1), torch.float32, gen), make((3,), torch.float32, gen)
    for module in (torch, ops):
        with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
            module.mul(column, row, out=column)


LAYOUTS = {
    # inner dims of 64 or more: a block of the inner dim per program (ROWS)
    "long rows broadcast": lambda g: (
        make((4, 1, 100), torch.float32, g),
        make((3, 100), torch.float32, g),
    ),
    "long rows strided": lambda g: (
        make((6, 300), torch.float32, g)[:, ::2],
        make((150,), torch.float32, g),
    ),
    "transposed": lambda g: (make((6, 5), torch.float32, g).t(), make((5, 6), torch.float32, g)),
    "strided": lambda g: (
        make((8, 12), torch.float32, g)[::2, 1::3],
        make((4, 4), torch.float32, g),
    ),
    "broadcast": lambda g: (make((3, 1, 4), torch.float32, g), make((5, 1), torch.float32, g)),
    "expanded": lambda g: (
        make((4,), torch.float32, g).expand(3, 4),
        make((3, 4), torch.float32, g),
    ),
    "empty": lambda g: (torch.empty(0, 3), make((3,), torch.float32, g)),
    "one": lambda g: (make((1,), torch.float32, g), make((1, 1), torch.float32, g)),
    "zero-dim": lambda g: (make((), torch.float32, g), make((), torch.float32, g)),
    "rank6": lambda g: (
        make((2, 3, 1, 2, 3, 2), torch.float32, g),
        make((1, 2, 1, 2), torch.float32, g),
    ),
    "permuted": lambda g: (
        make((2, 3, 4), torch.float32, g).permute(2, 0, 1),
        make((4, 2, 3), torch.float32, g),
    ),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_layouts_compiled(layout, gen, compiled):
    """One scalar function, many index spaces: each collapses to its fewest dims first (the
    transposed and permuted pairs walk in memory order)."""
    x, y = LAYOUTS[layout](gen)
    result = ops.add(x, y)
    assert_matches(result, reference(torch.add, x, y))
    if layout == "permuted":
        assert result.stride() == x.stride()  # the output follows the operand's memory order


def test_representative_ops_compiled(gen, compiled):
    """A few ops compiled for the CPU in the default tier: a scalar operand, a bool result, an
    int dtype, a mask, a transcendental and a conversion."""
    x, y = make((5, 7), torch.float16, gen), make((7,), torch.float32, gen)
    assert_matches(ops.mul(x, 2.5), reference(torch.mul, x, 2.5))
    assert_matches(ops.lt(x, y), reference(torch.lt, x, y))
    i = make((9,), torch.int64, gen)
    assert_matches(ops.remainder(i, 7), reference(torch.remainder, i, 7))
    assert_matches(ops.where(x > 0, x, y), reference(torch.where, x > 0, x, y))
    assert_matches(ops.gelu(x), reference(F.gelu, x))
    assert_matches(ops.to(y, torch.bfloat16), y.to(torch.bfloat16))


def test_naiad_imports_without_torch():
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "import naiad, naiad.language\n"
        "assert 'naiad.ops' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_naiad_ops_leaves_dynamo_unloaded_until_torch_compile():
    """Importing naiad.ops does not import torch._dynamo (about a second; graph_breaks.EagerTwin
    marks its eager twins when torch.compile imports it), and after that import they are marked."""
    code = (
        "import sys, torch, naiad.ops as ops\n"
        "assert 'torch._dynamo' not in sys.modules\n"
        "from naiad.ops.graph_entries import _EAGER_SDPA\n"
        "assert _EAGER_SDPA.marked is None\n"
        "import torch._dynamo\n"
        "assert getattr(_EAGER_SDPA.marked, '_torchdynamo_disable', False)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.full  # torch.compile's first trace costs 10-20 s on the CI machine
def test_registered_ops_run_under_torch_compile(monkeypatch, gen, interpreted):
    """torch.compile (aot_eager) traces with torch's own meta kernels and runs the graph's ATen
    ops eagerly: the registered ones are Naiad's, forward and backward."""
    calls = _calls(monkeypatch, "_softmax.default")
    x = make((4, 8), torch.float32, gen)
    w = make((8, 5), torch.float32, gen).requires_grad_()

    def f(x, w):
        return torch.softmax(x @ w, -1).max()

    expected = [f(x, w), *torch.autograd.grad(f(x, w), w)]
    torch._dynamo.reset()
    with ops.use():
        y = torch.compile(f, backend="aot_eager")(x, w)
        actual = [y, *torch.autograd.grad(y, w)]
    assert calls
    for a, e in zip(actual, expected, strict=True):
        assert_matches(a, e)
