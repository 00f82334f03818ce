"""torch.compile with Inductor generating Triton kernels for the CPU
(`torch._inductor.config.cpu_backend = "triton"`), compiled by Naiad under `python -m
naiad.run`: each case named on the command line is compiled (fullgraph), run on random inputs
and compared with eager, forward and (for modules) backward; prints `case: forward backward`.
NAIAD_TORCH_DEVICE=cuda runs the same cases on the GPU, where Inductor generates Triton kernels
by default."""

import os
import sys

import torch
import torch._inductor.config as inductor_config
import torch.nn.functional as F
from torch._inductor.runtime import triton_compat

inductor_config.cpu_backend = "triton"


def pointwise(x):
    return torch.sigmoid(x) * torch.tanh(x) + x.abs().sqrt() - torch.erf(x)


def softmax(x):
    return torch.softmax(x * 2 + 1, dim=-1)


def layer_norm_gelu(x, w, b):
    return F.gelu(F.layer_norm(x, (x.shape[-1],), w, b))


def odd_reductions(x):
    return x.sum(0), x.amax(1), x.var(1), x.mean()


def softmax_matmul(a, b):
    return torch.softmax(a @ b, -1) @ b.t()


def scans_and_arg_reductions(x):
    return torch.cumsum(x, 1), torch.cumprod(x[:, :5], 1), x.argmax(1), x.argmin(0)


def embedding_bag(indices, weight):
    return F.embedding(indices, weight).sum(1)


def integers(x, y):
    return (x // 3 + y % 5) * 2, x >> 1, (x & y) | 3


def matmul_epilogue(a, b):
    return torch.relu(a @ b) + 1


class MLP(torch.nn.Module):
    def __init__(self, d=64, hidden=256):
        super().__init__()
        self.up, self.down = torch.nn.Linear(d, hidden), torch.nn.Linear(hidden, d)

    def forward(self, x):
        return self.down(F.gelu(self.up(x)))


class Block(torch.nn.Module):
    """A pre-norm transformer block: attention and an MLP, each with a residual."""

    def __init__(self, d=64, heads=4):
        super().__init__()
        self.norm1, self.norm2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.attn = torch.nn.MultiheadAttention(d, heads, batch_first=True)
        self.mlp = MLP(d)

    def forward(self, x):
        y = self.norm1(x)
        x = x + self.attn(y, y, y, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class NaiadOps(torch.nn.Module):
    """naiad.ops' direct calls in Inductor's graph: custom ops it calls as they are, their
    gradients through their formulas and autograd functions."""

    def __init__(self, d=48):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(d))

    def forward(self, x):
        import naiad.ops as ops

        scaled = ops.softmax(ops.mul(x, self.weight), -1)
        return ops.add(scaled, ops.silu(ops.layer_norm(x, [x.shape[-1]])))


CASES = {
    "pointwise": (pointwise, lambda: (torch.randn(1000, 37),)),
    "softmax": (softmax, lambda: (torch.randn(37, 101),)),
    "layer_norm_gelu": (layer_norm_gelu, lambda: (torch.randn(33, 77), *torch.randn(2, 77))),
    "odd_reductions": (odd_reductions, lambda: (torch.randn(129, 67),)),
    "softmax_matmul": (softmax_matmul, lambda: (torch.randn(31, 45), torch.randn(45, 19))),
    "scans_and_arg_reductions": (scans_and_arg_reductions, lambda: (torch.rand(17, 33),)),
    "embedding_bag": (
        embedding_bag,
        lambda: (torch.randint(0, 50, (7, 5)), torch.randn(50, 24)),
    ),
    "integers": (
        integers,
        lambda: (torch.randint(-100, 100, (257,)), torch.randint(1, 100, (257,))),
    ),
    # max-autotune: Inductor's Triton matmul templates (tl.dot) with the epilogue fused
    "matmul_epilogue": (matmul_epilogue, lambda: (torch.randn(128, 96), torch.randn(96, 160))),
    "mlp": (MLP, lambda: (torch.randn(8, 64),)),
    "block": (Block, lambda: (torch.randn(2, 16, 64),)),
    "naiad_ops": (NaiadOps, lambda: (torch.randn(24, 48),)),
}


def close(got, expected) -> bool:
    pairs = zip(torch.utils._pytree.tree_leaves(got), torch.utils._pytree.tree_leaves(expected))
    return all(torch.allclose(g.double(), e.double(), rtol=1e-4, atol=1e-4) for g, e in pairs)


def gradients(fn, args):
    inputs = [a.clone().requires_grad_() for a in args]
    fn(*inputs).sum().backward()
    grads = [p.grad.clone() for p in fn.parameters()] + [inputs[0].grad]
    fn.zero_grad()
    return grads


def check(name: str) -> str:
    make, make_args = CASES[name]
    fn = make() if isinstance(make, type) else make
    args = make_args()
    if name == "matmul_epilogue":
        # Inductor's benchmark of fusions writes a module with misindented imports for the
        # CPU's Triton kernels (torch's own text, whichever Triton compiles it): not used here.
        inductor_config.benchmark_epilogue_fusion = inductor_config.benchmark_fusion = False
        compiled = torch.compile(fn, fullgraph=True, mode="max-autotune-no-cudagraphs")
    else:
        compiled = torch.compile(fn, fullgraph=True)
    seen = f"{close(compiled(*args), fn(*args))}"
    if isinstance(fn, torch.nn.Module):
        seen += f" {close(gradients(compiled, args), gradients(fn, args))}"
    return seen


def check_dynamic() -> str:
    """One compile with symbolic sizes (`dynamic=True`), run on rows of three lengths."""
    compiled = torch.compile(softmax, fullgraph=True, dynamic=True)
    return str(all(close(compiled(x), softmax(x)) for x in map(torch.randn, (5, 9, 33), (31,) * 3)))


if __name__ == "__main__":
    torch.set_default_device(os.environ.get("NAIAD_TORCH_DEVICE", "cpu"))
    torch.manual_seed(0)
    print("inductor sees triton:", triton_compat.HAS_TRITON)
    for case in sys.argv[1:]:
        seen = check_dynamic() if case == "dynamic" else check(case)
        print(f"{case}: {seen}", flush=True)
