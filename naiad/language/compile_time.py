"""`@constexpr_function`: a plain Python function evaluated at compile time on constexpr
arguments (e.g. `cdiv`), as Triton's. `triton.runtime.jit.ConstexprFunction` is this class."""

from __future__ import annotations

import functools
import inspect
import math
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


def checked_constant_extremum(python, args):
    """Python's `min` or `max` (`python`) of compile-time values `args`, refused where Python's
    answer would depend on the order of the arguments while a kernel's `tl.minimum`/`tl.maximum`
    would not: a NaN (every comparison with it is false) or a negative zero (equal to 0.0).
    Triton refuses both as well.

    Raises:
        ValueError: an argument is a NaN or -0.0.
    """
    from .core import _unwrap_if_constexpr  # core imports this module

    for value in (_unwrap_if_constexpr(a) for a in args):
        if not isinstance(value, float):
            continue
        if math.isnan(value):
            raise ValueError(f"{python.__name__}() of compile-time values does not take NaN")
        if value == 0.0 and math.copysign(1.0, value) < 0:
            raise ValueError(
                f"{python.__name__}() of compile-time values does not take -0.0 (it equals "
                "0.0, so the result would depend on the order of the arguments)"
            )
    return python(*args)
