"""A kernel reads globals once, at compile time: a launch refuses a global changed since.

The frontend records the globals a kernel's code read (constexprs, dtypes, jit functions) by
(module, name) with the value it compiled with; every launch, on the hot path too, checks that
each still holds that value, as Triton does, so editing `BLOCK = tl.constexpr(64)` after a
compile is an error instead of a stale kernel.
"""

from __future__ import annotations

import sys

from ..errors import NaiadError


def check_globals(jit_function, used: dict) -> None:
    """Raise if a global in `used` ((module, name) -> compiled value) has another value now."""
    for (module_name, name), value in used.items():
        module = sys.modules.get(module_name)
        current = getattr(module, name, value) if module is not None else value
        if current is not value and current != value:
            raise NaiadError(
                f"global variable `{name}` has changed since `{jit_function.__name__}` was "
                f"compiled (it read {value!r}, it is now {current!r}); kernels read globals "
                "once, at compile time"
            )


def globals_checker(jit_function, used: dict):
    """`check()` for the launch hot path: `check_globals` with each module's namespace looked
    up once, here (an unchanged global costs one dict lookup); None when `used` is empty."""
    if not used:
        return None
    watched = []
    for (module_name, name), value in used.items():
        module = sys.modules.get(module_name)
        if module is None:  # not importable now: check it the slow way at every launch
            return lambda: check_globals(jit_function, used)
        watched.append((vars(module), name, value))
    watched = tuple(watched)

    def check() -> None:
        for namespace, name, value in watched:
            current = namespace.get(name, value)
            if current is not value and current != value:
                check_globals(jit_function, used)  # raises, with the message

    return check
