"""The helpers a rewritten kernel calls (see `rewrite.py`): the compiler's meaning of assignment,
`range`, boolean operators and `assert`, evaluated with the active semantic."""

from __future__ import annotations

import ast
import warnings

from ... import errors
from ...language import core
from ...language import if_conditions as conditions
from ...language.active_semantic import unused_result_error
from ...language.comparisons import COMPARISONS, joined
from ...language.compile_time import checked_constant_extremum
from ...language.iterators import range as lang_range
from ...language.literals import attribute_of  # noqa: F401  (the rewrite calls it)


def assigned(value):
    """`x = value`: Python numbers (and plain-assigned constexprs) become typed scalars."""
    value = core._unwrap_if_constexpr(value)
    if isinstance(value, (bool, int, float)):
        return core.current_semantic().to_tensor(value)
    if type(value) is tuple and any(
        isinstance(v, (bool, int, float, core.constexpr)) for v in value
    ):
        return tuple(assigned(v) for v in value)
    return value


def assigned_constexpr(value):
    """`x: tl.constexpr = value` keeps a compile-time constant; a run-time value stays one, as
    Triton 3.9 keeps it."""
    if isinstance(value, core.tensor):
        return value
    return core.constexpr(value)


def assigned_as(value, kept):
    """`d0, d1 = shape` after `d0: tl.constexpr` (a declaration without a value): each part
    is assigned as `x: tl.constexpr = part` (`kept` True) or `x = part` (False), `kept`
    nested as the targets are."""
    if isinstance(kept, bool):
        return assigned_constexpr(value) if kept else assigned(value)
    parts = list(core._unwrap_if_constexpr(value))
    if len(parts) != len(kept):
        raise errors.unpacking_error(len(parts), len(kept))
    return tuple(assigned_as(part, k) for part, k in zip(parts, kept))


def check_dropped_result(spelled, func):
    """Before `func(...)` as a statement of its own: refused where `func` must have its result
    used (`must_use_result`), as the compiler refuses it."""
    message = unused_result_error(core._unwrap_if_constexpr(func), spelled)
    if message is not None:
        raise ValueError(message)


# Python's builtins that see constexprs' values, as Triton's code generator calls them
# (`getattr(tl.PropagateNan, NAME)` with NAME a constexpr string); frontend/calls.py says why
# `isinstance` is not one.
_UNWRAPPING_BUILTINS = frozenset(id(f) for f in (len, list, float, int, getattr, hasattr))


_EXTREMA = frozenset((id(min), id(max)))


def python_call(func, *args, **kwargs):
    """A call of `func` by name: the builtins above get their arguments' values; `min` and
    `max` of compile-time values are checked as the compiler checks them."""
    if id(func) in _UNWRAPPING_BUILTINS:
        args = [core._unwrap_if_constexpr(a) for a in args]
    elif id(func) in _EXTREMA and not kwargs and len(args) >= 2:
        constant = not any(isinstance(a, core.tensor) for a in args)
        return checked_constant_extremum(func, args) if constant else func(*args)
    return func(*args, **kwargs)


def range(*args, **kwargs):
    return lang_range(*args, **kwargs)


def loop_carried(scope, names, iterated=None):
    """The values among `names` defined before a loop: what the compiler carries through it,
    whose kinds must survive the loop (`check_loop_carried`). A `while` carries them, and a
    `for` over a `range` (`iterated`, Python's made `tl.range` by the rewrite); the compiler
    unrolls a `for` over anything else (`tl.static_range`, a tuple), whose every trip may
    rebind a name to another kind."""
    if iterated is not None and not isinstance(iterated, lang_range):
        return {}
    return {name: scope[name] for name in names if name in scope}


