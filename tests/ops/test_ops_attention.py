"""scaled_dot_product_attention of naiad.ops against torch's on float64 copies: forward and the
three gradients, causal and not, grouped heads, boolean and additive masks, ragged lengths and
head dims; torch's function where the arguments are not handled (other ranks); the switch under
F.scaled_dot_product_attention. Dropout: test_ops_attention_dropout.py."""

import pytest
import torch
import torch.nn.functional as F
from ops_helpers import FLOATS, assert_matches, make

import naiad.ops as ops
from naiad.ops.attention import flash


def _qkv(gen, dtype, B=2, H=4, HK=2, L=37, S=29, E=40):
    q = make((B, H, L, E), dtype, gen, -1, 1).requires_grad_()
    k = make((B, HK, S, E), dtype, gen, -1, 1).requires_grad_()
    v = make((B, HK, S, E), dtype, gen, -1, 1).requires_grad_()
    return q, k, v


def _with_grads(fn, tensors, grad, **kwargs):
    out = fn(*tensors, **kwargs)
    return [out, *torch.autograd.grad(out, tensors, grad)]


def _check(gen, dtype, tensors, scale=8.0, **kwargs):
    grad = make(F.scaled_dot_product_attention(*tensors, **kwargs).shape, dtype, gen, -1, 1)
    actual = _with_grads(ops.scaled_dot_product_attention, tensors, grad, **kwargs)
    wide = [t.detach().double().requires_grad_() for t in tensors]
    kwargs = {k: v.double() if isinstance(v, torch.Tensor) and v.is_floating_point() else v
              for k, v in kwargs.items()}  # fmt: skip
    expected = _with_grads(F.scaled_dot_product_attention, wide, grad.double(), **kwargs)
    for a, e in zip(actual, expected, strict=True):
        assert_matches(a, e.to(dtype), scale, normwise=True)


@pytest.mark.parametrize("causal", [False, True])
def test_attention_forward_and_backward(causal, gen, interpreted):
    _check(gen, torch.float32, _qkv(gen, torch.float32), is_causal=causal, enable_gqa=True)


def test_attention_masks_and_shapes(gen, interpreted):
    q, k, v = _qkv(gen, torch.float32, B=1, H=2, HK=2, L=20, S=45, E=16)
    additive = make((20, 45), torch.float32, gen)
    _check(gen, torch.float32, (q, k, v), attn_mask=additive, scale=0.5)
    keep = torch.rand(1, 2, 20, 45, generator=gen) > 0.3
    keep[..., 0] = True  # no row without a key
    _check(gen, torch.float32, (q, k, v), attn_mask=keep)
    q, k, v = _qkv(gen, torch.float32, B=1, H=3, HK=1, L=9, S=70, E=8)
    _check(gen, torch.float32, (q, k, v), is_causal=True, enable_gqa=True)


@pytest.mark.parametrize("causal", [False, True])
def test_attention_whole_and_partial_key_blocks(causal, gen, interpreted):
    """Long enough that most key blocks are seen whole by every query of a program (streamed
    unmasked) before the diagonal and the last partial block (masked)."""
    q, k, v = _qkv(gen, torch.float32, B=1, H=2, HK=1, L=150, S=200, E=32)
    _check(gen, torch.float32, (q, k, v), is_causal=causal, enable_gqa=True)


@pytest.mark.parametrize("causal", [False, True])
def test_attention_forward_compiled(causal, gen, compiled):
    q, k, v = (t.detach() for t in _qkv(gen, torch.float16, B=1, H=2, HK=2, L=200, S=256, E=64))
    expected = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=causal)
    actual = ops.scaled_dot_product_attention(q, k, v, is_causal=causal)
    assert_matches(actual, expected.half(), 8.0, normwise=True)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("causal", [False, True])
def test_attention_through_tensor_copies(dtype, causal, gen, backend, monkeypatch):
    """Forward and backward as a Hopper GPU runs them on long sequences: q, k, v and dO read
    through tensor descriptors of their rows (grouped heads: a key head's rows are found from
    the query head's), here on every back end; fp16 by the whole-block kernels, fp32 by the
    general backward's copies of the blocks it walks."""
    monkeypatch.setattr(flash, "_by_tensor_copies", lambda p, block_m, block_n, least=None: True)
    q = make((2, 4, 128, 64), dtype, gen, -1, 1).requires_grad_()
    k, v = (make((2, 2, 192, 64), dtype, gen, -1, 1).requires_grad_() for _ in "kv")
    _check(gen, dtype, (q, k, v), scale=16.0, is_causal=causal, enable_gqa=True)


