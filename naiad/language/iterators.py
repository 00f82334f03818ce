"""Loop iterators: `tl.range` (a loop the compiler keeps) and `tl.static_range` (unrolled).

In the interpreter a loop runs as a Python loop, but its induction variable is typed as the compiler
types it (int32 unless a bound is wider), so arithmetic on it wraps the same way on every backend.
"""

from __future__ import annotations

from .core import _unwrap_if_constexpr, constexpr, current_semantic


class range:
    """An iterator over `[arg1, arg2)` by `step`, lowered to a loop (`scf.for`).

    `num_stages`, `loop_unroll_factor`, `disallow_acc_multi_buffer`, `flatten`, `warp_specialize`
    and `disable_licm` are hints for the compiler's loop passes; they do not change results.
    """

    def __init__(
        self,
        arg1,
        arg2=None,
        step=None,
        num_stages=None,
        loop_unroll_factor=None,
        disallow_acc_multi_buffer=False,
        flatten=False,
        warp_specialize=False,
        disable_licm=False,
    ):
        if step is None:
            step = 1
        if arg2 is None:
            arg1, arg2 = 0, arg1
        self.start, self.end, self.step = arg1, arg2, step
        self.num_stages = _unwrap_if_constexpr(num_stages)
        self.loop_unroll_factor = _unwrap_if_constexpr(loop_unroll_factor)
        self.disallow_acc_multi_buffer = _unwrap_if_constexpr(disallow_acc_multi_buffer)
        self.flatten = _unwrap_if_constexpr(flatten)
        self.warp_specialize = _unwrap_if_constexpr(warp_specialize)
        self.disable_licm = _unwrap_if_constexpr(disable_licm)

    def __iter__(self):
        return current_semantic().loop_values(self.start, self.end, self.step)


class static_range:
    """An iterator over constexpr bounds, unrolled at compile time; the variable is a constexpr."""

    def __init__(self, arg1, arg2=None, step=None):
        values = [_unwrap_if_constexpr(a) for a in (arg1, arg2, step)]
        for v in values:
            if v is not None and not isinstance(v, int):
                raise TypeError(f"static_range bounds must be constexpr ints, got {v!r}")
        start, end, step = values
        if end is None:
            start, end = 0, start
        self.start, self.end, self.step = start, end, 1 if step is None else step

    def __iter__(self):
        import builtins

        for i in builtins.range(self.start, self.end, self.step):
            yield constexpr(i)


class condition:
    """`while tl.condition(c):` — a while-loop condition with compiler hints."""

    def __init__(self, arg1, disable_licm=False):
        self.condition = arg1
        self.disable_licm = _unwrap_if_constexpr(disable_licm)

    def __bool__(self):
        return bool(self.condition)
