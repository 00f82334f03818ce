"""Direct calls as torch custom ops (mirrors.py, attention_ops.py, graph_entries.py): each
exported op is a `torch.ops.naiad` node under torch.compile or listed to run eagerly; fake
tensors take their shapes and dtypes from torch's meta kernels; eager calls that record a
gradient differentiate through the ops' formulas (derivatives.py, row_derivatives.py); compiled
functions calling naiad.ops directly (fullgraph, aot_eager) give float64 torch's values and
gradients, with dynamic shapes too (full tier: a compile costs seconds)."""

import types

import pytest
import torch
import torch.nn.functional as F
from ops_helpers import assert_matches, make, reference
from paged_reference import paged_cache
from torch._subclasses.fake_tensor import FakeTensorMode
from varlen_reference import prefix_sums, varlen_reference

import naiad
import naiad.ops as ops
from naiad.ops import composed
from naiad.ops.graph_breaks import EAGER
from naiad.ops.graph_entries import ADAPTERS
from naiad.ops.mirrors import DATA_DEPENDENT, mirrored

N = torch.ops.naiad
_CONTROLS = {"Unsupported", "disable", "enable", "registered", "use", "pointwise"}


def test_every_export_is_a_graph_op_or_listed_to_run_eagerly():
    """An exported op is marked to run eagerly exactly where it has no custom op: listed in
    EAGER, an in-place variant, or an op whose result's shape is its data's; the ops composed
    of others (composed.py) are neither, dynamo traces them through."""
    packets = {overload.split(".")[0] for overload in mirrored()}
    for name in set(ops.__all__) - _CONTROLS:
        entry = getattr(ops, name)
        eager = name in EAGER or name.endswith("_") or name in DATA_DEPENDENT
        assert getattr(entry, "runs_eagerly_under_compile", False) == eager, name
        if not eager and name not in ADAPTERS and name not in composed.__all__:
            assert name in packets or name == "norm", name  # norm: linalg_vector_norm
    assert "relu.default" in mirrored() and "relu.out" not in mirrored()
    assert "nonzero.default" not in mirrored()  # its result's shape is the data's


def test_fake_tensors_take_shapes_and_dtypes_from_meta_kernels():
    with FakeTensorMode():
        x = torch.empty(3, 4, dtype=torch.float16)
        i = torch.empty(3, 4, dtype=torch.int32)
        assert N.add(i, 2.5).dtype == torch.float32
        assert N.sum(x, [1], True).shape == (3, 1)
        out, mean, rstd = N.native_layer_norm(x, [4], None, None, 1e-5)
        assert (out.shape, out.dtype, mean.shape, rstd.dtype) == ((3, 4), x.dtype, (3, 1), x.dtype)
        assert N.mm(x, x.t()).shape == (3, 3)
        assert N.max.dim(x, 1)[1].dtype == torch.int64
        q, kv = torch.empty(2, 8, 5, 32), torch.empty(2, 2, 7, 32)
        out, lse = N.attention(q, kv, kv, None, True, None)
        assert (out.shape, lse.shape, lse.dtype) == ((2, 8, 5, 32), (2, 8, 5), torch.float32)
        dq, dk, dv = N.attention_backward(q, kv, kv, None, True, None, out, out, lse)
        assert (dq.shape, dk.shape, dv.shape) == (q.shape, kv.shape, kv.shape)
        cache = torch.empty(6, 16, 2, 32)
        tables, lens = torch.empty(3, 2, dtype=torch.int32), torch.empty(3, dtype=torch.int32)
        decoded = N.paged_attention_decode(
            q[0].transpose(0, 1)[:3], cache, cache, tables, lens, None, None, 32
        )
        assert decoded.shape == (3, 8, 32)


def test_custom_ops_run_naiad_kernels_and_hand_torch_what_they_do_not_handle(gen, interpreted):
    x, y = make((4, 5), torch.float32, gen), make((5,), torch.float32, gen)
    assert_matches(N.relu(x), reference(torch.relu, x))
    assert_matches(N.sub(x, 2.0, 3), reference(torch.sub, x, 2.0, alpha=3))
    assert_matches(N.add(x, y, alpha=2), reference(torch.add, x, y, alpha=2))
    z = torch.complex(x, x)  # Unsupported by Naiad: the ATen overload computes it
    assert torch.equal(N.add(z, z), z + z)


