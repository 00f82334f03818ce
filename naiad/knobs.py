"""Every `NAIAD_*` setting, read from the environment in this one module.

Settings are read when asked for (not at import), so a test can change the environment and see the
effect; `override()` sets them for a block of code without touching `os.environ`.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

_TRUE = {"1", "true", "yes", "on"}


def _raw(env: str) -> str:
    """The setting's text: an `override()` first, then the environment, else empty."""
    value = _overrides.get(env)
    return str(os.environ.get(env, "") if value is None else value)


@dataclass(frozen=True)
class _Flag:
    """A boolean setting: `NAIAD_<NAME>=1` turns it on."""

    env: str
    doc: str

    def get(self) -> bool:
        return _raw(self.env).strip().lower() in _TRUE


@dataclass(frozen=True)
class _Text:
    """A string setting; empty means unset."""

    env: str
    doc: str

    def get(self) -> str:
        return _raw(self.env)


@dataclass(frozen=True)
class _Int:
    """A non-negative integer setting; unset or empty gives `default`."""

    env: str
    doc: str
    default: int = 0

    def get(self) -> int:
        text = _raw(self.env).strip()
        if not text:
            return self.default
        try:
            value = int(text)
        except ValueError:
            value = -1
        if value < 0:
            raise ValueError(f"{self.env}={text!r}: expected a non-negative integer")
        return value


_overrides: dict[str, object] = {}

interpret = _Flag("NAIAD_INTERPRET", "run @naiad.jit kernels in the NumPy interpreter")
debug = _Flag("NAIAD_DEBUG", "kernel debug mode: device_assert on, every access bounds-checked")
traceback = _Flag("NAIAD_TRACEBACK", "show Naiad's own frames in kernel errors")
print_autotuning = _Flag("NAIAD_PRINT_AUTOTUNING", "print the best config and the tuning time")
verify = _Flag("NAIAD_VERIFY", "run the IR verifier after every compiler pass")
dump_dir = _Text("NAIAD_DUMP_DIR", "write every stage's IR per kernel under this folder")
backend = _Text(
    "NAIAD_BACKEND",
    "where kernels on host arrays run: unset (compiled for the CPU where it can be), 'cpu' "
    "(compiled, strictly) or 'interpreter'",
)
cache_dir = _Text("NAIAD_CACHE_DIR", "where compiled kernels are cached on disk")
cuda_home = _Text("CUDA_HOME", "a CUDA toolkit: where libdevice is found when no wheel has it")
num_threads = _Int(
    "NAIAD_NUM_THREADS", "threads running a CPU kernel's programs (0: one per available CPU)"
)


@contextlib.contextmanager
def override(**settings):
    """Set knobs for the duration of a `with` block, e.g. `override(NAIAD_INTERPRET=1)`."""
    saved = dict(_overrides)
    _overrides.update(settings)
    try:
        yield
    finally:
        _overrides.clear()
        _overrides.update(saved)
