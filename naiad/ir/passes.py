"""Passes: small frozen dataclasses (their fields are their options) registered by name, and
a PassManager that runs a pipeline given as a list of names.

    @register_pass("canonicalize")
    @dataclass(frozen=True)
    class Canonicalize(Pass):
        max_iterations: int = 10
        def run(self, module): ...

    PassManager(["inline", "canonicalize"], verify_each=True).run(module)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, is_dataclass
from typing import ClassVar

from .errors import VerificationError
from .operation import Operation
from .verifier import verify


@dataclass(frozen=True)
class Pass:
    """A transformation of a module in place. `name` is set by `register_pass`."""

    name: ClassVar[str] = ""

    def run(self, module: Operation) -> None:
        raise NotImplementedError(type(self).__name__)


_PASSES: dict[str, type[Pass]] = {}


def register_pass(name: str) -> Callable[[type[Pass]], type[Pass]]:
    """Class decorator: register a frozen-dataclass Pass subclass under `name` (kebab-case)."""

    def register(cls: type[Pass]) -> type[Pass]:
        if not (isinstance(cls, type) and issubclass(cls, Pass)):
            raise TypeError(f"{cls!r} is not a Pass subclass")
        if not is_dataclass(cls) or not cls.__dataclass_params__.frozen:
            raise TypeError(f"{cls.__name__} must be a frozen dataclass")
        old = _PASSES.get(name)
        if old is not None and (old.__module__, old.__qualname__) != (
            cls.__module__,
            cls.__qualname__,
        ):
            raise ValueError(f"pass {name!r} is already registered by {old.__qualname__}")
        cls.name = name
        _PASSES[name] = cls
        return cls

    return register


def pass_class(name: str) -> type[Pass]:
    """The pass registered under `name` (KeyError naming the known passes otherwise)."""
    try:
        return _PASSES[name]
    except KeyError:
        known = ", ".join(sorted(_PASSES)) or "none"
        raise KeyError(f"unknown pass {name!r}; registered: {known}") from None


def registered_passes() -> list[str]:
    return sorted(_PASSES)


class PassManager:
    """Runs passes in order; with `verify_each`, verifies the module after every pass and
    names the pass whose output is invalid."""

    def __init__(self, passes: Iterable[str | Pass], verify_each: bool = False):
        self.passes: tuple[Pass, ...] = tuple(
            p if isinstance(p, Pass) else pass_class(p)() for p in passes
        )
        self.verify_each = verify_each

    def run(self, module: Operation) -> None:
        for p in self.passes:
            p.run(module)
            if self.verify_each:
                try:
                    verify(module)
                except VerificationError as error:
                    error.add_note(f"after pass '{p.name}'")
                    raise
