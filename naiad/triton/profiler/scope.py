"""Scopes: named intervals of a program, `with proton.scope(name, metrics):`,
`enter_scope`/`exit_scope`, `@proton.scope(name)`, and `@proton.profile`.

A scope is recorded by every session active when it is entered, as a node under that
session's innermost open scope (scopes nest), its time the device time of the work it encloses
(clock.py) and its metrics (`bytes`, `flops16`, any name) summed over its entries, which
`count` counts. Scopes entered are kept on one stack whether or not a session records them, so
that each `exit_scope` ends the scope its `enter_scope` began.
"""

from __future__ import annotations

import contextlib
import functools

from . import session as sessions

_frames: list[list] = []  # per open scope: (session, record) of each session recording it


def enter_scope(name: str, *, triton_op: bool = False, metrics=None, cpu: bool = False) -> int:
    """Begin scope `name` (with `metrics`, name -> number); returns its depth."""
    _frames.append([(s, s.open_scope(name, metrics, cpu)) for s in sessions.active])
    return len(_frames) - 1


def exit_scope(triton_op: bool = False, metrics=None) -> int:
    """End the innermost scope, adding `metrics` to it; returns its depth."""
    if not _frames:
        raise RuntimeError("triton.profiler.exit_scope: no scope was entered")
    for session, record in _frames.pop():
        session.close(record, metrics)
    return len(_frames)


class scope(contextlib.ContextDecorator):
    """`with proton.scope(name, metrics):` or `@proton.scope(name)`: a named interval."""

    _cpu = False

    def __init__(self, name: str, metrics=None):
        self.name, self.metrics = name, metrics

    def __enter__(self):
        enter_scope(self.name, metrics=self.metrics, cpu=self._cpu)
        return self

    def __exit__(self, *exc_info):
        exit_scope()
        return False


class cpu_timed_scope(scope):
    """A scope that also records the host's time inside it (`cpu_time`), beside the device's."""

    _cpu = True


def profile(
    func=None, *, name=None, context="shadow", data="tree", backend=None, mode=None, hook=None
):
    """`@proton.profile` or `@proton.profile(name=..., hook=...)`: each call of the function
    records a session of its own, written when it returns (named after the function)."""

    def decorate(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            number = sessions.start(
                name or f.__name__,
                context=context,
                data=data,
                backend=backend,
                mode=mode,
                hook=hook,
            )
            try:
                return f(*args, **kwargs)
            finally:
                sessions.finalize(number)

        return wrapper

    return decorate if func is None else decorate(func)
