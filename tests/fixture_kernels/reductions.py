"""Reductions shared by the checks of their shared memory and barriers through ptxas
(tests/backends/nvidia/test_reduce_lowering.py, test_passes_shared_memory.py) and the GPU tests
of their values (tests/gpu/test_reduce_order_gpu.py, test_memory_bound_gpu.py): two reductions
across warps in a row, and reductions around control flow, where the scratch-freeing barrier a
reduction owes (backends/nvidia/lowering/barriers.py) is paid or carried differently."""

import naiad
import naiad.language as tl


@naiad.jit
def column_stats_kernel(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr):
    """Column sums, then column maxima of 2x: two reductions whose scratches are not live
    together."""
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    tl.store(y_ptr + rn, tl.sum(x, axis=0))
    tl.store(y_ptr + N + rn, tl.max(x * 2.0, axis=0))


@naiad.jit
def branchy_kernel(x_ptr, y_ptr, flag, N: tl.constexpr):
    """A reduction before an `if` holding another, and one after it."""
    x = tl.load(x_ptr + tl.arange(0, N))
    total = tl.sum(x, axis=0)
    if flag > 0:
        total += tl.max(x * total, axis=0)
    tl.store(y_ptr, total + tl.min(x, axis=0))


@naiad.jit
def loop_then_if_kernel(x_ptr, y_ptr, n_rows, N: tl.constexpr):
    """A reduction per loop iteration, then an `if` without shared memory: the debt is
    carried past the `if`, then paid before the loop's branch back."""
    for row in range(0, n_rows):
        total = tl.sum(tl.load(x_ptr + row * N + tl.arange(0, N)), axis=0)
        if total > 0:
            tl.store(y_ptr + row, total)
