"""Triton kernels launched inside torch.compile, on Naiad: torch's own `wrap_triton`.

    python examples/pytorch/wrap_triton.py

`naiad.torch.install()` makes Naiad stand in for Triton (`import triton` gives Naiad), so
torch recognises Naiad's kernels as Triton kernels: `torch.library.wrap_triton` takes them, and
`torch.compile(fullgraph=True)` records each launch as a node of its graph (torch's
`triton_kernel_wrapper_functional`), which Inductor compiles with the rest of the function.
The same program runs unchanged on Triton; `python -m naiad.run` does the same for a program
that cannot be edited.
"""

import naiad.torch

naiad.torch.install()  # before torch.compile first runs, and before anything imports triton

import torch  # noqa: E402
import triton  # noqa: E402  (Naiad)
import triton.language as tl  # noqa: E402
from torch._dynamo.utils import counters  # noqa: E402


@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 256})], key=["n"])
@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def fused_bias_gelu(x_ptr, bias_ptr, out_ptr, n, width, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if EVEN:
        mask = offs >= 0
    x = tl.load(x_ptr + offs, mask=mask) + tl.load(bias_ptr + offs % width, mask=mask)
    tl.store(out_ptr + offs, 0.5 * x * (1 + tl.erf(x * 0.7071067811865476)), mask=mask)


def layer(x, w, bias):
    h = x @ w
    out = torch.empty_like(h)
    n = h.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
    torch.library.wrap_triton(fused_bias_gelu)[grid](h, bias, out, n, h.shape[1])
    return out.softmax(-1)


def main():
    torch.manual_seed(0)
    x, w, bias = torch.randn(48, 80), torch.randn(80, 72), torch.randn(72)
    compiled = torch.compile(layer, fullgraph=True)
    got = compiled(x, w, bias)
    expected = torch.nn.functional.gelu(x @ w + bias).softmax(-1)
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)
    breaks = sum(counters["graph_break"].values())
    print(f"wrap_triton: ok (max err {(got - expected).abs().max().item():.1e}, "
          f"{breaks} graph breaks)")


if __name__ == "__main__":
    main()
