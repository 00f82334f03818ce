"""`@heuristics`: meta-parameters computed from the arguments of each launch.

`@heuristics({"EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0})` adds `EVEN_K` to the
keyword arguments before calling the wrapped kernel. It stacks with `@autotune` in either order:
under it, the heuristic sees the config's meta-parameters; over it, only the caller's.
"""

from __future__ import annotations

from .kernel_interface import KernelInterface
from .pickling import PicklesByReference


class Heuristics(KernelInterface, PicklesByReference):
    """A kernel whose launches get extra keyword arguments from `values[name](named_args)`."""

    def __init__(self, fn, arg_names, values):
        self.fn = fn
        self.arg_names = list(arg_names)
        self.values = dict(values)

    def run(self, *args, grid, warmup=False, **kwargs):
        for name, heuristic in self.values.items():
            kwargs[name] = heuristic({**dict(zip(self.arg_names, args)), **kwargs})
        return self.fn.run(*args, grid=grid, warmup=warmup, **kwargs)


def heuristics(values):
    """Decorator over a kernel: `values` maps meta-parameter names to functions of the arguments.

    Each function receives a dict of every argument by name (positional and keyword, including
    meta-parameters computed by the heuristics before it) and returns the value.
    """
    return lambda fn: Heuristics(fn, fn.arg_names, values)
