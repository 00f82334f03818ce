"""varlen_attention of naiad.ops against torch eager run sequence by sequence in float64
(varlen_reference.py): the output and the three gradients, causal (from the bottom right) or
not, grouped heads, random lengths with 1, 0 and lengths past a block; strided inputs; the
prefix sums' checks."""

import inspect

import pytest
import torch
from ops_helpers import FLOATS, assert_matches, make
from varlen_reference import prefix_sums, varlen_logsumexp, varlen_reference

import naiad.ops as ops
from naiad.ops.attention import flash


def _lengths(gen, count, fixed=(1, 70)) -> list[int]:
    """`fixed` lengths (1, and one past the CPU's 64-row block) and `count` random ones."""
    return [*fixed, *torch.randint(2, 100, (count,), generator=gen).tolist()]


def _with_grads(fn, tensors, grad, *args, **kwargs):
    out = fn(*tensors, *args, **kwargs)
    return [out, *torch.autograd.grad(out, tensors, grad)]


def _check(gen, dtype, lengths_q, lengths_k, H=4, HK=2, E=40, causal=False, scale=None,
           tolerance=8.0, tensors=None):  # fmt: skip
    cu_q, cu_k = prefix_sums(lengths_q), prefix_sums(lengths_k)
    if tensors is None:
        tensors = (
            make((int(cu_q[-1]), H, E), dtype, gen, -1, 1),
            make((int(cu_k[-1]), HK, E), dtype, gen, -1, 1),
            make((int(cu_k[-1]), HK, E), dtype, gen, -1, 1),
        )
    tensors = [t.requires_grad_() for t in tensors]
    grad = make(tensors[0].shape, dtype, gen, -1, 1)
    lengths = (cu_q, cu_k, max(lengths_q), max(lengths_k))
    actual = _with_grads(ops.varlen_attention, tensors, grad, *lengths, softmax_scale=scale,
                         causal=causal)  # fmt: skip
    wide = [t.detach().double().requires_grad_() for t in tensors]
    scale = tensors[0].shape[-1] ** -0.5 if scale is None else scale
    expected = _with_grads(varlen_reference, wide, grad.double(), cu_q, cu_k, scale, causal)
    for a, e in zip(actual, expected, strict=True):
        assert_matches(a, e.to(dtype), tolerance, normwise=True)


def _small_case(gen):
    """Causal over grouped heads: a sequence of one query against more keys, one of more
    queries than keys (its first queries see none), one past the CPU's 64-row block."""
    lengths_q = [1, 70, 9, *_lengths(gen, 1, fixed=())]
    lengths_k = [5, 66, 3, *_lengths(gen, 1, fixed=())]
    _check(gen, torch.float32, lengths_q, lengths_k, H=2, HK=1, E=16, causal=True, scale=0.3)


def test_varlen_attention_interpreted(gen, interpreted):
    _small_case(gen)


def test_varlen_attention_compiled(gen, compiled):
    _small_case(gen)


