"""Kernels for test_kernel_pickling.py, at module level (where pickling by reference finds them)."""

import naiad
import naiad.language as tl


@naiad.jit
def scale(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * factor, mask=mask)


@naiad.autotune([naiad.Config({"BLOCK": 32}), naiad.Config({"BLOCK": 64})], key=["n"])
@naiad.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@naiad.jit
def tuned_scale(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * factor, mask=mask)
