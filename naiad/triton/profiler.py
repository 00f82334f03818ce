"""`triton.profiler` (Triton's Proton profiler) while Naiad stands in for Triton: its calls are
accepted so that programs that profile themselves run, and nothing is recorded.

Proton reads GPU activity through CUPTI or instruments kernels, which Naiad does not do; time a
Naiad kernel with `triton.testing.do_bench` instead. The first call warns once that nothing is
recorded, so a program's silence is not mistaken for an empty profile.
"""

from __future__ import annotations

import contextlib
import functools
import warnings

_warned = [False]


def _nothing_recorded() -> None:
    if not _warned[0]:
        _warned[0] = True
        warnings.warn(
            "triton.profiler: Naiad records no profile (Proton is Triton's); the calls do "
            "nothing (see docs/compat.md)",
            RuntimeWarning,
            stacklevel=3,
        )


def start(name=None, *, context="shadow", data="tree", backend=None, mode=None, hook=None):
    """Start a profiling session (records nothing); returns a session id."""
    _nothing_recorded()
    return 0


def activate(session=None) -> None:
    _nothing_recorded()


def deactivate(session=None, flushing=False) -> None:
    _nothing_recorded()


def finalize(session=None, output_format="") -> None:
    _nothing_recorded()


def enter_scope(name: str, *, triton_op=False, metrics=None) -> None:
    _nothing_recorded()


def exit_scope(triton_op=False, metrics=None) -> None:
    _nothing_recorded()


class scope(contextlib.ContextDecorator):
    """`with proton.scope(name, metrics):` or `@proton.scope(name)`: marks nothing."""

    def __init__(self, name: str, metrics=None):
        self.name, self.metrics = name, metrics

    def __enter__(self):
        _nothing_recorded()
        return self

    def __exit__(self, *exc_info):
        return False


def cpu_timed_scope(name: str, metrics=None) -> scope:
    return scope(name, metrics)


def profile(func=None, *, name=None, **options):
    """`@proton.profile`: run the function as it is (nothing is recorded)."""

    def decorate(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            _nothing_recorded()
            return f(*args, **kwargs)

        return wrapper

    return decorate if func is None else decorate(func)
