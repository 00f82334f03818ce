"""`noinline` jit functions called with scalars (a call graph, values through `if`, several
results), which every back end compiles: the CPU and the GPU inline them, Triton's GPU back end
keeps the calls. Shared by tests/backends/nvidia/test_noinline_calls.py and
tests/gpu/test_noinline_gpu.py."""

import naiad
import naiad.language as tl


@naiad.jit(noinline=True)
def plus_one(x):
    return x + 1


@naiad.jit(noinline=True)
def pick(x, y):
    if x >= y:
        x = plus_one(x)
    else:
        y = plus_one(y)
    return x * 2, y


@naiad.jit
def noinline_scalars_kernel(X, Y, Z):
    """Z[0] = 2 * (x + 1) + y where x >= y, else 2 * x + y + 1."""
    x = tl.load(X)
    y = tl.load(Y)
    a, b = pick(x, y)
    tl.store(Z, a + b)


@naiad.jit(noinline=True)
def scale(vec, i):
    return vec * i


@naiad.jit
def noinline_block_kernel(X, BLOCK: tl.constexpr):
    """Calls a noinline function with a block: refused when compiled, as Triton refuses it."""
    offs = tl.arange(0, BLOCK)
    tl.store(X + offs, scale(tl.load(X + offs), 3))


def expected(x: float, y: float) -> float:
    return 2 * (x + 1) + y if x >= y else 2 * x + y + 1
