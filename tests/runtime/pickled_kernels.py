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


class CompiledConfigs(naiad.KernelInterface):
    """A library's own launcher over a kernel, with state of its own (as Inductor's
    CachingAutotuner keeps its compiled configs): it pickles by value, its kernel by reference."""

    def __init__(self, fn):
        self.fn = fn
        self.arg_names = fn.arg_names
        self.compiled = []

    def run(self, *args, grid, warmup=False, **kwargs):
        return self.fn.run(*args, grid=grid, warmup=warmup, **kwargs)


launched_scale = CompiledConfigs(scale)
