"""The table of libdevice symbols the CPU back end implements, and what the families share."""

from __future__ import annotations

from llvmlite import ir

from ..floats import call_intrinsic
from ..types import F32

SYMBOLS: dict = {}  # symbol -> fn(b, ctx, op, args) -> value


def define(*symbols: str):
    """Register the decorated function as the implementation of `symbols`."""

    def register(fn):
        for symbol in symbols:
            SYMBOLS[symbol] = fn
        return fn

    return register


def both(stem: str) -> tuple[str, str]:
    """The f32 and f64 symbols of a C math function: `__nv_expf`, `__nv_exp`."""
    return f"__nv_{stem}f", f"__nv_{stem}"


def flush(b, ctx, x):
    """An f32 subnormal as the zero of its sign (the GPU's ftz); f64 is left alone."""
    if x.type != F32:
        return x
    tiny = ir.Constant(F32, 2.0**-126)
    small = b.fcmp_ordered("<", call_intrinsic(b, ctx, "fabs", x), tiny)
    return b.select(small, call_intrinsic(b, ctx, "copysign", ir.Constant(F32, 0.0), x), x)


def flushing(fn):
    """fn on flushed arguments, its result flushed: what the GPU's ftz code computes."""
    return lambda b, ctx, op, args: flush(b, ctx, fn(b, ctx, op, [flush(b, ctx, a) for a in args]))
