"""Kernels written as Triton's users write them, imported by the tests of tests/compat/."""

import triton
import triton.language as tl


@triton.jit
def store_range(out):
    tl.store(out + tl.arange(0, 4), tl.arange(0, 4))