def test_eager_calls_recording_a_gradient_differentiate_through_custom_ops(gen, interpreted):
    x = make((4, 6), torch.float32, gen).requires_grad_()
    y = make((6,), torch.float32, gen).requires_grad_()
    labels = torch.randint(0, 6, (4,), generator=gen)

    def f(m, x, y):
        z = m.mul(m.exp(m.mul(x, 0.3)), y) + m.sum(m.relu(x), 1, keepdim=True)
        return m.nll_loss(m.log_softmax(z, 1), labels) + m.mean(m.mm(z, z.t()))

    actual = torch.autograd.grad(f(ops, x, y), (x, y))
    assert ops.relu(x).grad_fn is not None
    x64, y64 = (t.detach().double().requires_grad_() for t in (x, y))
    expected = torch.autograd.grad(f(_TORCH, x64, y64), (x64, y64))
    for a, e in zip(actual, expected, strict=True):
        assert_matches(a, e.float())


def _compiled(f, graphs, **options):
    """f compiled with fullgraph=True through aot_eager, keeping dynamo's graphs."""

    def backend(gm, inputs):
        graphs.append(gm)
        return torch._dynamo.backends.debugging.aot_eager(gm, inputs)

    torch._dynamo.reset()
    return torch.compile(f, fullgraph=True, backend=backend, **options)


def _naiad_nodes(graphs) -> set:
    return {
        str(node.target).split(".")[1]
        for gm in graphs
        for node in gm.graph.nodes
        if node.op == "call_function" and str(node.target).startswith("naiad.")
    }


def _pointwise(m, x, y, w):
    z = m.gelu(m.mul(m.sigmoid(x), y)) + m.div(m.tanh(x), m.add(m.exp(y), 1.0))
    return m.sum(z + m.where(m.gt(x, 0), m.silu(x), m.sqrt(m.abs(x))))


def _reductions(m, x, y, w):
    return m.sum(m.amax(x, 1)) + m.mean(m.logsumexp(x, 0)) + m.sum(m.mul(m.sum(x, 1, True), x))


def _norms(m, x, y, w):
    z = m.softmax(x, -1) + m.log_softmax(x, 0) + m.layer_norm(x, (6,), y, y)
    return m.sum(m.mul(z, m.rms_norm(x, [6], y)))


def _products(m, x, y, w):
    z = m.addmm(y, x, m.mm(x.t(), x)) + m.bmm(x.reshape(2, 2, 6), w.reshape(2, 6, 3)).sum()
    return m.sum(m.mul(z, z))


def _composed(m, x, y, w):
    logits = m.linear(m.matmul(x.t(), w), w, y[:4])
    return m.cross_entropy(logits, torch.tensor([0, 3, 1, 1, 2, 0]), label_smoothing=0.1)


def _losses(m, x, y, w):
    rows = m.embedding(x, torch.tensor([3, 0, 3, 1]))
    return m.nll_loss(m.log_softmax(m.mul(rows, y), 1), torch.tensor([5, 0, 2, 2]))


_TORCH_NAMES = "exp mul relu mm mean sum amax log_softmax softmax sigmoid tanh div add where gt"
_TORCH_NAMES += (
    " sqrt abs logsumexp addmm bmm cat maximum minimum max clamp_min lerp masked_fill addcmul"
)
_TORCH_NAMES += " addcdiv floor var std cumsum gather clamp"
# The ops of the tests' functions, from torch.
_TORCH = types.SimpleNamespace(
    **{name: getattr(torch, name) for name in _TORCH_NAMES.split()},
    nll_loss=F.nll_loss,
    gelu=F.gelu,
    silu=F.silu,
    layer_norm=F.layer_norm,
    rms_norm=F.rms_norm,
    embedding=lambda weight, indices: F.embedding(indices, weight),
    norm=lambda x, order, dim: torch.linalg.vector_norm(x, order, dim),
    matmul=torch.matmul,
    linear=F.linear,
    cross_entropy=F.cross_entropy,
)