def test_torch_varlen_attn_through_the_switch(gen, interpreted, monkeypatch):
    """torch.nn.attention.varlen.varlen_attn reaches Naiad's kernels through ATen's
    _flash_attention_forward and _flash_attention_backward (torch has no CPU kernel for them);
    its causal window (-1, 0) is the bottom-right mask, and the log-sum-exp is (H, total_q)."""
    varlen = pytest.importorskip("torch.nn.attention.varlen")  # in torch 2.13, not in every one
    if "enable_gqa" not in inspect.signature(varlen.varlen_attn).parameters:
        pytest.skip("this torch's varlen_attn has no grouped heads (the README installs 2.13)")
    calls = []
    for name in ("forward", "backward"):
        kernel = getattr(flash, name)
        monkeypatch.setattr(flash, name, lambda *a, k=kernel: calls.append(k) or k(*a))
    lengths_q, lengths_k = [1, 9, 20], [4, 3, 20]
    cu_q, cu_k = prefix_sums(lengths_q), prefix_sums(lengths_k)
    q = make((30, 4, 16), torch.float32, gen, -1, 1).requires_grad_()
    k, v = (make((27, 2, 16), torch.float32, gen, -1, 1).requires_grad_() for _ in "kv")
    grad = make((30, 4, 16), torch.float32, gen, -1, 1)
    with ops.use(include=["flash_attention_forward", "flash_attention"]):
        out, lse = varlen.varlen_attn(q, k, v, cu_q, cu_k, 20, 20, window_size=(-1, 0),
                                      return_aux=varlen.AuxRequest(lse=True),
                                      enable_gqa=True)  # fmt: skip
        actual = [out, *torch.autograd.grad(out, (q, k, v), grad)]
    assert len(calls) == 2
    wide = [t.detach().double().requires_grad_() for t in (q, k, v)]
    expected = _with_grads(varlen_reference, wide, grad.double(), cu_q, cu_k, 0.25, True)
    for a, e in zip(actual, expected, strict=True):
        assert_matches(a, e.float(), 8.0, normwise=True)
    expected_lse = varlen_logsumexp(*wide[:2], cu_q, cu_k, 0.25, True).float()
    torch.testing.assert_close(lse, expected_lse, rtol=1e-5, atol=1e-5)


def test_varlen_attention_checks_its_prefix_sums(gen):
    q = make((5, 2, 8), torch.float32, gen)
    good = prefix_sums([2, 3])
    for cu, message in [
        (good.long(), "int32"),
        (prefix_sums([2, 2]), "rise from 0 to 5"),
        (torch.tensor([1, 2, 5], dtype=torch.int32), "rise from 0 to 5"),
        (torch.tensor([0, 3, 2, 5], dtype=torch.int32), "rise from 0 to 5"),
    ]:
        with pytest.raises(ValueError, match=message):
            ops.varlen_attention(q, q, q, cu, good, 3, 3)
    with pytest.raises(ValueError, match="longer than its max_seqlen, 2"):
        ops.varlen_attention(q, q, q, good, good, 3, 2)
    with pytest.raises(ValueError, match="different numbers of sequences"):
        ops.varlen_attention(q, q, q, good, prefix_sums([5]), 3, 5)


@pytest.mark.full
@pytest.mark.parametrize("dtype, E", list(zip(FLOATS, [64, 128, 256], strict=True)))
@pytest.mark.parametrize("causal", [False, True])
def test_varlen_attention_matrix(dtype, E, causal, gen, backend):
    lengths = _lengths(gen, 3)
    _check(gen, dtype, lengths, lengths, H=2, HK=1, E=E, causal=causal, tolerance=16.0)


@pytest.mark.full
@pytest.mark.parametrize("causal", [False, True])
def test_varlen_attention_of_unequal_lengths(causal, gen, backend):
    """More queries than keys and fewer, an empty sequence on either side: causal queries that
    see no key (from the bottom right) give zeros."""
    lengths_q = [1, 70, 0, 9, 30, *_lengths(gen, 2, fixed=())]
    lengths_k = [5, 20, 8, 0, 100, *_lengths(gen, 2, fixed=())]
    _check(gen, torch.float32, lengths_q, lengths_k, H=6, HK=2, E=24, causal=causal, scale=0.5)


@pytest.mark.full
def test_varlen_attention_of_strided_inputs(gen, backend):
    """q, k and v as slices of one packed (tokens, 3, H, E) projection, as attention layers
    make them."""
    lengths = _lengths(gen, 2)
    qkv = make((sum(lengths), 3, 3, 32), torch.float32, gen, -1, 1)
    q, k, v = qkv.unbind(1)
    _check(gen, torch.float32, lengths, lengths, causal=True, tensors=(q, k, v))


def test_calls_alike_but_for_their_total_length(gen, interpreted):
    """Two calls of as many sequences of the same longest lengths but other totals: the
    backward's bound delta launch (attention/bound.py) keys the rows it covers."""
    for lengths in ([70, 9, 30], [70, 50, 61]):
        _check(gen, torch.float32, lengths, lengths, H=2, HK=1, E=16, scale=0.3)
