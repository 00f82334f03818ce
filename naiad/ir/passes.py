"""Passes: small frozen dataclasses (their fields are their options) registered by name, and
a PassManager that runs a pipeline given as a list of names.

    @register_pass("canonicalize")
    @dataclass(frozen=True)
    class Canonicalize(Pass):
        max_iterations: int = 10
        def run(self, module): ...

    PassManager(["inline", "canonicalize"], verify_each=True).run(module)

A pass that raises an exception its caller did not declare as expected (the compiler declares
Naiad's own errors: a CompilationError is the user's, and passes through) has a bug, and so
does a pass whose output the verifier rejects: the PassManager writes the IR to a file and
raises a PassFailure naming the pass and the file, chained to the original exception. The IR
core imports nothing else of Naiad, so the compiler reports a PassFailure as Naiad's
InternalError (naiad/runtime/compiler.py); `naiad-opt` prints it on one line, as any IRError.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, is_dataclass
from typing import ClassVar

from .errors import IRError, VerificationError
from .operation import Operation
from .printer import print_module
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


# Called when the passes users add to the pipelines change (passes/extensions.py): the JIT then
# forgets the kernels it compiled with the old ones. The list lives here, below the passes, so
# that the JIT listens without loading them (a launch the interpreter runs needs none).
pipeline_listeners: list[Callable[[], None]] = []


def registered_passes() -> list[str]:
    return sorted(_PASSES)


class PassFailure(IRError):
    """A pass failed, or left invalid IR behind: a bug of the pass. `pass_name` and `path`
    (the file holding the IR) are in the message too."""

    def __init__(self, pass_name: str, message: str, path: str):
        self.pass_name = pass_name
        self.path = path
        super().__init__(message)


class PassManager:
    """Runs passes in order; with `verify_each`, verifies the module after every pass. A pass
    that raises anything but the `expected` exception types (they pass through), or whose
    output is invalid, is reported as a PassFailure naming the pass and a file under
    `dump_dir` (the caller passes NAIAD_DUMP_DIR; None: the system's temporary folder)
    holding the IR.

    Printing the module before every pass would cost as much as the passes, so the IR is
    printed only when a pass fails. With `verify_each` (debug runs, which already walk the
    whole module after each pass) a copy of the module is kept before each pass and the file
    holds the failing pass's input, a reproducer for `naiad-opt FILE -p PASS`; otherwise it
    holds the module as the failure left it, possibly partly rewritten, and says so.
    `before_each(pass, module)` and `after_each(pass, module)`, when given, see the module
    before and after every pass."""

    def __init__(
        self,
        passes: Iterable[str | Pass],
        verify_each: bool = False,
        dump_dir: str | None = None,
        expected: tuple[type[Exception], ...] = (),
        after_each: Callable[[Pass, Operation], None] | None = None,
        before_each: Callable[[Pass, Operation], None] | None = None,
    ):
        self.passes: tuple[Pass, ...] = tuple(
            p if isinstance(p, Pass) else pass_class(p)() for p in passes
        )
        self.verify_each = verify_each
        self.dump_dir = dump_dir
        self.expected = expected
        self.after_each = after_each
        self.before_each = before_each

    def run(self, module: Operation) -> None:
        for p in self.passes:
            if self.before_each is not None:
                self.before_each(p, module)
            before = module.clone() if self.verify_each else None
            try:
                p.run(module)
            except self.expected:
                raise
            except Exception as error:
                what = f"failed: {type(error).__name__}: {error}"
                raise self._failure(p, what, module, before) from error
            if self.verify_each:
                try:
                    verify(module)
                except VerificationError as error:
                    what = f"produced invalid IR: {error}"
                    raise self._failure(p, what, module, before) from error
            if self.after_each is not None:
                self.after_each(p, module)

    def _failure(self, p: Pass, what: str, module: Operation, before) -> PassFailure:
        if before is not None:
            state = "the IR it ran on"
            text = _printed(before)
        else:
            state = "the IR as the failure left it (possibly partly rewritten by the pass)"
            text = _printed(module)
        what = " ".join(what.split())  # one line, as naiad-opt prints errors
        path = _write(f"// {state}: pass '{p.name}' {what}\n{text}", p.name, self.dump_dir)
        return PassFailure(p.name, f"pass '{p.name}' {what}; {state} is in {path}", path)


def _printed(module: Operation) -> str:
    """The module's text; a module a failing pass left half rewritten may not print in the
    custom syntax (or at all), and then the generic form, or the reason, is what we have."""
    try:
        return print_module(module)
    except Exception as error:  # the IR is broken: say so in the dump, raise the pass's error
        custom_error = error
    try:
        return print_module(module, generic=True)
    except Exception as error:
        return f"// the module could not be printed: {custom_error!r}; generic form: {error!r}\n"


def _write(text: str, pass_name: str, dump_dir: str | None) -> str:
    """Write `text` to a new file named after the pass (unique, so parallel compiles never
    overwrite each other's) and return its path."""
    if dump_dir:
        os.makedirs(dump_dir, exist_ok=True)
    fd, path = tempfile.mkstemp(prefix=f"naiad-{pass_name}-", suffix=".mlir", dir=dump_dir or None)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return path
