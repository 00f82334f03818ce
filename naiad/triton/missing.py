"""Triton names that Naiad does not have, as a clear AttributeError instead of a bare one."""

from __future__ import annotations


def missing_names(module: str, features: dict[str, str]):
    """A module `__getattr__` (PEP 562) for `module`: the names in `features` raise an
    AttributeError naming the feature Naiad lacks; any other name a plain one."""

    def __getattr__(name: str):
        if name in features:
            raise AttributeError(
                f"{module}.{name}: {features[name]} is not supported by Naiad (see docs/compat.md)"
            )
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__
