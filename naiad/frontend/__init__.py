"""The frontend: a `@naiad.jit` function and one specialization of it, as a TTIR module
(translate.py: `compile_to_ttir`, `generate`). docs/frontend.md describes it.

The entry points load on first use: the runtime reads a kernel's source (source.py) at a
launch the interpreter runs, which needs neither the code generator nor the dialects.
"""

from __future__ import annotations

__all__ = ["FrontendResult", "IRBuilder", "compile_to_ttir", "generate"]


def __getattr__(name: str):
    if name in __all__:
        from . import translate

        return getattr(translate, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
