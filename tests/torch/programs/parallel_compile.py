"""Inductor's Triton kernels compiled in its worker processes, under `python -m naiad.run` with
cpu_backend="triton": the workers compile with Naiad and pickle the kernels back to this process
(runtime/pickling.py), which launches them. Prints whether the worker pool took the compiles
and whether the compiled function matches eager."""

import time

import torch
import torch._inductor.config as config
from torch._inductor.async_compile import AsyncCompile

config.cpu_backend = "triton"
AsyncCompile.warm_pool()
started = time.monotonic()
while not AsyncCompile.use_process_pool() and time.monotonic() - started < 300:
    time.sleep(0.2)
# A pool that is ready takes every kernel Inductor has not compiled yet.
print("workers compile:", AsyncCompile.use_process_pool())


def f(x, y):
    return torch.softmax(x * y + 1.0, -1).sum(0) + torch.tanh(y).mean()


torch.manual_seed(0)
x, y = torch.randn(64, 100), torch.randn(64, 100)
compiled = torch.compile(f)
print("matches eager:", torch.allclose(compiled(x, y), f(x, y), atol=1e-5))
print("again:", torch.allclose(compiled(y, x), f(y, x), atol=1e-5))
