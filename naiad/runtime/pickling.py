"""Kernels cross process boundaries by reference, as Python pickles functions: a `JITFunction`
(or an `Autotuner`, `Heuristics`) pickles as its module's name, the module's file and its
qualified name, and is unpickled as the very object that module defines in the receiving
process, compiled there from the same source (Naiad's disk cache then serves what the sender
compiled).

Why by reference: the kernel's function and globals do not pickle, and libraries that send
kernels between processes strip them before pickling (torch's Inductor compiles its generated
kernels in worker processes, sets `fn.fn` and `fn.__globals__` to None, and pickles the kernel
back to the parent). A module the receiver has not imported is loaded from its file under the
same name, as Inductor's code cache loads its kernels; a name that leads to a decorator's
object (Inductor's `CachingAutotuner`, an autotuner) is followed through its `.fn` chain to
the kernel, which must be the one defined at the same line of the same file.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class KernelReference:
    """Where a kernel is defined: enough to find it again in another process."""

    module: str
    filename: str
    qualname: str
    line: int

    @classmethod
    def of(cls, fn) -> KernelReference:
        """The reference of Python function `fn` (read when the kernel is made: by the time a
        library pickles the kernel it may have dropped the function)."""
        code = fn.__code__
        return cls(fn.__module__, code.co_filename, fn.__qualname__, code.co_firstlineno)

    def resolve(self, kind: type):
        """The object of type `kind` this reference names in this process."""
        if "<locals>" in self.qualname:
            raise TypeError(
                f"cannot unpickle kernel `{self.qualname}`: a kernel defined inside a function "
                "is not reachable by name (define it at module level)"
            )
        found = _module(self.module, self.filename)
        for part in self.qualname.split("."):
            found = getattr(found, part)
        while not isinstance(found, kind) and hasattr(found, "fn"):
            found = found.fn  # through decorators: autotune, heuristics, Inductor's wrappers
        if not isinstance(found, kind) or not self._defines(found):
            raise TypeError(
                f"cannot unpickle kernel `{self.qualname}`: `{self.module}` no longer "
                f"defines it at {self.filename}:{self.line}"
            )
        return found

    def _defines(self, found) -> bool:
        reference = getattr(found, "reference", None)
        return reference is None or (reference.filename, reference.line) == (
            self.filename,
            self.line,
        )


class PicklesByReference:
    """Mixin of Naiad's kernel classes (`JITFunction`, `Autotuner`, `Heuristics` and their
    subclasses): pickled, and deep-copied, as a reference to where the kernel is defined.

    Not a method of `KernelInterface` itself: libraries subclass that interface for objects
    that carry state of their own and say how it pickles (Inductor's `CachingAutotuner` keeps
    its compiled configs in its `__getstate__`, and saves a deep copy of itself in its graph
    cache). Taken by reference, such a copy came back as the live object of the generated
    module, whose compiled configs were already released after autotuning."""

    def __reduce__(self):
        """Pickled as a reference: unpickled as the object the same module defines there."""
        return unpickle_kernel, (self.reference, type(self))


def unpickle_kernel(reference: KernelReference, kind: type):
    """The kernel `reference` names (what `__reduce__` of a kernel class returns to)."""
    return reference.resolve(kind)


def _module(name: str, filename: str):
    """Module `name`: imported already, importable, or loaded from `filename` under `name`."""
    module = sys.modules.get(name)
    if module is not None:
        return module
    try:
        return importlib.import_module(name)
    except ImportError:
        pass
    spec = importlib.util.spec_from_file_location(name, filename)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load module `{name}` from {filename}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
