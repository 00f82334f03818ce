"""torch.compile's own kernels compiled by Naiad: Inductor generates Triton kernels for the CPU.

    python examples/pytorch/inductor_cpu.py

`naiad.torch.install(cpu_backend="triton")` makes Naiad stand in for Triton and sets
`torch._inductor.config.cpu_backend = "triton"`: for CPU tensors Inductor then writes Triton
kernels (instead of C++), and Naiad compiles them for this machine's CPU. A small MLP is
compiled, forward and backward, and compared with eager. Set `TORCH_LOGS=output_code` to see
the kernels Inductor wrote.
"""

import naiad.torch

naiad.torch.install(cpu_backend="triton")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402


class MLP(torch.nn.Module):
    def __init__(self, d=64, hidden=256):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)
        self.up, self.down = torch.nn.Linear(d, hidden), torch.nn.Linear(hidden, d)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.norm(x))))


def main():
    torch.manual_seed(0)
    model = MLP()
    x = torch.randn(32, 64)
    compiled = torch.compile(model, fullgraph=True)
    got = compiled(x)
    got.square().mean().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    expected = model(x)
    expected.square().mean().backward()
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)
    for mine, theirs in zip(grads, (p.grad for p in model.parameters())):
        torch.testing.assert_close(mine, theirs, rtol=1e-4, atol=1e-4)
    print(f"inductor_cpu: ok (max err {(got - expected).abs().max().item():.1e}, "
          f"{len(grads)} gradients equal)")


if __name__ == "__main__":
    main()
