"""`@constexpr_function`: a plain Python function evaluated at compile time on constexpr
arguments (e.g. `cdiv`), as Triton's. `triton.runtime.jit.ConstexprFunction` is this class."""

from __future__ import annotations

import functools
import inspect
import textwrap


class ConstexprFunction:
    """A function called at compile time with its arguments unwrapped (a constexpr's value);
    `fn` is the function and `src` its source, as Triton's (torch's Inductor copies it into
    the kernels it generates)."""

    __naiad_constexpr_function__ = True

    def __init__(self, fn):
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __call__(self, *args, _semantic=None, **kwargs):
        from .core import _unwrap_if_constexpr  # core imports this module

        args = [_unwrap_if_constexpr(a) for a in args]
        kwargs = {k: _unwrap_if_constexpr(v) for k, v in kwargs.items()}
        return self.fn(*args, **kwargs)

    @property
    def src(self) -> str:
        """The source from the `def` line on (decorators dropped, as Triton's)."""
        lines = textwrap.dedent(inspect.getsource(self.fn)).splitlines(keepends=True)
        starts = [i for i, line in enumerate(lines) if line.startswith("def ")]
        return "".join(lines[starts[0] if starts else 0 :])

    def __repr__(self):
        return f"ConstexprFunction({self.fn.__module__}:{self.fn.__qualname__})"


def constexpr_function(fn) -> ConstexprFunction:
    """Decorate a plain Python function to be called at compile time on constexpr values."""
    return ConstexprFunction(fn)
