"""A Llama-style model trained a step under naiad.ops: every ATen op Naiad implements runs as
Naiad kernels, with no change to the model's code.

    python examples/pytorch/llama_ops.py

The model (tiny_llama.py: embedding, RMSNorm, grouped-KV causal attention, SiLU-gated MLP, tied
head, cross-entropy) runs forward and backward twice on the same random weights and tokens:
in eager torch, then with `naiad.ops.enable()`. The logits, the loss and every parameter's
gradient must agree within float32 tolerance. Runs on the CPU.
"""

import time

import torch
from tiny_llama import TinyLlama

import naiad.ops


def step(model, tokens, labels):
    """Logits, loss and the gradient of every parameter."""
    logits, loss = model(tokens, labels)
    grads = torch.autograd.grad(loss, list(model.parameters()))
    return [logits, loss, *grads]


def main():
    torch.manual_seed(0)
    model = TinyLlama()
    tokens = torch.randint(0, 64, (2, 8))
    labels = torch.randint(0, 64, (2, 8))
    expected = step(model, tokens, labels)
    naiad.ops.enable()
    try:
        count = len(naiad.ops.registered())
        start = time.perf_counter()
        step(model, tokens, labels)  # compiles (or finds in the cache) each kernel
        warm = time.perf_counter()
        actual = step(model, tokens, labels)
        end = time.perf_counter()
    finally:
        naiad.ops.disable()
    worst = 0.0
    for a, e in zip(actual, expected, strict=True):
        torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-5)
        worst = max(worst, float((a - e).detach().abs().max()))
    print(f"llama_ops: ok (logits, loss and {len(expected) - 2} gradients; max err {worst:.1e}; "
          f"{count} ATen overloads on Naiad; first step {warm - start:.1f} s, next "
          f"{(end - warm) * 1e3:.0f} ms)")  # fmt: skip


if __name__ == "__main__":
    main()
