"""Debugging builtins and compiler hints."""

from __future__ import annotations

from .core import _unwrap_if_constexpr, builtin


@builtin
def static_print(*values, sep=" ", end="\n", file=None, flush=False, _semantic=None):
    """Print constexpr values once, when the kernel is compiled."""
    _semantic.static_print(values, sep, end)


@builtin
def static_assert(cond, msg="", _semantic=None):
    """Fail compilation when the constexpr `cond` is false."""
    _semantic.static_assert(cond, msg)


@builtin
def device_print(prefix, *args, hex=False, _semantic=None):
    """Print `prefix` and the values of `args` for every program and element, at run time."""
    _semantic.device_print(prefix, args, hex)


@builtin
def device_assert(cond, msg="", mask=None, _semantic=None):
    """Fail the launch where `cond` is false; checked only in debug mode."""
    _semantic.device_assert(cond, msg, mask)


@builtin
def debug_barrier(_semantic=None):
    """Synchronize all threads of a program (a no-op where programs are sequential)."""
    _semantic.debug_barrier()


@builtin
def multiple_of(input, values, _semantic=None):
    """Promise that the values of `input` are multiples of `values` (one per dimension)."""
    return _semantic.hint("multiple_of", input, values)


@builtin
def max_contiguous(input, values, _semantic=None):
    """Promise that runs of `values` consecutive elements of `input` are contiguous."""
    return _semantic.hint("max_contiguous", input, values)


@builtin
def max_constancy(input, values, _semantic=None):
    """Promise that runs of `values` consecutive elements of `input` are equal."""
    return _semantic.hint("max_constancy", input, values)


@builtin
def assume(cond, _semantic=None):
    """Promise that `cond` holds (checked in debug mode, undefined if false otherwise)."""
    _semantic.assume(cond)


@builtin
def inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack, _semantic=None):
    """Elementwise inline PTX, `pack` elements at a time; `dtype` is one dtype or a tuple (one
    result each). GPU only: inline PTX cannot execute in the interpreter or on the CPU."""
    return _semantic.inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack)


@builtin
def map_elementwise(scalar_fn, *args, pack=1, _semantic=None):
    """Apply the `@jit` function `scalar_fn` to every element of `args` (broadcast together).

    `scalar_fn` receives scalars, so it may branch and loop on them (with `tl.where` both sides
    of a branch are computed everywhere). It returns one value or a tuple; the result is a block
    or a tuple of blocks of the arguments' shape. With `pack=k` it receives `k` elements of each
    argument, argument by argument (`fn(a0, a1, b0, b1)`), and returns `k` values per result,
    result by result (`c0, c1, d0, d1`).
    """
    return _semantic.map_elementwise(scalar_fn, args, pack)


@builtin
def expect_zero(x, mask, _semantic=None):
    """Return `x`, which is expected to have underflowed to zero wherever `mask` holds.

    In debug mode this asserts it; otherwise it is `x` unchanged.
    """
    x = _unwrap_if_constexpr(x)
    if _semantic.target.debug:
        value = _semantic.to_tensor(x)
        held = _semantic.or_(_semantic.equal(value, 0), _semantic.not_(_semantic.to_tensor(mask)))
        _semantic.device_assert(held, "expect_zero expected x == 0 where mask is true")
    return x