@pytest.mark.full  # torch.compile's first trace costs 10-20 s on the CI machine
@pytest.mark.parametrize(
    ("f", "nodes"),
    [
        (_pointwise, {"gelu", "mul", "sigmoid", "div", "tanh", "add", "exp", "where", "silu"}),
        (_reductions, {"amax", "sum", "mean", "logsumexp"}),
        (_norms, {"_softmax", "_log_softmax", "native_layer_norm", "_fused_rms_norm"}),
        (_products, {"addmm", "mm", "bmm"}),
        (_losses, {"embedding", "nll_loss_forward", "_log_softmax"}),
        (_composed, {"mm", "addmm", "_log_softmax", "nll_loss_forward", "masked_fill"}),
    ],
    ids=["pointwise", "reductions", "norms", "products", "losses", "composed"],
)
def test_compiled_direct_calls_are_graph_nodes_with_torchs_values_and_gradients(
    f, nodes, gen, interpreted
):
    x = make((4, 6), torch.float32, gen).requires_grad_()
    y = make((6,), torch.float32, gen).requires_grad_()
    w = make((4, 9), torch.float32, gen).requires_grad_()
    graphs = []
    actual = _compiled(f, graphs)(ops, x, y, w)
    grads = torch.autograd.grad(actual, (x, y, w), allow_unused=True)
    assert nodes <= _naiad_nodes(graphs), _naiad_nodes(graphs)
    inputs64 = [t.detach().double().requires_grad_() for t in (x, y, w)]
    expected = f(_TORCH, *inputs64)
    assert_matches(actual, expected.float(), scale=4)
    for a, e in zip(grads, torch.autograd.grad(expected, inputs64, allow_unused=True), strict=True):
        assert (a is None) == (e is None)
        if a is not None:
            assert_matches(a, e.float(), scale=4)


@pytest.mark.full  # torch.compile's first trace costs 10-20 s on the CI machine
def test_compiled_attention_calls_are_graph_nodes_with_torchs_values_and_gradients(
    gen, interpreted
):
    q = make((1, 4, 5, 16), torch.float32, gen, -1, 1)
    k, v = (make((1, 2, 7, 16), torch.float32, gen, -1, 1) for _ in range(2))
    packed = [make((7, 2, 16), torch.float32, gen, -1, 1) for _ in range(3)]
    cu = prefix_sums([3, 4])
    inputs = [t.requires_grad_() for t in (q, k, v, *packed)]

    def f(q, k, v, pq, pk, pv):
        a = ops.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        b = ops.varlen_attention(pq, pk, pv, cu, cu, 4, 4, causal=True)
        return ops.sum(ops.mul(a, a)) + ops.sum(ops.mul(b, b))

    graphs = []
    actual = _compiled(f, graphs)(*inputs)
    grads = torch.autograd.grad(actual, inputs)
    assert {"attention", "varlen_attention"} <= _naiad_nodes(graphs)
    q64, k64, v64, *packed64 = (t.detach().double().requires_grad_() for t in inputs)
    a = F.scaled_dot_product_attention(q64, k64, v64, is_causal=True, enable_gqa=True)
    b = varlen_reference(*packed64, cu, cu, 16**-0.5, True)
    expected = (a * a).sum() + (b * b).sum()
    assert_matches(actual, expected.float(), scale=4)
    for g, e in zip(grads, torch.autograd.grad(expected, [q64, k64, v64, *packed64]), strict=True):
        assert_matches(g, e.float(), scale=16, normwise=True)


@pytest.mark.full  # torch.compile's first trace costs 10-20 s on the CI machine
def test_compiled_paged_decode_is_a_graph_node(gen, interpreted):
    k_cache, v_cache, tables, seq_lens = paged_cache([5, 17, 1], 8, 2, 16, torch.float32, gen)
    q = make((3, 4, 16), torch.float32, gen, -1, 1)

    def f(q):
        return ops.paged_attention_decode(q, k_cache, v_cache, tables, seq_lens, max_seq_len=17)

    graphs = []
    actual = _compiled(f, graphs)(q)
    assert "paged_attention_decode" in _naiad_nodes(graphs)
    assert torch.equal(actual, f(q))


