"""Triton builtins Naiad does not have yet: each is an error that names the feature, at the
user's line, instead of an AttributeError on `tl`."""

from __future__ import annotations

from .core import builtin


@builtin
def aggregate_replace(*args, _semantic=None, **kwargs):
    """Triton's copy of an `@triton.aggregate` value with fields replaced."""
    raise NotImplementedError(
        "tl.aggregate_replace: @triton.aggregate classes are not supported by Naiad yet"
    )
