"""Compile every kernel the language tests launch for a CUDA target, without a GPU.

    python scripts/ptx_check_language.py [--target cuda:sm_90a] [--per-kernel 4] [PYTEST_ARGS...]

Runs `tests/language` in the interpreter with a pytest plugin that, before each launch, compiles
the same kernel with the same arguments through `kernel.warmup(..., target=...)`: TTIR -> TTGIR
-> LLVM IR -> PTX -> cubin (nvJitLink, which assembles the PTX as ptxas does). At most
`--per-kernel` distinct specializations of each kernel are compiled (dtypes and constexprs
differ between them). The report lists how many compiled and, grouped by the first line of the
error (which names the op), the kernels that did not.
"""

from __future__ import annotations

import argparse
import collections
import sys

import numpy as np
import pytest

from naiad.errors import KernelTypeError, KernelValueError
from naiad.runtime.jit import JITFunction


def _spec(value):
    """What of an argument the specialization depends on, roughly."""
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str)
    if isinstance(value, bool | float | str) or value is None:
        return (type(value).__name__, value)
    if isinstance(value, int):
        return ("int", value == 1, value % 16 == 0, -(2**31) <= value < 2**31)
    return (type(value).__name__, repr(value))


class PtxCheck:
    """The plugin: compile before each launch, record the outcome."""

    def __init__(self, target: str, per_kernel: int):
        self.target = target
        self.per_kernel = per_kernel
        self.seen: dict = collections.defaultdict(set)
        self.compiled = 0
        self.user_errors = 0
        self.kernels_ok: set = set()
        self.failures: dict = collections.defaultdict(set)
        self._run = JITFunction.run

    def pytest_configure(self, config):
        check = self

        def run(self, *args, grid, warmup=False, target=None, **kwargs):
            if not warmup:
                check.compile(self, args, grid, kwargs)
            return check._run(self, *args, grid=grid, warmup=warmup, target=target, **kwargs)

        JITFunction.run = run

    def compile(self, kernel, args, grid, kwargs) -> None:
        name = f"{kernel.fn.__module__.split('.')[-1]}.{kernel.fn.__qualname__}"
        key = (
            tuple(_spec(a) for a in args),
            tuple(sorted((k, _spec(v)) for k, v in kwargs.items())),
        )
        if key in self.seen[name] or len(self.seen[name]) >= self.per_kernel:
            return
        self.seen[name].add(key)
        try:
            kernel.warmup(*args, grid=grid, target=self.target, **kwargs)
        except (KernelValueError, KernelTypeError):
            self.user_errors += 1  # the kernel is wrong on purpose: the interpreter says so too
            return
        except Exception as error:  # every failure is the report's subject
            text = str(error).strip().splitlines()
            message = next((line for line in text if "error" in line), text[0] if text else "")
            self.failures[f"{type(error).__name__}: {message[-160:]}"].add(name)
            return
        self.compiled += 1
        self.kernels_ok.add(name)

    def pytest_unconfigure(self, config):
        JITFunction.run = self._run
        failed = set().union(*self.failures.values()) if self.failures else set()
        print(
            f"\n== {self.target}: {len(self.kernels_ok - failed)} kernels compile in every "
            f"specialization tried; {self.compiled} specializations compiled; "
            f"{len(failed)} kernels fail at least once; {self.user_errors} compilations "
            "refused a kernel written wrong on purpose (as the interpreter does)"
        )
        for message, names in sorted(self.failures.items(), key=lambda kv: -len(kv[1])):
            print(f"\n[{len(names)}] {message}")
            for name in sorted(names):
                print(f"    {name}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="cuda:sm_90a")
    parser.add_argument("--per-kernel", type=int, default=4)
    options, rest = parser.parse_known_args()
    plugin = PtxCheck(options.target, options.per_kernel)
    args = rest or [
        "tests/language",
        "-q",
        "-k",
        "interpreter and not rand_is_uniform and not randn_is_normal",
        "-p",
        "no:cacheprovider",
    ]
    pytest.main(args, plugins=[plugin])
    return 0


if __name__ == "__main__":
    sys.exit(main())