def test_which_problems_are_read_by_tensor_copies(monkeypatch):
    """Rows are copied by blocks only where no block can pass a sequence's end into the next
    one's rows and the work repays a descriptor launch's host time."""
    from naiad.ops.attention.sdpa import _Problem

    monkeypatch.setattr(flash, "_COPIES_FROM", 2**20)
    q, k, v = (torch.empty(1, 2, 256, 64, dtype=torch.float16) for _ in "qkv")

    def copyable(q=q, k=k, v=v, mask=None, block_m=64, **kwargs):
        problem = _Problem(q, k, v, mask, 0.0, kwargs.get("causal", False), None)
        return flash.rows_copyable(problem, block_m, 64)

    assert copyable() and copyable(causal=True)
    assert not copyable(block_m=96)  # a block past the sequence's end
    assert not copyable(mask=torch.ones(256, 256, dtype=torch.bool))
    narrow = [torch.empty(1, 2, 256, 48, dtype=torch.float16) for _ in "qkv"]
    assert not copyable(*narrow)  # E short of its block
    assert not copyable(q=torch.empty(1, 256, 2, 64, dtype=torch.float16).transpose(1, 2))
    shifted = torch.empty(2 * 256 * 64 + 1, dtype=torch.float16)[1:].view(1, 2, 256, 64)
    assert not copyable(k=shifted) and not copyable(v=shifted)  # rows 2 bytes off alignment
    assert not copyable(v=torch.empty(1, 256, 2, 64, dtype=torch.float16).transpose(1, 2))
    monkeypatch.setattr(flash, "_COPIES_FROM", 2**40)
    assert not copyable()  # too short to repay the launch


def test_a_problem_reads_the_tf32_setting_only_for_fp32_on_a_gpu(monkeypatch):
    """fp32 products on a GPU follow torch.backends.cuda.matmul.allow_tf32; half precision and
    the CPU never read it (a read costs each call's Problem host time)."""
    from naiad.ops.attention.sdpa import _Problem

    class Unread:
        @property
        def allow_tf32(self):
            raise AssertionError("allow_tf32 read")

    monkeypatch.setattr(torch.backends.cuda, "matmul", Unread())
    for dtype in (torch.float16, torch.bfloat16, torch.float32):
        q, k, v = (torch.empty(1, 2, 16, 32, dtype=dtype) for _ in "qkv")
        assert _Problem(q, k, v, None, 0.0, False, None).precision == "ieee"


def test_attention_strided_inputs(gen, interpreted):
    """(B, L, H, E) tensors seen as (B, H, L, E), as attention layers make them."""
    q, k, v = (make((2, 17, 3, 32), torch.float32, gen, -1, 1).transpose(1, 2) for _ in "qkv")
    _check(gen, torch.float32, (q.requires_grad_(), k.requires_grad_(), v.requires_grad_()))


def test_attention_falls_back_to_torch(gen, interpreted):
    q, k, v = (t[0] for t in _qkv(gen, torch.float32, HK=4))  # (H, L, E): a rank not handled
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert torch.equal(ops.scaled_dot_product_attention(q, k, v, is_causal=True), expected)


@pytest.mark.full
@pytest.mark.parametrize("dtype, E", list(zip(FLOATS, [64, 128, 256], strict=True)))
@pytest.mark.parametrize("causal", [False, True])
def test_attention_matrix(dtype, E, causal, gen, backend):
    tensors = _qkv(gen, dtype, B=1, H=2, HK=1, L=70, S=70, E=E)
    _check(gen, dtype, tensors, scale=16.0, is_causal=causal, enable_gqa=True)


def test_attention_through_the_switch(gen, interpreted, monkeypatch):
    calls = []
    for name in ("forward", "backward"):
        kernel = getattr(flash, name)
        monkeypatch.setattr(flash, name, lambda *a, k=kernel: calls.append(k) or k(*a))
    q, k, v = _qkv(gen, torch.float32, HK=4, L=24, S=24, E=16)
    grad = make((2, 4, 24, 16), torch.float32, gen)
    for causal in (False, True):
        expected = _with_grads(F.scaled_dot_product_attention, (q, k, v), grad, is_causal=causal)
        with ops.use(include=["scaled_dot_product_flash_attention_for_cpu"]):
            actual = _with_grads(F.scaled_dot_product_attention, (q, k, v), grad,
                                 is_causal=causal)  # fmt: skip
        for a, e in zip(actual, expected, strict=True):
            assert_matches(a, e, 8, normwise=True)
    assert len(calls) == 4  # Naiad's forward and backward, twice
