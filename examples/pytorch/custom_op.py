"""A Naiad kernel as a PyTorch custom operator, with a backward, inside torch.compile.

    python examples/pytorch/custom_op.py

`naiad.torch.triton_op` makes a torch operator of a function that launches Naiad kernels
through `naiad.torch.wrap_triton`. Nothing here needs Naiad to stand in for Triton: torch
sees an operator whose output shapes come from running the function on fake tensors (the
launches skipped), so `torch.compile(fullgraph=True)` traces a call to it without a graph break.
"""

import torch

import naiad
import naiad.language as tl
import naiad.torch


@naiad.autotune(configs=[naiad.Config({"BLOCK": 64}), naiad.Config({"BLOCK": 256})], key=["n"])
@naiad.jit
def silu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * tl.sigmoid(x), mask=mask)


@naiad.jit
def silu_grad_kernel(x_ptr, grad_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    s = tl.sigmoid(x)
    grad = tl.load(grad_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, grad * s * (1 + x * (1 - s)), mask=mask)


@naiad.torch.triton_op("naiad_examples::silu", mutates_args=())
def silu(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    naiad.torch.wrap_triton(silu_kernel)[lambda meta: (naiad.cdiv(n, meta["BLOCK"]),)](x, out, n)
    return out


@naiad.torch.triton_op("naiad_examples::silu_grad", mutates_args=())
def silu_grad(x: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
    grad = grad.contiguous()  # the kernel reads it flat (the gradient of a sum is a broadcast)
    out = torch.empty_like(x)
    n = x.numel()
    naiad.torch.wrap_triton(silu_grad_kernel)[(naiad.cdiv(n, 256),)](x, grad, out, n, BLOCK=256)
    return out


def backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return silu_grad(x, grad)


def setup_context(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])


silu.register_autograd(backward, setup_context=setup_context)


def model(x, w):
    return silu(x @ w).sum()


def main():
    torch.manual_seed(0)
    x = torch.randn(64, 128)
    w = torch.randn(128, 96, requires_grad=True)
    compiled = torch.compile(model, fullgraph=True)
    loss = compiled(x, w)
    loss.backward()
    grad = w.grad.clone()
    w.grad = None
    expected = torch.nn.functional.silu(x @ w).sum()
    expected.backward()
    torch.testing.assert_close(loss, expected, rtol=1e-4, atol=1e-3)
    torch.testing.assert_close(grad, w.grad, rtol=1e-4, atol=1e-3)
    print(f"custom_op: ok (loss {loss.item():.4f}, gradient max err "
          f"{(grad - w.grad).abs().max().item():.1e})")


if __name__ == "__main__":
    main()
