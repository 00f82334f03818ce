"""scaled_dot_product_attention with dropout: Naiad's output and gradients against a float64
reference that drops the same probabilities (the mask the kernels keep, materialised by
dropout.keep_mask from the seed the call draws), causal and not, grouped heads, masks, fp32 and
half precision; the mask's statistics and repeatability; the CUDA overloads' seed and offset
carried from forward to backward (called directly, on CPU tensors)."""

import pytest
import torch
import torch.nn.functional as F
from attention_dropout_reference import drawn_mask, reference
from ops_helpers import assert_matches, make

import naiad.ops as ops
from naiad.ops.attention import sdpa
from naiad.ops.attention.dropout import keep_mask
from naiad.ops.dtypes import Unsupported


def _qkv(gen, dtype, B=2, H=4, HK=2, L=37, S=29, E=40):
    shapes = ((B, H, L, E), (B, HK, S, E), (B, HK, S, E))
    return [make(shape, dtype, gen, -1, 1).requires_grad_() for shape in shapes]


def _with_grads(fn, tensors, grad, *args, **kwargs):
    out = fn(*tensors, *args, **kwargs)
    return [out, *torch.autograd.grad(out, tensors, grad)]


def _check(gen, dtype, tensors, p, scale=8.0, **kwargs):
    keep = drawn_mask(tensors[0], tensors[1], p)
    out = ops.scaled_dot_product_attention(*tensors, dropout_p=p, enable_gqa=True, **kwargs)
    grad = make(out.shape, dtype, gen, -1, 1)
    actual = [out, *torch.autograd.grad(out, tensors, grad)]
    wide = [t.detach().double().requires_grad_() for t in tensors]
    expected = _with_grads(reference, wide, grad.double(), keep, p, **kwargs)
    for a, e in zip(actual, expected, strict=True):
        assert_matches(a, e.to(dtype), scale, normwise=True)


@pytest.mark.parametrize("causal", [False, True])
def test_dropout_forward_and_backward(causal, gen, interpreted):
    _check(gen, torch.float32, _qkv(gen, torch.float32), 0.3, is_causal=causal)


def test_dropout_with_masks(gen, interpreted):
    q, k, v = _qkv(gen, torch.float32, B=1, H=2, HK=1, L=20, S=45, E=16)
    additive = make((20, 45), torch.float32, gen)
    _check(gen, torch.float32, (q, k, v), 0.2, attn_mask=additive, scale=0.5)
    visible = torch.rand(1, 2, 20, 45, generator=gen) > 0.3
    visible[..., 0] = True  # no row without a key
    _check(gen, torch.float32, (q, k, v), 0.5, attn_mask=visible)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("causal", [False, True])
def test_dropout_in_half_precision(dtype, causal, gen, backend):
    """Long enough that the unmasked key and query blocks drop as the masked ones do."""
    q, k, v = _qkv(gen, dtype, B=1, H=2, HK=1, L=150, S=130, E=32)
    _check(gen, dtype, (q, k, v), 0.25, scale=16.0, is_causal=causal)


def test_dropout_compiled(gen, compiled):
    q, k, v = _qkv(gen, torch.float16, B=1, H=2, HK=2, L=70, S=90, E=64)
    _check(gen, torch.float16, (q, k, v), 0.4, scale=16.0, is_causal=True)


def test_kept_fraction_and_repeatability(gen, interpreted):
    keep = keep_mask((2, 3, 64, 80), 2**40 + 17, 0, 0.3, "cpu")
    assert abs(keep.float().mean().item() - 0.7) < 0.02
    assert not torch.equal(keep[0, 0], keep[0, 1])  # each head draws its own
    q, k, v = (t.detach() for t in _qkv(gen, torch.float32, L=16, S=24, E=16))

    def run(state):
        torch.manual_seed(state)
        return ops.scaled_dot_product_attention(q, k, v, dropout_p=0.3, enable_gqa=True)

    assert torch.equal(run(5), run(5))
    assert not torch.allclose(run(5), run(6))


def test_dropout_of_one_gives_zeros(gen, interpreted):
    q, k, v = _qkv(gen, torch.float32, HK=4, L=16, S=24, E=16)
    grad = make((2, 4, 16, 16), torch.float32, gen)
    actual = _with_grads(ops.scaled_dot_product_attention, (q, k, v), grad, dropout_p=1.0)
    expected = _with_grads(F.scaled_dot_product_attention, (q, k, v), grad, dropout_p=1.0)
    for a, e in zip(actual, expected, strict=True):
        assert torch.equal(a, e) and not a.count_nonzero()


def _overload_calls(name, q, k, v, grad, p):
    """(out, dq, dk, dv, keep mask) through the forward and backward overloads `name`, the
    mask from the seed and offset the forward returned."""
    if name == "flash":
        out, lse, _, _, L, S, seed, offset, _ = sdpa.flash_attention(q, k, v, p)
        grads = sdpa.flash_attention_backward(grad, q, k, v, out, lse, None, None, L, S, p,
                                              False, seed, offset)  # fmt: skip
    elif name == "efficient":
        out, lse, seed, offset = sdpa.efficient_attention(q, k, v, None, True, p)
        grads = sdpa.efficient_attention_backward(grad, q, k, v, None, out, lse, seed, offset, p,
                                                  [True] * 4)[:3]  # fmt: skip
    else:
        out, lse, _, _, L, S, seed, offset, _ = sdpa.cudnn_attention(q, k, v, None, True, p)
        grads = sdpa.cudnn_attention_backward(grad, q, k, v, out, lse, seed, offset, None, None,
                                              None, L, S, p, False)  # fmt: skip
    B, H, L, _ = q.shape
    keep = keep_mask((B, H, L, k.shape[2]), int(seed.reshape(-1)[0]), int(offset), p, q.device)
    return out, *grads, keep


@pytest.mark.parametrize("name", ["flash", "efficient", "cudnn"])
def test_overloads_carry_the_seed_to_the_backward(name, gen, interpreted):
    q, k, v = (t.detach() for t in _qkv(gen, torch.float32, HK=4, L=24, S=20, E=16))
    grad = make((2, 4, 24, 16), torch.float32, gen)
    *actual, keep = _overload_calls(name, q, k, v, grad, 0.3)
    wide = [t.double().requires_grad_() for t in (q, k, v)]
    expected = _with_grads(reference, wide, grad.double(), keep, 0.3)
    for a, e in zip(actual, expected, strict=True):
        assert_matches(a, e.float(), 8.0, normwise=True)


def test_overloads_leave_dropout_to_torch_where_their_backward_cannot_redraw(gen, interpreted):
    """The CPU flash overloads carry no seed; a bias's gradient sends the memory-efficient
    backward to torch, so its forward with dropout goes too."""
    q, k, v = (t.detach() for t in _qkv(gen, torch.float32, HK=4, L=8, S=8, E=16))
    with pytest.raises(Unsupported):
        sdpa.flash_attention_for_cpu(q, k, v, 0.5)
    bias = make((2, 4, 8, 8), torch.float32, gen).requires_grad_()
    with pytest.raises(Unsupported):
        sdpa.efficient_attention(q, k, v, bias, True, 0.5)
    assert sdpa.efficient_attention(q, k, v, bias.detach(), True, 0.5)[0].shape == q.shape
