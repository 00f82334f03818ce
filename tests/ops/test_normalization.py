"""softmax, log_softmax, layer_norm, rms_norm, group_norm and batch_norm of naiad.ops against
torch with a float64 reference, forward and backward (against torch's autograd), called
directly and through the switch. The default tier runs in the interpreter (softmax and
layer_norm also compiled); the full tier adds fp16 and bf16, interpreted and compiled."""

import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from ops_helpers import FLOATS, assert_matches, long_rows_with_extremes, make

import naiad.language as tl
import naiad.ops as ops
from naiad.ops.normalization.rms_norm import fused_rms_norm_backward
from naiad.ops.normalization.softmax import softmax_kernel

FULL = pytest.mark.full
DTYPES = [torch.float32] + [pytest.param(d, marks=FULL) for d in FLOATS[1:]]


def _leaves(gen, dtype, *shapes):
    return [make(s, dtype, gen).requires_grad_() for s in shapes]


def _forward_and_grads(fn, leaves, grad):
    out = fn(*leaves)
    return [out, *torch.autograd.grad(out, leaves, grad)]


def _check(ours, theirs, leaves, gen, scale=1.0):
    """ours(*leaves) and its gradients against theirs on float64 copies, rounded back (every
    normalization's output has its input's shape)."""
    grad = make(leaves[0].shape, leaves[0].dtype, gen)
    wide = [t.detach().double().requires_grad_() for t in leaves]
    expected = _forward_and_grads(theirs, wide, grad.double())
    actual = _forward_and_grads(ours, leaves, grad)
    for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
        assert_matches(a, e.to(a.dtype), scale, normwise=i > 0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize(
    "shape, dim",
    [((6, 37), -1), ((3, 5, 4), 1), ((2, 1500), 1), ((2, 7, 3, 20), 1), ((6, 40), 0)],
)  # (the last two: the CPU's column form, softmax_columns.py)
def test_softmax(shape, dim, log, dtype, gen, backend):
    ours, theirs = (ops.log_softmax, torch.log_softmax) if log else (ops.softmax, torch.softmax)
    _check(lambda x: ours(x, dim), lambda x: theirs(x, dim), _leaves(gen, dtype, shape), gen, 4)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(affine, dtype, gen, backend):
    x, w, b = _leaves(gen, dtype, (4, 3, 24), (3, 24), (3, 24))
    if affine:
        _check(lambda *a: ops.layer_norm(a[0], (3, 24), a[1], a[2]),
               lambda *a: F.layer_norm(a[0], (3, 24), a[1], a[2]), [x, w, b], gen, 8)  # fmt: skip
    else:
        _check(lambda a: ops.layer_norm(a, 24), lambda a: F.layer_norm(a, (24,)), [x], gen, 8)


@pytest.mark.parametrize("weight", [True, False])
def test_layer_norm_over_every_dim(weight, gen, interpreted):
    """A normalized shape that is the input's whole shape: the parameters' gradients are
    summed over no dims (a sum over none sums over all: they came back as one number)."""
    x, w, b = _leaves(gen, torch.float32, (1, 2, 3), (1, 2, 3), (1, 2, 3))
    leaves = [x, w, b] if weight else [x, b]
    pick = (lambda a: (a[1], a[2])) if weight else (lambda a: (None, a[1]))
    _check(lambda *a: ops.layer_norm(a[0], (1, 2, 3), *pick(a)),
           lambda *a: F.layer_norm(a[0], (1, 2, 3), *pick(a)), leaves, gen, 8)  # fmt: skip
    with ops.use():
        _check(lambda *a: F.layer_norm(a[0], (1, 2, 3), *pick(a)),
               lambda *a: F.layer_norm(a[0], (1, 2, 3), *pick(a)), leaves, gen, 8)  # fmt: skip


@pytest.mark.parametrize("dtype", DTYPES)
def test_rms_norm(dtype, gen, backend):
    x, w = _leaves(gen, dtype, (5, 16), (16,))
    _check(lambda a, b: ops.rms_norm(a, 16, b, 1e-6),
           lambda a, b: F.rms_norm(a, (16,), b, 1e-6), [x, w], gen, 8)  # fmt: skip


def test_strided_parameters_and_last_dim_results(gen, interpreted):
    """A weight and bias that are every other element of a vector (read as they lie, not as
    contiguous), and softmax over the last dim of 3 dims and of a 0-dim tensor (its result is
    allocated in the input's shape, no view)."""
    x, w, b = _leaves(gen, torch.float32, (5, 16), (32,), (32,))
    _check(lambda a, c: ops.rms_norm(a, 16, c[::2], 1e-6),
           lambda a, c: F.rms_norm(a, (16,), c[::2], 1e-6), [x, w], gen, 8)  # fmt: skip
    _check(lambda a, c, d: ops.layer_norm(a, 16, c[::2], d[1::2]),
           lambda a, c, d: F.layer_norm(a, (16,), c[::2], d[1::2]), [x, w, b], gen, 8)  # fmt: skip
    _check(lambda a: ops.softmax(a, -1), lambda a: torch.softmax(a, -1),
           _leaves(gen, torch.float32, (2, 3, 5)), gen, 4)  # fmt: skip
    scalar = make((), torch.float32, gen)
    assert_matches(ops.log_softmax(scalar, 0), torch.log_softmax(scalar, 0))


@pytest.mark.parametrize(
    "shape, normalized, affine",
    [((3, 40, 300), (300,), True), ((4, 3, 700), (3, 700), True), ((6, 20), (20,), False)],
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_rms_norm_backward_layouts(shape, normalized, affine, dtype, gen, compiled):
    """The fused backward over many programs (the weight's gradient summed over their rows),
    rows longer than a block, several normalized dims, no weight, and a transposed input."""
    x = make(shape[::-1], dtype, gen).t() if len(shape) == 2 else make(shape, dtype, gen)
    leaves = [x.requires_grad_()]
    if affine:
        leaves.append(make(normalized, dtype, gen).requires_grad_())
    _check(lambda a, b=None: ops.rms_norm(a, normalized, b, 1e-5),
           lambda a, b=None: F.rms_norm(a, normalized, b, 1e-5), leaves, gen, 8)  # fmt: skip


@pytest.mark.parametrize("dtype", DTYPES)
def test_group_norm(dtype, gen, backend):
    x, w, b = _leaves(gen, dtype, (3, 6, 4, 5), (6,), (6,))
    _check(lambda *a: ops.group_norm(a[0], 3, a[1], a[2]),
           lambda *a: F.group_norm(a[0], 3, a[1], a[2]), [x, w, b], gen, 8)  # fmt: skip


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm(training, dtype, gen, backend):
    x, w, b = _leaves(gen, dtype, (4, 3, 5), (3,), (3,))
    stats = [make((3,), dtype, gen), make((3,), dtype, gen, low=0.5, high=2)]
    ours_stats = [s.clone() for s in stats]
    theirs_stats = [s.clone().double() for s in stats]
    _check(lambda *a: ops.batch_norm(a[0], *ours_stats, a[1], a[2], training),
           lambda *a: F.batch_norm(a[0], *theirs_stats, a[1], a[2], training),
           [x, w, b], gen, 8)  # fmt: skip
    for ours, theirs in zip(ours_stats, theirs_stats, strict=True):
        assert_matches(ours, theirs.to(dtype), 2)


def test_normalizations_through_the_switch(gen, interpreted):
    """torch's own functions reach Naiad's registered forward and backward ops."""
    x, w, b = _leaves(gen, torch.float32, (2, 4, 3, 5), (4,), (4,))
    cases = [
        (lambda *a: torch.softmax(a[0], 1), [x]),
        (lambda *a: torch.log_softmax(a[0], -1), [x]),
        (lambda *a: F.layer_norm(a[0], (5,)), [x]),
        (lambda *a: F.group_norm(a[0], 2, a[1], a[2]), [x, w, b]),
        (lambda *a: F.batch_norm(a[0], None, None, a[1], a[2], True), [x, w, b]),
    ]
    for fn, leaves in cases:
        grad = make(x.shape, torch.float32, gen)
        expected = _forward_and_grads(fn, leaves, grad)
        with ops.use():
            actual = _forward_and_grads(fn, leaves, grad)
        for a, e in zip(actual, expected, strict=True):
            assert_matches(a, e, 8)


def test_softmax_and_layer_norm_compiled(gen, compiled):
    x, w, b = _leaves(gen, torch.float32, (9, 40), (40,), (40,))
    _check(lambda a: ops.softmax(a, 1), lambda a: torch.softmax(a, 1), [x], gen, 4)
    for log in (False, True):  # along channels, where the operand lies (softmax_columns.py)
        ours, theirs = (ops.log_softmax, torch.log_softmax) if log else (ops.softmax, torch.softmax)
        _check(
            lambda a: ours(a, 1),
            lambda a: theirs(a, 1),
            _leaves(gen, torch.float32, (2, 19, 4, 8)),
            gen,
            4,
        )
    _check(lambda *a: ops.layer_norm(a[0], 40, a[1], a[2]),
           lambda *a: F.layer_norm(a[0], (40,), a[1], a[2]), [x, w, b], gen, 8)  # fmt: skip


@pytest.mark.parametrize("n", [300, 1100])
def test_layer_norm_of_long_rows_compiled(n, gen, compiled):
    """Rows of 256 and more take a program each on the CPU: a row that fits one block (300, a
    masked tail) is read once, a longer one (1100) in three passes over 1024-blocks."""
    x, w, b = _leaves(gen, torch.float32, (3, n), (n,), (n,))
    _check(lambda *a: ops.layer_norm(a[0], n, a[1], a[2]),
           lambda *a: F.layer_norm(a[0], (n,), a[1], a[2]), [x, w, b], gen, 8)  # fmt: skip


def test_fully_masked_softmax_row_is_nan(backend):
    x = torch.tensor([[float("-inf")] * 3, [0.0, 1.0, 2.0]])
    assert_matches(ops.softmax(x, 1), torch.softmax(x, 1))
    # along a dim that is not the last (the CPU's column form): a column of -inf, one with a NaN
    y = torch.arange(2 * 3 * 16, dtype=torch.float32).reshape(2, 3, 16) / 7
    y[0, :, 4], y[1, 1, 9] = float("-inf"), float("nan")
    for fn in (ops.softmax, ops.log_softmax):
        assert_matches(fn(y, 1), getattr(torch, fn.__name__)(y, 1))


def test_gpu_rows_move_as_vectors():
    """Compiled for an H100/H200 without one: softmax over rows of 4096 loads and stores
    16-byte vectors (the row length is specialized; unspecialized, its mask was element-wise
    and every access scalar: softmax at 0.84 of torch on an H200)."""
    x = np.zeros((64, 4096), np.float32)
    constants = (False, tl.float32, True, False, 1, 4096)  # LOG ... BLOCK_N: one row a program
    compiled = softmax_kernel.warmup(
        x, x, 64, 4096, 4096, 1, 4096, *constants, grid=(1,), target="cuda:sm_90a", num_warps=8
    )
    accesses = set(re.findall(r"(?:ld|st)\.global\S*", compiled.asm["ptx"]))
    assert accesses == {"ld.global.v4.b32", "st.global.v4.b32"}


def test_fused_rms_norm_ops(gen, interpreted):
    """ATen's `_fused_rms_norm` (what torch's rms_norm calls on a GPU) under the switch: Naiad's
    forward, then Naiad's `_fused_rms_norm_backward` under torch's derivative formula; output,
    rstd and both gradients against torch's rms_norm in float64. A gradient `output_mask`
    leaves out is None."""
    x = make((3, 5, 16), torch.float32, gen).requires_grad_()
    w = make((16,), torch.float32, gen).requires_grad_()
    g = make((3, 5, 16), torch.float32, gen)
    wide = [t.detach().double().requires_grad_() for t in (x, w)]
    expected = F.rms_norm(wide[0], (16,), wide[1], 1e-6)
    expected_grads = torch.autograd.grad(expected, wide, g.double())
    with ops.use(include=["fused_rms_norm"]):
        assert ops.registered() == ["_fused_rms_norm.default", "_fused_rms_norm_backward.default"]
        out, rstd = torch.ops.aten._fused_rms_norm(x, [16], w, 1e-6)
        grads = torch.autograd.grad(out, (x, w), g)
    assert_matches(out, expected.float(), 8)
    rms = wide[0].detach().pow(2).mean(-1, keepdim=True).add(1e-6).rsqrt()
    assert rstd.shape == (3, 5, 1)
    assert_matches(rstd, rms.float(), 8)
    for actual, e in zip(grads, expected_grads, strict=True):
        assert_matches(actual, e.float(), 16, normwise=True)
    dx, dw = fused_rms_norm_backward(g, x.detach(), [16], rstd, None, [True, False])
    assert dw is None and dx.shape == x.shape


def test_softmax_under_a_functorch_transform_says_what_it_needs(gen, compiled):
    """A recorded call outside functorch transforms takes the C apply (differentiable.py), one
    inside them torch's `Function.apply`, which explains that a setup_context is needed."""
    x = make((4, 24), torch.float32, gen)
    with pytest.raises(RuntimeError, match="setup_context"):
        torch.func.grad(lambda a: ops.softmax(a, 1)[:, 0].sum())(x)
    _check(
        lambda a: ops.softmax(a, 1),
        lambda a: torch.softmax(a, 1),
        _leaves(gen, torch.float32, (4, 24)),
        gen,
        4,
    )


def test_norms_refuse_shapes_torch_refuses(gen, interpreted):
    """An input that does not end in the normalized shape (it was normalized over its own last
    dim), a weight or bias of another shape (read past its end), channels that do not split
    into the groups and statistics not per channel raise as torch does, directly and through
    the switch."""
    x = make((4, 6), torch.float32, gen)
    short = make((5,), torch.float32, gen)
    cases = [
        ("expected input with shape", lambda m: m.layer_norm(x, (5,))),
        ("same shape as normalized_shape", lambda m: m.layer_norm(x, (6,), short)),
        ("same shape as normalized_shape", lambda m: m.layer_norm(x, (6,), None, short)),
        ("same shape as normalized_shape", lambda m: m.rms_norm(x, [6], short)),
        ("expected input with shape", lambda m: m.rms_norm(x, [2, 6])),
        ("divisible by num_groups", lambda m: m.group_norm(x.view(2, 6, 2), 4)),
        ("size equal to the number of channels", lambda m: m.group_norm(x.view(2, 6, 2), 3, short)),
        (
            "running_mean should contain 6 elements",
            lambda m: m.batch_norm(x, short, short.abs(), training=False),
        ),
    ]
    for words, call in cases:
        for module in (F, ops):
            with pytest.raises(RuntimeError, match=words):
                call(module)
        with ops.use(), pytest.raises(RuntimeError, match=words):
            call(F)


def test_softmax_of_integers_raises_unless_cast(interpreted):
    """Integers have no softmax (its values were truncated to 0 before); dtype= casts first."""
    x = torch.tensor([1, 2, 3])
    for fn in (ops.softmax, ops.log_softmax):
        with pytest.raises(NotImplementedError, match=r"not implemented for torch\.int64"):
            fn(x, 0)
    assert_matches(ops.softmax(x, 0, dtype=torch.float32), torch.softmax(x.float(), 0))


@pytest.mark.parametrize("where", ["interpreter", "cpu"])
def test_long_rows_rescale_their_sum_as_the_max_grows(where, gen):
    """Rows longer than a block take the max and the sum of exponentials in one pass, the sum
    rescaled whenever a later block raises the max (reduce/kernels.row_max_sum_exp): a row
    rising block by block past exp's range, -inf leading blocks, a row all -inf, a NaN and a
    +inf in a later block give torch's softmax, log_softmax and logsumexp."""
    from naiad import knobs

    x = long_rows_with_extremes(gen)  # three blocks of the CPU's 1024 lanes
    with knobs.override(NAIAD_BACKEND=where):
        for ours, theirs in ((ops.softmax, torch.softmax), (ops.log_softmax, torch.log_softmax),
                             (ops.logsumexp, torch.logsumexp)):  # fmt: skip
            expected = theirs(x.double(), 1).float()
            torch.testing.assert_close(ours(x, 1), expected, rtol=1e-5, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("where", ["interpreter", "cpu"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_few_long_rows_softmax_in_parts(where, dtype, gen, monkeypatch):
    """Rows too few for the device, each split in parts (reduce/split_exp_sums.py): the parts'
    peaks and sums folded into the row's give torch's softmax, log_softmax and logsumexp, the
    extremes included (whole parts of -inf, a NaN and a +inf in a late part). Made here with
    32 threads and parts of 16 elements at least: 8 rows in 4 parts of 1024."""
    import sys

    from naiad import knobs
    from naiad.ops.kept import KeptTable
    from naiad.ops.reduce import split_rows
    from naiad.ops.reduce.rows import as_rows

    monkeypatch.setattr(split_rows, "LEAST_PART", 16)
    softmax_module = sys.modules["naiad.ops.normalization.softmax"]
    monkeypatch.setattr(softmax_module, "_FORWARDS", KeptTable(16))  # no plan of a run before
    x = long_rows_with_extremes(gen, 4096).to(dtype)
    split = []
    for module, name in (("naiad.ops.normalization.softmax", "split_softmax"),
                         ("naiad.ops.reduce.reductions", "split_logsumexp")):  # fmt: skip
        taken = getattr(sys.modules[module], name)

        def recorded(rows, parts, *rest, _taken=taken):
            split.append(parts)
            return _taken(rows, parts, *rest)

        monkeypatch.setattr(sys.modules[module], name, recorded)
    tolerance = {torch.float32: 1e-5, torch.bfloat16: 1e-2}[dtype]
    with knobs.override(NAIAD_BACKEND=where, NAIAD_NUM_THREADS=32):
        assert split_rows.split_parts(as_rows(x, [1]), x.device) == 4
        for ours, theirs in ((ops.softmax, torch.softmax), (ops.log_softmax, torch.log_softmax),
                             (ops.logsumexp, torch.logsumexp)):  # fmt: skip
            expected = theirs(x.double(), 1).to(dtype)
            torch.testing.assert_close(ours(x, 1), expected, rtol=tolerance, atol=tolerance,
                                       equal_nan=True)  # fmt: skip
    assert split == [4, 4, 4]
