"""A pytest plugin of scripts/triton_suite.py (`--against-triton --triton-path DIR`): a Triton
older than the test files runs them. Test files import hardware predicates by name from
`triton._internal_testing` (`is_compile_warmup`, `is_hip_rdna4m`, `is_sm12x`, ...), and a
release made before a predicate was added fails the whole file's import. Here a predicate the
installed Triton lacks is false: true only on hardware (or in a mode) that release cannot
drive, so the tests take the branches they take on that release's targets.

Loaded on Triton's side before the test module is imported (`-p triton_suite_older`); a name
that the installed Triton has is its own, and a missing name that is not an `is_` predicate
stays an ImportError.
"""

from __future__ import annotations

import triton._internal_testing as testing


def _never() -> bool:
    return False


def _missing_predicate(name: str):
    """Module `__getattr__` (PEP 562): called only for names the module lacks."""
    if name.startswith("is_"):
        return _never
    raise AttributeError(f"module {testing.__name__!r} has no attribute {name!r}")


testing.__getattr__ = _missing_predicate
