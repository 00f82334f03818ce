"""Scalar functions for `tl.map_elementwise`, shared by the value tests
(tests/language/test_map_elementwise.py) and the ptxas checks without a GPU
(tests/backends/nvidia/test_map_elementwise_ptxas.py): a loop whose trip count each element
decides, a packed function of two elements at a time, and one of two results and types."""

import naiad
import naiad.language as tl


@naiad.jit
def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


@naiad.jit
def divmod_packed(a0, a1, b0, b1):
    return a0 // b0, a1 // b1, a0 % b0, a1 % b1


@naiad.jit
def scaled_and_flag(x, n):
    y = x.to(tl.float32)
    if n > 0:
        y = y * n
    return y, (n > 0).to(tl.int8)
