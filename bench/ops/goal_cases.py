"""The cases of bench/ops/op_goals.py, by issue 19's speed-goal groups: each a Naiad call and
torch's on the same random tensors, at sizes for a GPU (--device cuda) or small ones for the CPU.
Naiad's side may run inside a context (the model's step: the whole switch on)."""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from pathlib import Path

import cpu_ops  # bench/ops/, the script's directory, is first on sys.path
import torch
import torch.nn.functional as F

import naiad.ops as ops

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "pytorch"))
from tiny_llama import TinyLlama

ELEMENTWISE_GROUPS = {
    "pointwise": ("add", "mul scalar", "add broadcast", "add transposed", "exp", "sigmoid",
                  "gelu", "silu", "where", "lt", "to fp16"),
    "reductions": ("sum rows", "sum cols", "amax rows", "argmax rows", "var rows",
                   "logsumexp rows"),
    "norms": ("softmax", "log_softmax", "layer_norm", "rms_norm"),
    "data movement": ("flip", "scatter_add", "sort rows", "topk rows"),
}  # fmt: skip
# The table's order: the goals' groups first, data movement (no GPU goal) last.
GROUPS = ("pointwise", "reductions", "norms", "products", "attention fwd", "model",
          "attention fwd+bwd", "attention fwd (torch default)", "attention fwd+bwd (torch default)",
          "data movement")  # fmt: skip
# The groups whose torch side is F.scaled_dot_product_attention left to pick its backend (on an
# H100/H200 torch 2.11 picks cuDNN's attention, faster than its flash kernel): shown beside the
# goal's groups, which time torch's flash kernel (SDPBackend.FLASH_ATTENTION), the issue's
# baseline.
TORCH_DEFAULT = " (torch default)"


@dataclasses.dataclass
class Case:
    group: str
    name: str
    ours: object  # () -> result, Naiad's side
    theirs: object  # () -> result, torch's side
    around: object = contextlib.nullcontext  # the context Naiad's side runs in
    slack: float = 1.0  # times TOLERANCE


def elementwise_cases(n, device):
    """cpu_ops.py's cases, each in its group."""
    group_of = {name: group for group, names in ELEMENTWISE_GROUPS.items() for name in names}
    cases = cpu_ops.cases(n, device)
    if set(cases) != set(group_of):
        raise SystemExit(f"cpu_ops.py's cases and ELEMENTWISE_GROUPS differ: "
                         f"{sorted(set(cases) ^ set(group_of))}")  # fmt: skip
    return [Case(group_of[name], f"{name} fp32 {n}x{n}", *calls) for name, calls in cases.items()]


def _randn(*shape, device, dtype):
    return torch.randn(*shape, device=device).to(dtype)


