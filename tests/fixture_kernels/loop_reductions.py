"""A reduction a loop accumulates (`acc = op(acc, reduce(x, axis=1))`), which the NVIDIA back
end reduces within threads in the loop (tritongpu-optimize-thread-locality): shared by the
checks of its TTGIR and PTX (tests/backends/nvidia/test_thread_locality.py) and of its values
on the GPU (tests/gpu/test_thread_locality_gpu.py). The accumulator starts from values read
from Y, not the reduction's neutral element, so the pass must combine them in after the loop."""

import numpy as np

import naiad
import naiad.language as tl

OPS = ("sum", "max", "min")


@naiad.jit
def _combine(a, b, OP: tl.constexpr):
    if OP == "sum":
        return a + b
    elif OP == "max":
        return tl.maximum(a, b)
    else:
        return tl.minimum(a, b)


@naiad.jit
def _reduce_rows(x, OP: tl.constexpr):
    if OP == "sum":
        return tl.sum(x, axis=1)
    elif OP == "max":
        return tl.max(x, axis=1)
    else:
        return tl.min(x, axis=1)


@naiad.jit
def loop_row_reduce_kernel(X, Y, N, OP: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Y[m] = op(Y[m], op over X[m, 0:N]) for the rows of this program, N a multiple of
    BLOCK_N, BLOCK_N columns an iteration."""
    off_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    local = tl.load(Y + off_m)
    for start in range(0, N, BLOCK_N):
        off_n = start + tl.arange(0, BLOCK_N)
        x = tl.load(X + off_m[:, None] * N + off_n[None, :])
        local = _combine(local, _reduce_rows(x, OP), OP)
    tl.store(Y + off_m, local)


def reference(x: np.ndarray, y: np.ndarray, op: str) -> np.ndarray:
    """The kernel's result in float64 (int64 for integers)."""
    wide = np.float64 if x.dtype.kind == "f" else np.int64
    x, y = x.astype(wide), y.astype(wide)
    if op == "sum":
        return y + x.sum(axis=1)
    if op == "max":
        return np.maximum(y, x.max(axis=1))
    return np.minimum(y, x.min(axis=1))
