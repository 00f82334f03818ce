"""Kernels and ops the torch programs share, written against `triton` as a Triton user would;
run under `python -m naiad.run`, so `triton` is Naiad."""

import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton


@triton.autotune(configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 128})], key=["n"])
@triton.jit
def scale_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)


@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 16})], key=["n"])
@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def mul_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs) * tl.load(y_ptr + offs))
    else:
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, x * tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.constexpr_function
def half(value):
    return value // 2


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # A constexpr function: Inductor copies it into its module beside the kernel.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, half(BLOCK) * 2)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton_op("naiad_tests::scale", mutates_args=())
def scale(x: torch.Tensor, alpha: float) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    wrap_triton(scale_kernel)[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n, alpha)
    return out


def _scale_backward(ctx, grad):
    return scale(grad, ctx.alpha), None


def _scale_setup(ctx, inputs, output):
    ctx.alpha = inputs[1]


scale.register_autograd(_scale_backward, setup_context=_scale_setup)


def launches(x, y):
    """Kernels launched straight from the compiled function: a plain, an autotuned and an
    autotuned-over-heuristics one, then the custom op (whose backward is the op again)."""
    n = x.numel()
    total = torch.empty_like(x)
    wrap_triton(add_kernel)[(triton.cdiv(n, 64),)](x, y, total, n, BLOCK=64)
    product = torch.empty_like(x)
    wrap_triton(mul_kernel)[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, total, product, n)
    return (scale(x, 3.0) * product).sum()


def reference(x, y):
    return (3.0 * x * x * (x + y)).sum()