def product_cases(n, device):
    """mm and addmm of n x n x n, bmm of 32 products of n/4 cubed, per dtype."""
    dtypes = (torch.float16, torch.bfloat16) if device == "cuda" else (torch.float32,)
    cases = []
    for dtype in dtypes:
        a, b, bias = (_randn(*s, device=device, dtype=dtype) for s in ((n, n), (n, n), (n,)))
        m = max(n // 4, 1)
        a3, b3 = (_randn(32, m, m, device=device, dtype=dtype) for _ in "ab")
        kind = str(dtype).removeprefix("torch.")
        cases += [
            Case("products", f"mm {kind} {n}^3", lambda a=a, b=b: ops.mm(a, b),
                 lambda a=a, b=b: torch.mm(a, b)),
            Case("products", f"addmm {kind} {n}^3", lambda a=a, b=b, c=bias: ops.addmm(c, a, b),
                 lambda a=a, b=b, c=bias: torch.addmm(c, a, b)),
            Case("products", f"bmm {kind} 32x{m}^3", lambda a=a3, b=b3: ops.bmm(a, b),
                 lambda a=a3, b=b3: torch.bmm(a, b)),
        ]  # fmt: skip
    return cases


def _attention_shapes(n, device):
    """(batch, heads, length, head dim) per case, the dtypes of the forward, of the backward:
    on a GPU the head dims 64, 128 and, the widest the issue names, 256."""
    if device == "cuda":
        shapes = [(4, 16, 1024, 64), (4, 16, 1024, 128), (2, 16, 4096, 64), (2, 16, 4096, 128),
                  (2, 16, 2048, 256)]  # fmt: skip
        return shapes, (torch.float16, torch.bfloat16), (torch.float16,)
    return [(1, 2, n, 64)], (torch.float32,), (torch.float32,)


def attention_cases(n, device):
    """scaled_dot_product_attention, causal or not, forward; forward + backward (the gradients
    of q, k, v for a fixed random output gradient). On a GPU each case twice: against torch's
    flash kernel (the goal's groups) and against the backend torch picks (TORCH_DEFAULT); on
    the CPU against its flash kernel alone."""
    shapes, forward_dtypes, backward_dtypes = _attention_shapes(n, device)
    baselines = (True, False) if device == "cuda" else (True,)
    cases = []
    for backward, dtypes in ((False, forward_dtypes), (True, backward_dtypes)):
        for flash in baselines:
            for dtype in dtypes:
                for shape in shapes:
                    for causal in (False, True):
                        cases.append(_attention_case(shape, dtype, causal, backward, flash, device))
    return cases


def _torch_flash(q, k, v, is_causal):
    """torch's SDPA restricted to its flash kernel."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        return F.scaled_dot_product_attention(q, k, v, is_causal=is_causal)


def _attention_case(shape, dtype, causal, backward, flash, device):
    q, k, v = (_randn(*shape, device=device, dtype=dtype).requires_grad_() for _ in "qkv")
    grad = _randn(*shape, device=device, dtype=dtype)

    def call(fn):
        def run():
            out = fn(q, k, v, is_causal=causal)
            return [out, *torch.autograd.grad(out, (q, k, v), grad)] if backward else out

        return run

    kind = str(dtype).removeprefix("torch.")
    name = f"{kind} {'x'.join(map(str, shape))}{' causal' if causal else ''}"
    group = ("attention fwd+bwd" if backward else "attention fwd") + (
        "" if flash else TORCH_DEFAULT
    )
    ours = call(ops.scaled_dot_product_attention)
    theirs = call(_torch_flash if flash else F.scaled_dot_product_attention)
    return Case(group, name, ours, theirs, slack=2.0)


def model_cases(n, device):
    """The Llama-style model's training step: logits, loss and every parameter's gradient. On
    the GPU at two batches: 8 x 512 tokens, where both sides are bound by the host's time a
    call, and 8 x 2048, where the GPU's time weighs."""
    if device == "cuda":
        config = dict(vocab=8192, dim=1024, heads=16, kv_heads=4, hidden=2816, layers=4)
        shapes, dtype = [(8, 512), (8, 2048)], torch.bfloat16
    else:
        config = dict(vocab=256, dim=64, heads=4, kv_heads=2, hidden=128, layers=2)
        shapes, dtype = [(2, max(n // 2, 8))], torch.float32
    return [_model_case(config, batch, length, dtype, device) for batch, length in shapes]


def _model_case(config: dict, batch: int, length: int, dtype, device) -> Case:
    torch.manual_seed(0)
    model = TinyLlama(**config).to(device=device, dtype=dtype)
    tokens, labels = (torch.randint(0, config["vocab"], (batch, length), device=device)
                      for _ in "tl")  # fmt: skip

    def step():
        logits, loss = model(tokens, labels)
        return [logits, loss, *torch.autograd.grad(loss, list(model.parameters()))]

    shape = f"{config['layers']} layers of {config['dim']}, {batch}x{length} tokens"
    name = f"llama step {str(dtype).removeprefix('torch.')} {shape}"
    return Case("model", name, step, step, around=ops.use, slack=3.0)


BUILDERS = {
    **dict.fromkeys(ELEMENTWISE_GROUPS, elementwise_cases),
    "products": product_cases,
    "attention fwd": attention_cases,
    "attention fwd+bwd": attention_cases,
    "attention fwd" + TORCH_DEFAULT: attention_cases,
    "attention fwd+bwd" + TORCH_DEFAULT: attention_cases,
    "model": model_cases,
}


def build(groups, n, device) -> list[Case]:
    """The cases of the chosen groups, in GROUPS' order."""
    cases = []
    for builder in dict.fromkeys(BUILDERS[group] for group in groups):
        cases += builder(n, device)
    return sorted((c for c in cases if c.group in groups), key=lambda c: GROUPS.index(c.group))