@pytest.mark.full  # torch.compile's first trace costs 10-20 s on the CI machine
def test_compiled_direct_calls_take_dynamic_shapes(gen, interpreted):
    """One graph of symbolic sizes serves every shape: the fake implementations are torch's
    meta kernels, which take symbolic sizes."""

    def f(m, x):
        return m.sum(m.mul(m.softmax(m.relu(x), -1), x), 1)

    graphs = []
    compiled = _compiled(f, graphs, dynamic=True)
    for shape in ((4, 8), (6, 8), (3, 5)):
        x = make(shape, torch.float32, gen)
        assert_matches(compiled(ops, x), reference(lambda x: f(_TORCH, x), x))
    assert len(graphs) == 1


def test_a_direct_call_compiles_to_its_custom_op(gen, interpreted):
    """The default tier's one compile (dynamo alone, backend="eager": seconds, no AOT trace)."""
    x = make((3, 4), torch.float32, gen)
    graphs = []

    def backend(gm, inputs):
        graphs.append(gm)
        return gm

    def f(m, x):
        y = m.stack([m.relu(m.add(x, 1.0)), x], 1)
        return y, m.argsort(x, dim=1, stable=True), m.isfinite(m.log(x))

    torch._dynamo.reset()
    compiled = torch.compile(f, fullgraph=True, backend=backend)
    for a, e in zip(compiled(ops, x), f(torch, x.double()), strict=True):
        assert_matches(a, e.float() if e.dtype == torch.float64 else e)
    assert {"relu", "add", "cat", "sort", "isnan", "isinf", "log"} <= _naiad_nodes(graphs)


@naiad.jit
def _double(x):
    return x + x


@pytest.mark.full  # torch.compile's first trace costs 10-20 s on the CI machine
def test_calls_without_a_custom_op_run_eagerly_between_graphs(gen, interpreted):
    """out=, in-place variants, listed ops and user-made pointwise ops end the graph and run
    on real tensors; dynamo traced into the launch before (graph_breaks.py)."""
    double = ops.pointwise()(_double)
    x = make((4, 8), torch.float32, gen)

    def f(x):
        out = torch.empty_like(x)
        ops.exp(x, out=out)
        return ops.relu_(double(ops.one_hot(ops.argmax(out, 1), 8) + out))

    torch._dynamo.reset()
    actual = torch.compile(f, backend="aot_eager")(x)
    assert_matches(
        actual, reference(lambda x: torch.relu(2 * (F.one_hot(x.exp().argmax(1), 8) + x.exp())), x)
    )


def _extrema(m, x, y):
    ties = m.cat([x[0, :3], y[3:]])  # x's first row in three places: split gradients
    return m.sum(m.mul(m.maximum(x, ties), x)) + m.sum(m.minimum(x, y)) + m.sum(m.max(x, 1)[0])


def _selections(m, x, y):
    z = m.clamp_min(x, 0.1) + m.lerp(x, y, 0.3) + m.lerp(x, y, x) + m.masked_fill(x, x > 0.3, 2.0)
    z = z + m.addcmul(x, y, x, value=0.5) + m.addcdiv(y, x, m.add(y, 4.0), value=2.0)
    z = z + m.clamp(x, m.mul(y, 0.5), m.add(y, 0.2)) + m.div(x, y, rounding_mode="floor")
    return m.sum(m.mul(z, z)) + m.sum(m.floor(m.mul(x, 3.0)))


def _statistics(m, x, y):
    z = m.var(x, 1) + m.std(x, 1, correction=0) + m.norm(x, 2, 1) + m.norm(x, 1, 1)
    rows = m.gather(x, 1, torch.tensor([[0, 2], [1, 1], [5, 0], [3, 3]]))
    z = m.sum(m.mul(z, z)) + m.sum(m.mul(m.cumsum(x, 1), x)) + m.sum(m.mul(rows, rows))
    return z + m.var(y, 0)


@pytest.mark.parametrize("f", [_extrema, _selections, _statistics])
def test_more_formulas_give_torchs_gradients(f, gen, interpreted):
    x = make((4, 6), torch.float32, gen, -1, 1).requires_grad_()
    y = make((6,), torch.float32, gen, -1, 1).requires_grad_()
    actual = torch.autograd.grad(f(ops, x, y), (x, y))
    x64, y64 = (t.detach().double().requires_grad_() for t in (x, y))
    expected = torch.autograd.grad(f(_TORCH, x64, y64), (x64, y64))
    for a, e in zip(actual, expected, strict=True):
        assert_matches(a, e.float(), scale=4)
