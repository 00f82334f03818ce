"""naiad.ops on CUDA tensors (`-m gpu`, skipped without a GPU): the same kernels compiled for
the GPU, against torch on float64 copies, and the Llama-style model's step through the switch."""

import importlib
import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F
from attention_dropout_reference import drawn_mask
from attention_dropout_reference import reference as dropout_reference
from ops_helpers import (
    assert_matches,
    check_tiles_spanning_rows,
    long_rows_with_extremes,
    reference,
    tiny_llama_model,
)
from varlen_reference import prefix_sums, varlen_reference

import naiad.ops as ops
from naiad.ops.attention import flash

TinyLlama = tiny_llama_model()

pytestmark = pytest.mark.gpu


def _cuda(*shape, dtype=torch.float32):
    return torch.randn(*shape, device="cuda").to(dtype)


@pytest.fixture
def on_gpu():
    from naiad import knobs

    with knobs.override(NAIAD_BACKEND="auto"):  # compiled for the tensors' device
        yield


def test_tiles_spanning_rows_and_matrices_on_cuda(gen, on_gpu):
    """On a GPU the copies by index take tiles spanning rows and matrices in every dim
    (row_blocks.py), where the CPU's span one."""
    check_tiles_spanning_rows(ops, gen, "cuda")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_pointwise_and_reductions_on_cuda(dtype, on_gpu):
    x, y = _cuda(33, 70, dtype=dtype), _cuda(70, dtype=dtype)
    assert_matches(ops.add(x, y), reference(torch.add, x, y))
    assert_matches(ops.mul(x.t(), 2.5), reference(torch.mul, x.t(), 2.5))
    assert_matches(ops.gelu(x), reference(F.gelu, x), 2)
    assert_matches(ops.where(x > 0, x, y), reference(torch.where, x > 0, x, y))
    assert_matches(ops.sum(x, 1), reference(torch.sum, x, 1), 4)
    assert_matches(ops.sum(x, 0), reference(torch.sum, x, 0), 4)
    assert_matches(ops.amax(x, 1), torch.amax(x, 1))
    assert_matches(ops.argmax(x, 1), torch.argmax(x, 1))
    assert_matches(ops.var(x, 1), reference(torch.var, x, 1), 4)
    assert_matches(ops.cumsum(x, 1), reference(torch.cumsum, x, 1), 8)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_composed_ops_on_cuda(dtype, on_gpu):
    """matmul, linear and cross_entropy (composed.py), values and the scores' gradient."""
    a, b = _cuda(2, 1, 40, 96, dtype=dtype), _cuda(3, 96, 24, dtype=dtype)
    expected = torch.matmul(a.double(), b.double()).to(dtype)
    assert_matches(ops.matmul(a, b), expected, 4 * 96**0.5, normwise=True)
    x, w, bias = _cuda(4, 9, 96, dtype=dtype), _cuda(24, 96, dtype=dtype), _cuda(24, dtype=dtype)
    expected = F.linear(x.double(), w.double(), bias.double()).to(dtype)
    assert_matches(ops.linear(x, w, bias), expected, 4 * 96**0.5, normwise=True)
    scores = _cuda(36, 24, dtype=dtype).requires_grad_()
    labels = torch.randint(0, 24, (36,), device="cuda")
    labels[5] = -100
    loss = ops.cross_entropy(scores, labels, label_smoothing=0.1)
    (grad,) = torch.autograd.grad(loss, scores)
    scores64 = scores.detach().double().requires_grad_()
    loss64 = F.cross_entropy(scores64, labels, label_smoothing=0.1)
    (grad64,) = torch.autograd.grad(loss64, scores64)
    assert_matches(loss, loss64.to(dtype), 4)
    assert_matches(grad, grad64.to(dtype), 4, normwise=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_norms_and_products_on_cuda(dtype, on_gpu):
    x, w, b = _cuda(16, 300, dtype=dtype), _cuda(300, dtype=dtype), _cuda(300, dtype=dtype)
    assert_matches(ops.softmax(x, 1), reference(torch.softmax, x, 1), 4)
    assert_matches(ops.log_softmax(x, 1), reference(torch.log_softmax, x, 1), 4, normwise=True)
    expected = reference(F.layer_norm, x, (300,), w, b)
    assert_matches(ops.layer_norm(x, 300, w, b), expected, 8, normwise=True)
    a, m = _cuda(70, 300, dtype=dtype), _cuda(300, 50, dtype=dtype)
    expected = (a.double() @ m.double()).to(dtype)
    assert_matches(ops.mm(a, m), expected, 4 * 300**0.5, normwise=True)


@pytest.mark.parametrize("n", [5000, 65536])
def test_long_rows_rescale_their_sum_on_cuda(n, gen, on_gpu):
    """softmax, log_softmax and logsumexp over rows longer than a GPU block (one pass for the
    max and the sum of exponentials) against torch's in float64, extremes included; rows of
    65536 are few enough to be split in parts (reduce/split_exp_sums.py), and so are the
    reductions', the variances', the extremes' positions and the running sums (split_rows.py,
    split_moments.py, split_extremes.py, scans.py)."""
    from naiad.ops.reduce.rows import as_rows
    from naiad.ops.reduce.split_rows import split_parts

    x = long_rows_with_extremes(gen, n).cuda()
    assert (split_parts(as_rows(x, [1]), x.device) > 1) == (n == 65536)
    for ours, theirs in ((ops.softmax, torch.softmax), (ops.log_softmax, torch.log_softmax),
                         (ops.logsumexp, torch.logsumexp)):  # fmt: skip
        expected = theirs(x.double(), 1).float()
        torch.testing.assert_close(ours(x, 1), expected, rtol=1e-5, atol=1e-6, equal_nan=True)
    plain = torch.randn(3, n, generator=gen).cuda()
    plain[1, n // 3] = plain[1, n - 5] = 9.0  # a tie in two parts: the first wins
    for ours, theirs in ((ops.sum, torch.sum), (ops.amax, torch.amax), (ops.mean, torch.mean),
                         (ops.var, torch.var), (ops.std, torch.std)):  # fmt: skip
        assert_matches(ours(plain, 1), reference(theirs, plain, 1), n**0.5)
    for ours, theirs in ((ops.argmax, torch.argmax), (ops.argmin, torch.argmin)):
        assert torch.equal(ours(plain, 1), theirs(plain, 1))
        assert ours(plain).item() == theirs(plain).item()  # the flattened: one row
    assert_matches(ops.cumsum(plain, 1), reference(torch.cumsum, plain, 1), n**0.5, normwise=True)


@pytest.mark.parametrize("batch", [None, 8])
@pytest.mark.parametrize("b_layout", ["W.t", "rows"])
def test_products_by_tensor_copies_on_cuda(b_layout, batch, on_gpu):
    """Products that fill the GPU with 128x256 tiles take the tensor-copy kernel on Hopper
    (matmul._copied_tile), mm and bmm: b as F.linear's W.t() and in rows, an M, a K and an N past
    whole tiles (a batch's tiles must not reach the next entry)."""
    from naiad.ops.linalg import matmul

    entries = () if batch is None else (batch,)
    m, n = (1030, 4104) if batch is None else (300, 1000)
    a, w = (
        _cuda(*entries, m, 200, dtype=torch.bfloat16),
        _cuda(*entries, n, 200, dtype=torch.bfloat16),
    )
    b = w.transpose(-1, -2)
    b = b if b_layout == "W.t" else b.contiguous()
    assert matmul._copied_tile(a, b, m, n, 200, batch or 1) == matmul._COPIED_TILE
    product = ops.mm if batch is None else ops.bmm
    expected = (a.double() @ b.double()).to(torch.bfloat16)
    assert_matches(product(a, b), expected, 4 * 200**0.5, normwise=True)
    assert_matches(product(a, b), expected, 4 * 200**0.5, normwise=True)  # the bound launch


@pytest.mark.parametrize("n, k", [(40, 296), (296, 72), (120, 296)])
def test_batched_products_of_a_short_side_on_cuda(n, k, on_gpu):
    """Batches with an N or a K of at most 128 (attention's products at small head dims) take
    the short side's tile, by tensor copies from 65 up (row strides of multiples of 8
    elements, which tensor copies need), partial tiles on every side."""
    from naiad.ops.linalg import matmul

    a, b = _cuda(12, 200, k, dtype=torch.float16), _cuda(12, k, n, dtype=torch.float16)
    by_copies = matmul._copied_tile(a, b, 200, n, k, 12)
    assert by_copies == (matmul._short_side_tile(n, k) if min(n, k) > 64 else None)
    expected = (a.double() @ b.double()).half()
    assert_matches(ops.bmm(a, b), expected, 4 * k**0.5, normwise=True)


def test_rms_norm_through_the_switch_on_cuda(on_gpu, monkeypatch):
    """torch's rms_norm on a GPU calls ATen's _fused_rms_norm and its backward: under the
    switch, Naiad's kernels, with torch's values (float64 reference)."""
    module = importlib.import_module("naiad.ops.normalization.rms_norm")
    calls = []
    forward = module._forward
    monkeypatch.setattr(module, "_forward", lambda *a: calls.append(1) or forward(*a))
    x = _cuda(16, 300).requires_grad_()
    w = _cuda(300).requires_grad_()
    g = _cuda(16, 300)
    wide = [t.detach().double().requires_grad_() for t in (x, w)]
    y64 = F.rms_norm(wide[0], (300,), wide[1], 1e-6)
    expected = [y64, *torch.autograd.grad(y64, wide, g.double())]
    with ops.use():
        y = F.rms_norm(x, (300,), w, 1e-6)
        actual = [y, *torch.autograd.grad(y, (x, w), g)]
    assert calls
    for a, e in zip(actual, expected, strict=True):
        assert_matches(a, e.float(), 16, normwise=True)


def test_llama_style_model_on_cuda(on_gpu):
    torch.manual_seed(0)
    model = TinyLlama().cuda()
    tokens = torch.randint(0, 64, (2, 8), device="cuda")
    labels = torch.randint(0, 64, (2, 8), device="cuda")

    def step():
        logits, loss = model(tokens, labels)
        return [logits, loss, *torch.autograd.grad(loss, list(model.parameters()))]

    torch.backends.cuda.matmul.allow_tf32 = False
    expected = step()
    with ops.use():
        actual = step()
    for a, e in zip(actual, expected, strict=True):
        torch.testing.assert_close(a, e, rtol=1e-3, atol=1e-4)


def _attention_with_grads(fn, q, k, v, grad, **kwargs):
    out = fn(q, k, v, **kwargs)
    return [out, *torch.autograd.grad(out, (q, k, v), grad)]


def _matches_float64_attention(q, k, v, grad, causal, dtype):
    """The output and the gradients of q, k and v against torch's attention in float64."""
    kwargs = {"is_causal": causal, "enable_gqa": True}
    actual = _attention_with_grads(ops.scaled_dot_product_attention, q, k, v, grad, **kwargs)
    wide = [t.detach().double().requires_grad_() for t in (q, k, v)]
    expected = _attention_with_grads(F.scaled_dot_product_attention, *wide, grad.double(), **kwargs)
    for a, e in zip(actual, expected, strict=True):
        assert_matches(a, e.to(dtype), 16, normwise=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("length", [200, 256])
def test_attention_on_cuda(dtype, causal, length, on_gpu, monkeypatch):
    """Lengths the blocks do not divide (masked tails) and do (on Hopper, read by tensor
    copies, here from any length on)."""
    monkeypatch.setattr(flash, "_COPIES_FROM", 0)
    q = _cuda(2, 4, length, 64, dtype=dtype).requires_grad_()
    k, v = (_cuda(2, 2, length, 64, dtype=dtype).requires_grad_() for _ in "kv")
    grad = _cuda(2, 4, length, 64, dtype=dtype)
    _matches_float64_attention(q, k, v, grad, causal, dtype)


@pytest.mark.parametrize(
    "dtype, E, causal",
    [
        (torch.float16, 256, False),
        (torch.float16, 256, True),
        (torch.bfloat16, 160, True),
        (torch.bfloat16, 256, False),
        (torch.float32, 256, True),
    ],
)
@pytest.mark.parametrize("length", [200, 384])
def test_wide_head_attention_on_cuda(dtype, E, causal, length, on_gpu, monkeypatch):
    """Head dims past 128 (general_tiles.BLOCKS' widest rows: 8 warps, 16 keys held by
    dK/dV), with masked tails and whole blocks read by tensor copies."""
    monkeypatch.setattr(flash, "_COPIES_FROM", 0)
    q = _cuda(1, 4, length, E, dtype=dtype).requires_grad_()
    k, v = (_cuda(1, 2, length, E, dtype=dtype).requires_grad_() for _ in "kv")
    grad = _cuda(1, 4, length, E, dtype=dtype)
    _matches_float64_attention(q, k, v, grad, causal, dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("length", [200, 256])
def test_attention_dropout_on_cuda(dtype, causal, length, on_gpu, monkeypatch):
    """Dropout in the general kernels (on Hopper the backward's blocks by tensor copies) against
    the float64 reference dropping the mask the call's seed gives."""
    monkeypatch.setattr(flash, "_COPIES_FROM", 0)
    torch.backends.cuda.matmul.allow_tf32 = False
    q = _cuda(2, 4, length, 64, dtype=dtype).requires_grad_()
    k, v = (_cuda(2, 2, length, 64, dtype=dtype).requires_grad_() for _ in "kv")
    grad = _cuda(2, 4, length, 64, dtype=dtype)
    keep = drawn_mask(q, k, 0.2)
    assert abs(keep.float().mean().item() - 0.8) < 0.01
    kwargs = {"dropout_p": 0.2, "is_causal": causal, "enable_gqa": True}
    actual = _attention_with_grads(ops.scaled_dot_product_attention, q, k, v, grad, **kwargs)
    wide = [t.detach().double().requires_grad_() for t in (q, k, v)]
    out = dropout_reference(*wide, keep, 0.2, is_causal=causal)
    expected = [out, *torch.autograd.grad(out, wide, grad.double())]
    for a, e in zip(actual, expected, strict=True):
        assert_matches(a, e.to(dtype), 16, normwise=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_attention_dropout_through_the_switch_on_cuda(dtype, on_gpu, monkeypatch):
    """torch's scaled_dot_product_attention with dropout on CUDA reaches a fused overload (flash,
    memory-efficient or cuDNN), whose forward returns the seed its backward reads back."""
    calls = []
    for name in ("forward", "backward"):
        kernel = getattr(flash, name)
        monkeypatch.setattr(flash, name, lambda *a, k=kernel: calls.append(k) or k(*a))
    torch.backends.cuda.matmul.allow_tf32 = False
    q, k, v = (_cuda(2, 4, 130, 64, dtype=dtype).requires_grad_() for _ in "qkv")
    grad = _cuda(2, 4, 130, 64, dtype=dtype)
    keep = drawn_mask(q, k, 0.3)
    with ops.use():
        actual = _attention_with_grads(F.scaled_dot_product_attention, q, k, v, grad,
                                       dropout_p=0.3)  # fmt: skip
    assert len(calls) == 2  # Naiad's forward and backward ran, not torch's
    wide = [t.detach().double().requires_grad_() for t in (q, k, v)]
    out = dropout_reference(*wide, keep, 0.3)
    expected = [out, *torch.autograd.grad(out, wide, grad.double())]
    for a, e in zip(actual, expected, strict=True):
        assert_matches(a, e.to(dtype), 16, normwise=True)


def _whole_backward_kernels(problem, grad, lse, results) -> list:
    """The kernels of the whole-block backward of `problem` on its device."""
    dq_sum = torch.zeros(results[0].shape, device="cuda")
    launches = flash.backward_launches(problem, grad, lse, lse, *results, dq_sum=dq_sum)
    return [launch[0] for launch in launches]


def _expected_backward(E, causal) -> list:
    """dK/dV then dQ, or the dK/dV walk adding dQ then its rounding (flash._WHOLE_BACKWARD)."""
    from naiad.ops.attention import whole_backward as wb

    if flash._WHOLE_BACKWARD["cuda"][(E, causal)][1] is None:
        return [wb.attention_dkdv_whole, wb.attention_dq_rounded]
    return [wb.attention_dkdv_whole, wb.attention_dq_whole]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("E", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_whole_block_attention_on_cuda(dtype, E, causal, on_gpu, monkeypatch):
    """The whole-block forward and backward (on Hopper: tensor copies, the tables' tiles):
    several query blocks, more keys than queries, two query heads a key head."""
    from naiad.ops.attention.sdpa import _Problem
    from naiad.ops.attention.whole_blocks import attention_forward_whole

    monkeypatch.setattr(flash, "_WHOLE_FROM", 0)
    q = _cuda(2, 4, 384, E, dtype=dtype).requires_grad_()
    k, v = (_cuda(2, 2, 512, E, dtype=dtype).requires_grad_() for _ in "kv")
    grad = _cuda(2, 4, 384, E, dtype=dtype)
    if torch.cuda.get_device_capability()[0] >= 9:
        problem = _Problem(q, k, v, None, 0.0, causal, None)
        lse, results = q.new_empty(q.shape[:-1]), [torch.empty_like(t) for t in (q, k, v)]
        assert flash.forward_launch(problem, results[0], lse)[0] is attention_forward_whole
        assert _whole_backward_kernels(problem, grad, lse, results) == _expected_backward(E, causal)
    _matches_float64_attention(q, k, v, grad, causal, dtype)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("L, S", [(384, 512), (1000, 1300)])
def test_wide_head_whole_backward_on_cuda(dtype, causal, L, S, on_gpu, monkeypatch):
    """Head dim 256: the general forward, then the whole-block backward, each program taking
    half the head dims' gradients (on Hopper: tensor copies, the table's tiles), at lengths the
    tiles divide and not, two query heads a key head."""
    from naiad.ops.attention.sdpa import _Problem

    monkeypatch.setattr(flash, "_WHOLE_FROM", 0)
    q = _cuda(2, 4, L, 256, dtype=dtype).requires_grad_()
    k, v = (_cuda(2, 2, S, 256, dtype=dtype).requires_grad_() for _ in "kv")
    grad = _cuda(2, 4, L, 256, dtype=dtype)
    if torch.cuda.get_device_capability()[0] >= 9:
        problem = _Problem(q, k, v, None, 0.0, causal, None)
        lse, results = q.new_empty(q.shape[:-1]), [torch.empty_like(t) for t in (q, k, v)]
        assert _whole_backward_kernels(problem, grad, lse, results) == _expected_backward(
            256, causal
        )
    _matches_float64_attention(q, k, v, grad, causal, dtype)


# (head dim, causal, query heads, key heads, L, S): lengths no tile of flash._WHOLE or
# _WHOLE_BACKWARD divides, one below every tile, grouped heads, L != S, and L = S = 4000.
RAGGED = [
    (64, False, 4, 2, 1000, 1500),
    (64, True, 4, 2, 700, 1300),
    (64, True, 2, 2, 4000, 4000),
    (128, False, 2, 1, 1500, 370),
    (128, False, 2, 2, 4000, 4000),
    (128, True, 4, 1, 1000, 1000),
    (64, False, 2, 1, 20, 37),
    (128, True, 2, 2, 1, 1),
]


@pytest.mark.parametrize("E, causal, H, HK, L, S", RAGGED)
def test_whole_block_attention_at_ragged_lengths_on_cuda(E, causal, H, HK, L, S, on_gpu,
                                                        monkeypatch):  # fmt: skip
    """Lengths the blocks do not divide take the whole-block kernels (on Hopper: blocks of
    one head by tensor copies, the last key or query block masked), forward and backward."""
    from naiad.ops.attention.sdpa import _Problem
    from naiad.ops.attention.whole_blocks import attention_forward_whole

    monkeypatch.setattr(flash, "_WHOLE_FROM", 0)
    dtype = torch.float16
    q = _cuda(2, H, L, E, dtype=dtype).requires_grad_()
    k, v = (_cuda(2, HK, S, E, dtype=dtype).requires_grad_() for _ in "kv")
    grad = _cuda(2, H, L, E, dtype=dtype)
    if torch.cuda.get_device_capability()[0] >= 9:
        problem = _Problem(q, k, v, None, 0.0, causal, None)
        lse, results = q.new_empty(q.shape[:-1]), [torch.empty_like(t) for t in (q, k, v)]
        assert flash.forward_launch(problem, results[0], lse)[0] is attention_forward_whole
        assert _whole_backward_kernels(problem, grad, lse, results) == _expected_backward(E, causal)
    _matches_float64_attention(q, k, v, grad, causal, dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("causal", [False, True])
def test_varlen_attention_on_cuda(dtype, causal, on_gpu):
    """Packed sequences of 1 query, of more and of fewer queries than keys, past a block."""
    lengths_q, lengths_k = [1, 200, 70, 9], [5, 130, 70, 3]
    cu_q, cu_k = prefix_sums(lengths_q, "cuda"), prefix_sums(lengths_k, "cuda")
    q = _cuda(sum(lengths_q), 4, 64, dtype=dtype).requires_grad_()
    k, v = (_cuda(sum(lengths_k), 2, 64, dtype=dtype).requires_grad_() for _ in "kv")
    grad = _cuda(sum(lengths_q), 4, 64, dtype=dtype)
    torch.backends.cuda.matmul.allow_tf32 = False
    out = ops.varlen_attention(q, k, v, cu_q, cu_k, 200, 130, causal=causal)
    actual = [out, *torch.autograd.grad(out, (q, k, v), grad)]
    wide = [t.detach().double().requires_grad_() for t in (q, k, v)]
    out = varlen_reference(*wide, cu_q, cu_k, 64**-0.5, causal)
    expected = [out, *torch.autograd.grad(out, wide, grad.double())]
    for a, e in zip(actual, expected, strict=True):
        assert_matches(a, e.to(dtype), 16, normwise=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_attention_through_the_switch_on_cuda(dtype, on_gpu, monkeypatch):
    from naiad.ops.attention import flash

    calls = []
    for name in ("forward", "backward"):
        kernel = getattr(flash, name)
        monkeypatch.setattr(flash, name, lambda *a, k=kernel: calls.append(k) or k(*a))
    q, k, v = (_cuda(2, 4, 130, 128, dtype=dtype).requires_grad_() for _ in "qkv")
    grad = _cuda(2, 4, 130, 128, dtype=dtype)
    torch.backends.cuda.matmul.allow_tf32 = False
    expected = _attention_with_grads(F.scaled_dot_product_attention, q, k, v, grad, is_causal=True)
    with ops.use():
        actual = _attention_with_grads(F.scaled_dot_product_attention, q, k, v, grad,
                                       is_causal=True)  # fmt: skip
    for a, e in zip(actual, expected, strict=True):
        assert_matches(a, e, 16, normwise=True)
    assert len(calls) == 2  # Naiad's forward and backward ran, not torch's


def test_data_movement_and_random_on_cuda(on_gpu):
    x = _cuda(6, 300)
    values, indices = ops.sort(x, 1, True)
    expected = torch.sort(x, dim=1, descending=True, stable=True)
    assert torch.equal(values, expected.values) and torch.equal(indices, expected.indices)
    top = ops.topk(x, 5)
    assert torch.equal(top[0], torch.topk(x, 5)[0])
    index = torch.randint(0, 6, (6, 300), device="cuda")
    assert_matches(ops.scatter_add(x, 0, index, x), reference(torch.scatter_add, x, 0, index, x), 4)
    assert torch.equal(ops.flip(x, (0, 1)), torch.flip(x, (0, 1)))
    assert torch.equal(ops.repeat(x, (2, 1)), x.repeat(2, 1))
    assert torch.equal(ops.one_hot(index[0]), F.one_hot(index[0]))
    torch.manual_seed(0)
    u = ops.rand(1 << 20, device="cuda")
    torch.manual_seed(0)
    assert torch.equal(ops.rand(1 << 20, device="cuda"), u)
    assert abs(u.mean().item() - 0.5) < 2e-3 and abs(u.var().item() - 1 / 12) < 1e-3
    z = ops.randn(1 << 20, device="cuda")
    assert abs(z.mean().item()) < 5e-3 and abs(z.std().item() - 1) < 5e-3
    kept = ops.dropout(torch.ones(1 << 20, device="cuda"), 0.25) != 0
    assert abs(kept.float().mean().item() - 0.75) < 3e-3


def test_unique_along_a_dim_on_cuda(on_gpu):
    """unique along a dim and unique_consecutive compiled for the GPU give torch's values,
    inverse and counts exactly (slices drawn from three, so most repeat)."""
    pool = torch.randint(-3, 4, (3, 5, 4), device="cuda")
    x = pool[torch.randint(0, 3, (40,), device="cuda")].movedim(0, 1)  # 5 x 40 x 4, dim 1 repeats
    for actual, expected in (
        (
            ops.unique(x, dim=1, return_inverse=True, return_counts=True),
            torch.unique(x, dim=1, return_inverse=True, return_counts=True),
        ),
        (
            ops.unique_consecutive(x, return_inverse=True, return_counts=True, dim=1),
            torch.unique_consecutive(x, return_inverse=True, return_counts=True, dim=1),
        ),
    ):
        for a, e in zip(actual, expected, strict=True):
            assert a.device == e.device and torch.equal(a, e)


def test_direct_calls_compiled_on_cuda(on_gpu):
    """A function calling naiad.ops directly compiles with fullgraph (each call a
    torch.ops.naiad node) and gives float64 torch's values and gradients on CUDA tensors."""

    def block(x, w):
        h = ops.softmax(ops.mm(x, w), -1)
        return ops.sum(ops.silu(h) * h, [1])

    def reference_block(x, w):
        h = torch.softmax(x @ w, -1)
        return (F.silu(h) * h).sum(1)

    x, w = _cuda(64, 96).requires_grad_(), _cuda(96, 80).requires_grad_()
    compiled = torch.compile(block, fullgraph=True, backend="aot_eager")
    out = compiled(x, w)
    grads = torch.autograd.grad(out.sum(), (x, w))
    x64, w64 = (t.detach().double().requires_grad_() for t in (x, w))
    expected = reference_block(x64, w64)
    expected_grads = torch.autograd.grad(expected.sum(), (x64, w64))
    assert_matches(out, expected.float(), 4, normwise=True)
    for g, e in zip(grads, expected_grads, strict=True):
        assert_matches(g, e.float(), 4, normwise=True)


_OUTSIDE = """
import torch, naiad.ops as ops
from naiad.ops.nn.embedding import embedding_dense_backward
weight = torch.randn(10, 4, device="cuda", requires_grad=True)
logp = torch.randn(4, 10, device="cuda").log_softmax(1)
at = torch.tensor({indices}, device="cuda")
try:
    result = {call}
    torch.cuda.synchronize()
    print("no error")
except Exception as error:  # torch's at the synchronization, or a launch's after it
    print("raised:", type(error).__name__, error)
"""


@pytest.mark.parametrize(
    "call, indices, message",
    [
        ("ops.embedding(weight, at)", [1, 10], "index out of range in self"),
        ("embedding_dense_backward(torch.ones(2, 4, device='cuda'), at, 10, -1, False)",
         [1, -1], "index out of range in self"),
        ("ops.nll_loss(logp, at)", [0, 1, 2, 10], "Target out of bounds"),
        ("ops.cross_entropy(logp, at, reduction='none')", [0, -5, 2, 3], "Target out of bounds"),
        ("ops.index_select(weight, 0, at)", [3, 10], "index out of range in self"),
        ("ops.scatter_add(weight, 0, at[:, None].expand(2, 4), weight[:2])", [0, -11],
         "index out of bounds"),
        ("ops.gather(weight, 1, at[:, None])", [3, 4], "index out of range in self"),
        ("ops.one_hot(at, 4)", [1, 4], "Class values must be smaller than num_classes"),
    ],
)  # fmt: skip
def test_indices_outside_stop_the_kernel_on_cuda(call, indices, message, on_gpu):
    """On a GPU the kernels reading by index assert their range (index_range.py)
    as torch's do: the device prints the kernel's message, and the next synchronization raises
    CUDA's device-side assert error (or a launch after it CUDA_ERROR_ASSERT). Run apart: the
    process's CUDA context is lost."""
    code = _OUTSIDE.format(indices=indices, call=call)
    compiled = {**os.environ, "NAIAD_BACKEND": "auto"}  # as `on_gpu`, whatever the tests run by
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env=compiled)  # fmt: skip
    printed = done.stdout + done.stderr
    assert "raised:" in done.stdout, printed
    assert "device-side assert" in done.stdout or "CUDA_ERROR_ASSERT" in done.stdout, printed
    assert message in printed, printed
