"""The CPU back end's own object code — its runtime library and its worker pool — kept in the
disk cache like kernels, so a new process links them instead of running LLVM again (70-130 ms).

The key is the object's name, the host target (triple, CPU, features) and, through
`cache.cache_key`, Naiad's source and LLVM's version: everything the code is made from. The
back end asks through `object_store.cached_object`, which this module serves once imported (the
CPU launcher imports it). NAIAD_ALWAYS_COMPILE builds them again, as it does kernels.
"""

from __future__ import annotations

from .. import knobs
from ..backends.cpu import object_store
from ..backends.cpu.target import host_target
from .cache import cache_key
from .compiler import disk_cache

OBJECT = "obj"


def _well_formed(entry) -> bool:
    return isinstance(entry.files.get(OBJECT), bytes) and len(entry.files[OBJECT]) > 0


def cached_object(name: str, make) -> bytes:
    """`make()`'s object code for the host, from the disk cache when it holds it."""
    key = "runtime-object-" + cache_key({"name": name, "target": host_target().description()})
    entry = None if knobs.always_compile.get() else disk_cache().get(key, _well_formed)
    if entry is not None:
        return entry.files[OBJECT]
    code = make()
    disk_cache().put(key, {OBJECT: code})
    return code


object_store.use_object_store(cached_object)
