"""`naiad.install_as_triton()`: `import triton` and Triton's public submodules give Naiad's own
modules, so that a Triton program runs on Naiad unmodified.

    import naiad
    naiad.install_as_triton()
    import triton                      # naiad.triton: Triton's top-level names, Naiad's objects
    import triton.language as tl       # naiad.language itself
    from triton.language.extra import libdevice   # naiad.language.extra.libdevice itself

A finder first on `sys.meta_path` answers every name under `triton` with the Naiad module that
stands for it (ALIASES, else the same child name under the Naiad module of the parent: so
`triton.language.standard` is `naiad.language.standard`). It imports that module under its own
name and enters the very same object under the Triton name, so each module exists once and
`tl.extra.libdevice is triton.language.extra.libdevice`. A name with no Naiad module is a
ModuleNotFoundError that says so, never a second copy of a Naiad file imported under a Triton
name. While the switch is on, unset `NAIAD_*` settings read their `TRITON_*` twins (knobs.py).

Without the switch Naiad never imports or touches `triton`: a real Triton installed beside Naiad
(torch's CUDA wheels bring one) is what `import triton` gives. With it, Naiad wins in this
process, and a real Triton already imported is an error (two `triton`s would mix). Programs one
cannot edit run under `python -m naiad.run` (run.py), which also switches on the processes they
start, or with the stand-in folder on PYTHONPATH (docs/compat.md).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings

from . import knobs

# Triton's module -> the Naiad module that is it, where the name is not the same child of the
# parent's Naiad module (`triton` -> naiad.triton gives `triton.compiler` -> naiad.triton.compiler
# by that rule). The triton.* modules of naiad/triton/ hold what has no home elsewhere in Naiad.
ALIASES = {
    "triton": "naiad.triton",
    "triton.language": "naiad.language",
    "triton.language.extra.cuda.libdevice": "naiad.language.extra.libdevice",
    "triton.language.extra.cpu.libdevice": "naiad.language.extra.libdevice",
    "triton.testing": "naiad.testing",
    "triton.tools": "naiad.tools",
    "triton.errors": "naiad.errors",
    "triton.runtime.jit": "naiad.runtime.jit",
    "triton.runtime.autotuner": "naiad.runtime.autotuner",
    "triton.runtime.driver": "naiad.runtime.driver",
    "triton.runtime.errors": "naiad.errors",
    "triton.compiler.errors": "naiad.errors",
    "triton.compiler.code_generator": "naiad.frontend.codegen",
}

# The public submodules Triton's users import (issue 16), each checked by tests/compat/.
PUBLIC_SUBMODULES = (
    "triton.language",
    "triton.language.core",
    "triton.language.math",
    "triton.language.standard",
    "triton.language.extra",
    "triton.language.extra.libdevice",
    "triton.language.extra.cuda",
    "triton.language.extra.cuda.libdevice",
    "triton.language.target_info",
    "triton.testing",
    "triton.runtime",
    "triton.runtime.jit",
    "triton.runtime.autotuner",
    "triton.runtime.driver",
    "triton.runtime.errors",
    "triton.runtime.cache",
    "triton.compiler",
    "triton.compiler.compiler",
    "triton.compiler.errors",
    "triton.backends",
    "triton.backends.compiler",
    "triton.tools",
    "triton.tools.tensor_descriptor",
    "triton.tools.mxfp",
    "triton.knobs",
    "triton.profiler",
    "triton.profiler.viewer",
    "triton.errors",
)


def _is_triton(name: str) -> bool:
    return name == "triton" or name.startswith("triton.")


def naiad_name(name: str) -> str | None:
    """The Naiad module that stands for Triton's module `name`, or None where there is none."""
    if name in ALIASES:
        return ALIASES[name]
    parent, _, child = name.rpartition(".")
    parent_target = naiad_name(parent) if parent else None
    if parent_target is None:
        return None
    target = f"{parent_target}.{child}"
    try:
        found = importlib.util.find_spec(target)
    except ModuleNotFoundError:  # the parent is a module, not a package
        found = None
    return target if found is not None else None


class _AliasLoader(importlib.abc.Loader):
    """Gives the import system an already-made Naiad module for a Triton name."""

    def __init__(self, target: str):
        self.target = target
        self._own_spec = None

    def create_module(self, spec):
        module = importlib.import_module(self.target)
        self._own_spec = module.__spec__
        return module

    def exec_module(self, module) -> None:
        # The import system has just set the alias's spec on the module: give it its own back,
        # so `module.__spec__.name` still names the Naiad module (reload, pickling, pytest).
        module.__spec__ = self._own_spec


class _TritonFinder(importlib.abc.MetaPathFinder):
    """Answers every `triton` and `triton.*` import while the switch is on."""

    def find_spec(self, fullname, path=None, target=None):
        if not _is_triton(fullname):
            return None
        naiad = naiad_name(fullname)
        if naiad is None:
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: Naiad stands in for Triton here "
                f"(naiad.install_as_triton) and has nothing for {fullname!r} "
                "(see docs/compat.md)",
                name=fullname,
            )
        is_package = hasattr(importlib.import_module(naiad), "__path__")
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(naiad), is_package=is_package)


_finder = _TritonFinder()


def is_installed() -> bool:
    """Whether `import triton` gives Naiad in this process."""
    return _finder in sys.meta_path


def install_as_triton() -> None:
    """Make `import triton` (and every Triton submodule with a Naiad counterpart) give Naiad's
    own modules in this process, and read unset `NAIAD_*` settings from their `TRITON_*` twins.
    Call it before anything imports Triton; calling it again does nothing.

    Raises:
        RuntimeError: a real Triton was imported already (objects of both would mix).
    """
    present = sys.modules.get("triton")
    if present is not None and not _is_ours(present):
        where = getattr(present, "__file__", None) or "somewhere"
        raise RuntimeError(
            f"triton was imported from {where} before naiad.install_as_triton(): call it "
            "before anything imports triton, or run the program with `python -m naiad.run`"
        )
    if not is_installed():
        sys.meta_path.insert(0, _finder)
    knobs.read_triton_twins(True)


def uninstall_as_triton() -> None:
    """Undo `install_as_triton()`: forget the `triton` names it made, so that `import triton`
    finds whatever else is installed (or nothing), and stop reading the `TRITON_*` twins."""
    while _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    for name in [name for name in sys.modules if _is_triton(name)]:
        if _is_ours(sys.modules[name]):
            del sys.modules[name]
    knobs.read_triton_twins(False)


def _is_ours(module) -> bool:
    """A Naiad module, or the stand-in `triton` package that is switching Naiad on."""
    name = getattr(getattr(module, "__spec__", None), "name", None) or ""
    return name == "naiad" or name.startswith("naiad.") or hasattr(module, "__naiad_stand_in__")


def install_from_environment() -> None:
    """`NAIAD_AS_TRITON=1`: switch on as naiad is imported (`python -m naiad.run` sets it for
    the processes a program starts). A real Triton imported before naiad is left alone, with a
    warning, since raising here would make `import naiad` itself fail."""
    if not knobs.as_triton.get():
        return
    try:
        install_as_triton()
    except RuntimeError as error:
        warnings.warn(f"NAIAD_AS_TRITON=1 ignored: {error}", RuntimeWarning, stacklevel=2)
