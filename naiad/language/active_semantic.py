"""How builtins find their semantic, and the marks the language's own functions carry.

A builtin is a plain Python function that takes a hidden `_semantic` keyword. Whoever runs a
kernel (the interpreter today, the compiler's code generator later) installs a `Semantic` — the
type rules bound to a builder and a target — with `use_semantic(...)`; a builtin called without one
says that the caller forgot `@naiad.jit`. `jit` marks the library functions written in the
language itself (`tl.sum`, `tl.sort`, ...).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools

_ACTIVE_SEMANTIC: contextvars.ContextVar = contextvars.ContextVar("naiad_semantic", default=None)


@contextlib.contextmanager
def use_semantic(semantic):
    """Make `semantic` the one builtins use inside this block (one per running kernel)."""
    token = _ACTIVE_SEMANTIC.set(semantic)
    try:
        yield semantic
    finally:
        _ACTIVE_SEMANTIC.reset(token)


def current_semantic():
    """The semantic of the kernel being run or compiled, or an error outside of one."""
    semantic = _ACTIVE_SEMANTIC.get()
    if semantic is None:
        raise ValueError(
            "Did you forget to add @naiad.jit ? (naiad.language functions can only be "
            "called inside a kernel)"
        )
    return semantic


def running_semantic():
    """The semantic of the kernel being run or compiled, None outside of one (host code)."""
    return _ACTIVE_SEMANTIC.get()


def builtin(fn):
    """Mark `fn` as a language builtin: it receives the active semantic as `_semantic`."""

    @functools.wraps(fn)
    def wrapper(*args, _semantic=None, **kwargs):
        if _semantic is None:
            _semantic = _ACTIVE_SEMANTIC.get()
            if _semantic is None:
                current_semantic()
        return fn(*args, _semantic=_semantic, **kwargs)

    wrapper.__naiad_builtin__ = True
    return wrapper


def is_builtin(fn) -> bool:
    return getattr(fn, "__naiad_builtin__", False)


def must_use_result(fn, message=True):
    """Make a call whose result is dropped (a statement of its own) a compile error: a builtin
    (`advance` returns a new pointer) or a `@jit` function. Given a string first, as Triton's
    `@must_use_result("why")`, it returns the decorator, and the error adds that string."""
    if isinstance(fn, str):
        return lambda inner: must_use_result(inner, fn)
    fn.__naiad_must_use_result__ = message
    return fn


def unused_result_error(fn, spelled: str) -> str | None:
    """The message for a dropped result of `fn` (called as `spelled`), None when it may be."""
    wanted = getattr(fn, "__naiad_must_use_result__", False)
    if not wanted:
        return None
    words = [f"The result of {spelled} is not being used."]
    if isinstance(wanted, str):
        words.append(wanted)
    return " ".join(words)


def jit(fn):
    """Mark a function of the language's own library as kernel code.

    Such functions (`tl.sum`, `tl.sort`, ...) are written in the language itself: the interpreter
    calls them as Python, and the compiler compiles their source like a user's `@naiad.jit`
    function. (The runtime's `naiad.jit` adds launching, specialization and caching on top.)
    """
    fn.__naiad_jit__ = True
    return fn
