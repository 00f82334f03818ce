"""varlen_attention with dropout: Naiad's output and gradients against the float64 sequence by
sequence reference (varlen_reference.py) dropping the mask the kernels keep (dropout.keep_mask
of the call's seed over (sequences, H, max_seqlen_q, max_seqlen_k)), causal and not, grouped
heads, unequal and single-token sequences, interpreted and compiled for the CPU; ATen's
_flash_attention_forward returning the seed and offset its _flash_attention_backward reads."""

import pytest
import torch
from attention_dropout_reference import drawn_mask_of
from ops_helpers import assert_matches, make
from varlen_reference import prefix_sums, varlen_reference

import naiad.ops as ops
from naiad.ops.attention import varlen
from naiad.ops.attention.dropout import keep_mask


def _tensors(gen, dtype, lengths_q, lengths_k, H, HK, E):
    total_q, total_k = sum(lengths_q), sum(lengths_k)
    shapes = ((total_q, H, E), (total_k, HK, E), (total_k, HK, E))
    return [make(shape, dtype, gen, -1, 1).requires_grad_() for shape in shapes]


def _expected(tensors, grad, cu_q, cu_k, scale, causal, keep, p):
    """The float64 reference's output and gradients, dropping `keep`."""
    wide = [t.detach().double().requires_grad_() for t in tensors]
    out = varlen_reference(*wide, cu_q, cu_k, scale, causal, keep, p)
    return [out, *torch.autograd.grad(out, wide, grad.double())]


def _check(gen, lengths_q, lengths_k, p, H=4, HK=2, E=16, causal=False, dtype=torch.float32,
           tolerance=8.0):  # fmt: skip
    cu_q, cu_k = prefix_sums(lengths_q), prefix_sums(lengths_k)
    longest = (max(lengths_q), max(lengths_k))
    tensors = _tensors(gen, dtype, lengths_q, lengths_k, H, HK, E)
    keep = drawn_mask_of((len(lengths_q), H, *longest), p, "cpu")
    out = ops.varlen_attention(*tensors, cu_q, cu_k, *longest, causal=causal, dropout_p=p)
    grad = make(out.shape, dtype, gen, -1, 1)
    actual = [out, *torch.autograd.grad(out, tensors, grad)]
    expected = _expected(tensors, grad, cu_q, cu_k, E**-0.5, causal, keep, p)
    for a, e in zip(actual, expected, strict=True):
        assert_matches(a, e.to(dtype), tolerance, normwise=True)


@pytest.mark.parametrize("causal", [False, True])
def test_varlen_dropout_forward_and_backward(causal, gen, interpreted):
    """Sequences of one query, of more queries than keys and fewer, one past a 64-row block:
    each drops its own part of the mask (offsets strided by the longest lengths)."""
    _check(gen, [1, 70, 9, 23], [5, 66, 3, 23], 0.3, causal=causal)


def test_varlen_dropout_compiled(gen, compiled):
    _check(gen, [1, 40, 17], [6, 33, 17], 0.25, H=2, HK=1, causal=True)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_varlen_dropout_in_half_precision(dtype, gen, interpreted):
    _check(gen, [3, 70], [70, 12], 0.2, H=2, HK=1, E=32, dtype=dtype, tolerance=16.0)


def test_varlen_dropout_of_one_and_of_the_same_seed(gen, interpreted):
    """p = 1 drops everything (zeros, as torch); the same seed drops the same probabilities."""
    cu = prefix_sums([5, 8])
    q, k, v = (t.detach() for t in _tensors(gen, torch.float32, [5, 8], [5, 8], 2, 2, 8))
    dropped = ops.varlen_attention(q, k, v, cu, cu, 8, 8, dropout_p=1.0)
    assert_matches(dropped, torch.zeros_like(q))
    runs = []
    for _ in range(2):
        torch.manual_seed(7)
        runs.append(ops.varlen_attention(q, k, v, cu, cu, 8, 8, dropout_p=0.5))
    assert_matches(runs[0], runs[1])


def test_aten_overloads_carry_the_seed(gen, interpreted):
    """_flash_attention_forward returns its seed and offset as rng_state (uint64); the backward
    given it regenerates the same mask: both against the reference of keep_mask(seed, offset)."""
    lengths_q, lengths_k, p, scale = [4, 30, 11], [9, 30, 2], 0.4, 0.3
    cu_q, cu_k = prefix_sums(lengths_q), prefix_sums(lengths_k)
    q, k, v = (t.detach() for t in _tensors(gen, torch.float32, lengths_q, lengths_k, 4, 2, 16))
    out, lse, rng_state, unused, _ = varlen.flash_attention_forward(
        q, k, v, cu_q, cu_k, 30, 30, p, True, False, scale=scale
    )
    assert rng_state.dtype == torch.uint64 and rng_state.shape == (2,)
    grad = make(out.shape, torch.float32, gen, -1, 1)
    grads = varlen.flash_attention_backward(
        grad, q, k, v, out, lse, cu_q, cu_k, 30, 30, p, True, rng_state, unused, scale=scale
    )
    seed, offset = (int(x) for x in rng_state)
    keep = keep_mask((3, 4, 30, 30), seed, offset, p, "cpu")
    expected = _expected((q, k, v), grad, cu_q, cu_k, scale, True, keep, p)
    for a, e in zip([out, *grads], expected, strict=True):
        assert_matches(a, e.float(), 8.0, normwise=True)


def test_aten_overloads_through_the_switch(gen, interpreted):
    """torch.ops.aten._flash_attention_forward and _backward with dropout reach Naiad's kernels
    with the switch on (torch has no CPU kernel): the pair's results against the reference."""
    lengths, p = [6, 21], 0.3
    cu = prefix_sums(lengths)
    q, k, v = (t.detach() for t in _tensors(gen, torch.float32, lengths, lengths, 2, 1, 16))
    grad = make(q.shape, torch.float32, gen, -1, 1)
    with ops.use(include=["flash_attention_forward", "flash_attention"]):
        out, lse, rng_state, unused, _ = torch.ops.aten._flash_attention_forward(
            q, k, v, cu, cu, 21, 21, p, False, False
        )
        grads = torch.ops.aten._flash_attention_backward(
            grad, q, k, v, out, lse, cu, cu, 21, 21, p, False, rng_state, unused
        )
    keep = keep_mask((2, 2, 21, 21), *(int(x) for x in rng_state), p, "cpu")
    expected = _expected((q, k, v), grad, cu, cu, 16**-0.5, False, keep, p)
    for a, e in zip([out, *grads], expected, strict=True):
        assert_matches(a, e.float(), 8.0, normwise=True)
