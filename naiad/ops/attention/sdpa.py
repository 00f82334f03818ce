"""scaled_dot_product_attention from the flash kernels (forward.py, backward.py): the direct call,
differentiable, and the fused-attention overloads ATen's scaled_dot_product_attention dispatches
to (the CPU flash kernel; on CUDA the flash, memory-efficient and cuDNN ones), registered with
the switch.

Handled: (B, H, L, E) queries against (B, HK, S, E) keys and values (H a multiple of HK: grouped
heads), any strides with a unit one along E, fp32/fp16/bf16, head dims up to 256, causal (from
the top left, as torch's is_causal) or not, with or without a boolean or additive mask that
broadcasts to (B, H, L, S). Dropout and other ranks go to torch (the direct call to torch's
function; a registered overload to torch's kernel).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..differentiable import apply
from ..dtypes import Unsupported
from ..registry import aten
from .backward import attention_delta, attention_dkdv, attention_dq
from .forward import attention_forward
from .scores import ADD_MASK, BOOL_MASK, LOG2E, NO_MASK

__all__ = ["scaled_dot_product_attention"]

_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
MAX_HEAD_DIM = 256


# (kernel, device kind) -> rows (widest head block, BLOCK_M queries, BLOCK_N keys, num_warps):
# the first row whose head block is at least the call's. The GPU rows are the fastest of a
# sweep on an H200 (fp16, 4x16x1024, causal and not; bench/RESULTS.md); wide heads take smaller
# tiles (the tiles share the registers). The CPU keeps one set of tiles.
_CPU = ((64, 64, 64, 1), (256, 32, 32, 1))
BLOCKS = {
    ("forward", "cuda"): ((64, 64, 64, 4), (128, 128, 32, 4), (256, 32, 32, 4)),
    ("dkdv", "cuda"): ((64, 64, 64, 4), (128, 32, 128, 8), (256, 32, 32, 4)),
    ("dq", "cuda"): ((128, 64, 64, 4), (256, 32, 32, 4)),
    ("forward", "cpu"): ((64, 64, 64, 1), (128, 64, 32, 1), (256, 32, 32, 1)),
    ("dkdv", "cpu"): _CPU,
    ("dq", "cpu"): _CPU,
}


def _blocks(kernel: str, device: torch.device, block_e: int) -> tuple[int, int, dict]:
    """(BLOCK_M, BLOCK_N, launch options) of one of the three kernels."""
    kind = "cpu" if device.type == "cpu" else "cuda"
    for widest, block_m, block_n, warps in BLOCKS[(kernel, kind)]:
        if block_e <= widest:
            return block_m, block_n, {} if kind == "cpu" else {"num_warps": warps}
    raise Unsupported(f"attention with a head block of {block_e}")


class _Problem:
    """The shapes, strides and flags every kernel of one attention call takes."""

    def __init__(self, q, k, v, mask, dropout_p, causal, scale):
        if q.dim() != 4 or k.dim() != 4 or v.dim() != 4 or dropout_p:
            raise Unsupported("attention of other ranks or with dropout")
        if q.dtype not in _DTYPES or k.dtype != q.dtype or v.dtype != q.dtype:
            raise Unsupported(f"attention of {q.dtype}")
        B, H, L, E = q.shape
        _, HK, S, _ = k.shape
        if E > MAX_HEAD_DIM or v.shape[-1] != E or H % HK or k.shape[0] != B or v.shape != k.shape:
            raise Unsupported("attention of these shapes")
        self.q, self.k, self.v = (t if t.stride(-1) == 1 else t.contiguous() for t in (q, k, v))
        self.B, self.H, self.L, self.S, self.E, self.group = B, H, L, S, E, H // HK
        self.causal = bool(causal)
        scale = 1.0 / math.sqrt(E) if scale is None else scale
        self.scale_log2 = scale * LOG2E
        self.mask, self.mask_kind, self.mask_strides = self._mask(mask)
        self.block_e = max(16, 1 << (E - 1).bit_length())
        cuda_tf32 = q.is_cuda and torch.backends.cuda.matmul.allow_tf32
        self.precision = "tf32" if q.dtype == torch.float32 and cuda_tf32 else "ieee"

    def _mask(self, mask):
        if mask is None:
            return self.q, NO_MASK, (0, 0, 0, 0)
        if mask.dtype != torch.bool and mask.dtype not in _DTYPES:
            raise Unsupported(f"attention mask of {mask.dtype}")
        full = mask.expand(self.B, self.H, self.L, self.S)
        return full, BOOL_MASK if mask.dtype == torch.bool else ADD_MASK, full.stride()

    def strides(self):
        q, k, v = self.q, self.k, self.v
        return (*q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *self.mask_strides)

    def constants(self, kernel: str):
        """(BLOCK_M, BLOCK_N, the kernel's trailing constexprs, launch options)."""
        block_m, block_n, options = _blocks(kernel, self.q.device, self.block_e)
        flags = (self.E, self.causal, self.mask_kind, self.precision, block_m, block_n)
        return block_m, block_n, (*flags, self.block_e), options


def _forward(p: _Problem):
    """(output (B, H, L, E) contiguous, log-sum-exp (B, H, L) fp32)."""
    q = p.q
    out = torch.empty(p.B, p.H, p.L, p.E, dtype=q.dtype, device=q.device)
    lse = torch.empty(p.B, p.H, p.L, dtype=torch.float32, device=q.device)
    block_m, _, constants, options = p.constants("forward")
    if out.numel():
        grid = ((p.L + block_m - 1) // block_m, p.B * p.H)
        attention_forward[grid](q, p.k, p.v, out, lse, p.mask, p.L, p.S, p.H, p.group,
                                p.scale_log2, *p.strides(), *constants, **options)  # fmt: skip
    return out, lse


def _backward(p: _Problem, grad, out, lse):
    """(dq, dk, dv) of the attention whose forward gave `out` and `lse`."""
    q = p.q
    grad = grad.contiguous()
    out = out.contiguous()
    dq = torch.empty(p.B, p.H, p.L, p.E, dtype=q.dtype, device=q.device)
    dk = torch.empty(p.B, p.H // p.group, p.S, p.E, dtype=q.dtype, device=q.device)
    dv = torch.empty_like(dk)
    if not (dq.numel() and dk.numel()):
        return dq.zero_(), dk.zero_(), dv.zero_()
    delta = torch.empty(p.B, p.H, p.L, dtype=torch.float32, device=q.device)
    rows = p.B * p.H * p.L
    options = {} if q.device.type == "cpu" else {"num_warps": 4}
    attention_delta[((rows + 63) // 64,)](out, grad, delta, rows, p.E, 64, p.block_e, **options)
    tensors = (q, p.k, p.v, grad, lse, delta)
    shape = (p.L, p.S, p.H, p.group, p.scale_log2, *p.strides())
    _, block_n, constants, options = p.constants("dkdv")
    kv_grid = ((p.S + block_n - 1) // block_n, p.B * (p.H // p.group))
    attention_dkdv[kv_grid](*tensors, dk, dv, p.mask, *shape, *constants, **options)
    block_m, _, constants, options = p.constants("dq")
    q_grid = ((p.L + block_m - 1) // block_m, p.B * p.H)
    attention_dq[q_grid](*tensors, dq, p.mask, *shape, *constants, **options)
    return dq, dk, dv


class _Attention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, problem):
        out, lse = _forward(problem)
        ctx.save_for_backward(out, lse)
        ctx.problem = problem
        return out

    @staticmethod
    def backward(ctx, grad):
        out, lse = ctx.saved_tensors
        dq, dk, dv = _backward(ctx.problem, grad, out, lse)
        return dq, dk, dv, None


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):  # fmt: skip
    """torch.nn.functional.scaled_dot_product_attention, forward and backward in Naiad kernels
    where the arguments are handled (module docstring), torch's function elsewhere."""
    grouped = query.dim() == 4 and key.dim() == 4 and query.shape[1] != key.shape[1]
    try:
        if grouped and not enable_gqa:
            raise Unsupported("differing head counts without enable_gqa")
        if is_causal and attn_mask is not None:
            raise Unsupported("both a causal flag and a mask")
        problem = _Problem(query, key, value, attn_mask, dropout_p, is_causal, scale)
    except Unsupported:
        return F.scaled_dot_product_attention(
            query, key, value, attn_mask, dropout_p, is_causal, scale=scale, enable_gqa=enable_gqa
        )
    return apply(_Attention, query, key, value, problem)


@aten("_scaled_dot_product_flash_attention_for_cpu.default")
def flash_attention_for_cpu(query, key, value, dropout_p=0.0, is_causal=False, *,
                            attn_mask=None, scale=None):  # fmt: skip
    return _forward(_Problem(query, key, value, attn_mask, dropout_p, is_causal, scale))


@aten("_scaled_dot_product_flash_attention_for_cpu_backward.default")
def flash_attention_for_cpu_backward(grad_out, query, key, value, out, logsumexp, dropout_p,
                                     is_causal, *, attn_mask=None, scale=None):  # fmt: skip
    problem = _Problem(query, key, value, attn_mask, dropout_p, is_causal, scale)
    return _backward(problem, grad_out, out, logsumexp)


def _flash_outputs(problem) -> tuple:
    """The forward's results as the flash and cuDNN overloads return them: the output and the
    log-sum-exp, then empty debug masks, the lengths and empty random-number seeds."""
    out, lse = _forward(problem)
    device = out.device
    empty = torch.empty(0, device=device)
    seeds = torch.empty(0, dtype=torch.int64, device=device)
    return out, lse, empty, empty, problem.L, problem.S, seeds, seeds, empty


@aten("_scaled_dot_product_flash_attention.default")
def flash_attention(query, key, value, dropout_p=0.0, is_causal=False, return_debug_mask=False,
                    *, scale=None):  # fmt: skip
    if return_debug_mask:
        raise Unsupported("the flash kernel's debug mask")
    return _flash_outputs(_Problem(query, key, value, None, dropout_p, is_causal, scale))


@aten("_scaled_dot_product_flash_attention_backward.default")
def flash_attention_backward(grad_out, query, key, value, out, logsumexp, cum_seq_q, cum_seq_k,
                             max_q, max_k, dropout_p, is_causal, philox_seed, philox_offset, *,
                             scale=None):  # fmt: skip
    problem = _Problem(query, key, value, None, dropout_p, is_causal, scale)
    return _backward(problem, grad_out, out, logsumexp)


@aten("_scaled_dot_product_efficient_attention.default")
def efficient_attention(query, key, value, attn_bias, compute_log_sumexp, dropout_p=0.0,
                        is_causal=False, *, scale=None):  # fmt: skip
    out, lse = _forward(_Problem(query, key, value, attn_bias, dropout_p, is_causal, scale))
    seeds = torch.empty(0, dtype=torch.int64, device=query.device)
    return out, lse, seeds, seeds


@aten("_scaled_dot_product_efficient_attention_backward.default")
def efficient_attention_backward(grad_out, query, key, value, attn_bias, out, logsumexp,
                                 philox_seed, philox_offset, dropout_p, grad_input_mask,
                                 is_causal=False, *, scale=None):  # fmt: skip
    if attn_bias is not None and attn_bias.requires_grad and grad_input_mask[3]:
        raise Unsupported("the gradient of an attention bias")
    problem = _Problem(query, key, value, attn_bias, dropout_p, is_causal, scale)
    dq, dk, dv = _backward(problem, grad_out, out, logsumexp)
    return dq, dk, dv, None


@aten("_scaled_dot_product_cudnn_attention.default")
def cudnn_attention(query, key, value, attn_bias, compute_log_sumexp, dropout_p=0.0,
                    is_causal=False, return_debug_mask=False, *, scale=None):  # fmt: skip
    """The overload torch's dispatch prefers on Hopper GPUs for fp16 and bf16."""
    if return_debug_mask:
        raise Unsupported("the cuDNN kernel's debug mask")
    return _flash_outputs(_Problem(query, key, value, attn_bias, dropout_p, is_causal, scale))


@aten("_scaled_dot_product_cudnn_attention_backward.default")
def cudnn_attention_backward(grad_out, query, key, value, out, logsumexp, philox_seed,
                             philox_offset, attn_bias, cum_seq_q, cum_seq_k, max_q, max_k,
                             dropout_p, is_causal, *, scale=None):  # fmt: skip
    problem = _Problem(query, key, value, attn_bias, dropout_p, is_causal, scale)
    return _backward(problem, grad_out, out, logsumexp)
