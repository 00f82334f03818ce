"""Where the back end keeps its own object code (the runtime library, the worker pool) between
processes: the runtime installs the disk cache here (runtime/cpu_objects.py), since the back end
never imports the runtime. Without it, the code is built in each process (70-130 ms of LLVM)."""

from __future__ import annotations

# store(name, make) -> bytes, or None: build each time
_store: list = [None]


def use_object_store(store) -> None:
    """Keep the object code of `cached_object` in `store(name, make)` (None: build it each time)."""
    _store[0] = store


def cached_object(name: str, make) -> bytes:
    """The object code `make()` builds for the host, named `name`: from the store the runtime
    installed when it holds it, else built now."""
    store = _store[0]
    return make() if store is None else store(name, make)