def check_loop_carried(before, scope):
    """Raise the compiler's error where a carried value changed kind in a trip: a tensor's
    type, a structure's shape (tuples, a block pointer's tensors) or a compile-time value."""
    for name, value in before.items():
        now = scope.get(name)
        if not _same_kind(value, now):
            raise TypeError(
                f"Loop-carried variable {name} has initial type {_kind(value)} but is "
                f"re-assigned to {_kind(now)} in loop! Please make sure that the type stays "
                "consistent."
            )


def _same_kind(before, now) -> bool:
    if isinstance(before, core.tensor) or isinstance(now, core.tensor):
        return (
            isinstance(before, core.tensor)
            and isinstance(now, core.tensor)
            and (before.type == now.type)
        )
    sequences = (tuple, list, core.tuple)
    if isinstance(before, sequences) or isinstance(now, sequences):
        if not (isinstance(before, sequences) and isinstance(now, sequences)):
            return False
        parts, others = _parts(before), _parts(now)
        return len(parts) == len(others) and all(map(_same_kind, parts, others))
    before, now = core._unwrap_if_constexpr(before), core._unwrap_if_constexpr(now)
    if type(before) is not type(now):
        return False
    if isinstance(before, bool | int | float | str | type(None) | core.dtype):
        return before == now
    # An aggregate (a block pointer, a descriptor): the tensors it holds keep their types.
    fields = [k for k, v in getattr(before, "__dict__", {}).items() if isinstance(v, core.tensor)]
    return all(_same_kind(getattr(before, k), getattr(now, k, None)) for k in fields)


def _parts(value) -> list:
    """A tuple's or list's elements (`tl.tuple`'s too)."""
    return list(value.values) if isinstance(value, core.tuple) else list(value)


def _kind(value) -> str:
    if isinstance(value, core.tensor):
        return str(value.type)
    if isinstance(value, tuple | list | core.tuple):
        return "(" + ", ".join(_kind(part) for part in _parts(value)) + ")"
    value = core._unwrap_if_constexpr(value)
    return (
        repr(value)
        if isinstance(value, bool | int | float | str | type(None))
        else (type(value).__name__)
    )


def if_condition(cond):
    """The condition of an `if` statement: a one-element block is its element, as the
    compiler reads it; the warning names the kernel's line (the caller's frame)."""
    return conditions.if_condition(
        cond,
        core.current_semantic(),
        lambda message: warnings.warn(message, UserWarning, stacklevel=4),
    )


def logical_and(lhs, rhs_thunk):
    if isinstance(lhs, core.tensor):
        return core.current_semantic().logical_and(lhs, rhs_thunk())
    return lhs and rhs_thunk()


def logical_or(lhs, rhs_thunk):
    if isinstance(lhs, core.tensor):
        return core.current_semantic().logical_or(lhs, rhs_thunk())
    return lhs or rhs_thunk()


def logical_not(value):
    if isinstance(value, core.tensor):
        return core.current_semantic().not_(value)
    return not value


def is_(lhs, rhs):
    """`lhs is rhs` on the values of constexprs (`PADDING is None` for a constexpr None)."""
    return core._unwrap_if_constexpr(lhs) is core._unwrap_if_constexpr(rhs)


def is_not(lhs, rhs):
    return core._unwrap_if_constexpr(lhs) is not core._unwrap_if_constexpr(rhs)


def compared(left, ops: tuple, *comparators):
    """A chained comparison (`left < b <= c`: its operators' AST names, its comparators as
    thunks) as the compiler reads it (language/comparisons.joined)."""

    def values():
        lhs = left
        for op, comparator in zip(ops, comparators, strict=True):
            rhs = comparator()
            if op in ("Is", "IsNot"):
                yield is_(lhs, rhs) if op == "Is" else is_not(lhs, rhs)
            else:
                yield COMPARISONS[getattr(ast, op)](lhs, rhs)
            lhs = rhs

    return joined(values(), core.current_semantic().logical_and)


def device_assert(cond, msg=""):
    core.current_semantic().device_assert(cond, msg)
