"""Triton's cache managers for programs and tools that keep their own files as Triton does:
`CacheManager` (the interface), `FileCacheManager` (a folder per key under `knobs.cache.dir`,
or `dump_dir`, `override_dir`) and `get_cache_manager(key)` (the class `knobs.cache.
manager_class` names, else FileCacheManager).

    manager = triton.runtime.cache.get_cache_manager(key)
    path = manager.put(b"...", "kernel.bin")          # written whole, or not at all
    manager.put_group("kernel.json", {"kernel.bin": path})
    manager.get_group("kernel.json")                  # {"kernel.bin": path}, or None

Naiad's own compiles do not go through them: its cache is naiad/runtime/cache.py, with its
own entries (two-hex-digit shards) beside these in the same folder (docs/compat.md).
"""

from __future__ import annotations

import abc
import json
import os
import tempfile

from .. import knobs

_GROUP_PREFIX = "__grp__"  # the name of a group's file: the prefix, then the group's name


class CacheManager(abc.ABC):
    """What a cache of files by key offers (Triton's interface)."""

    def __init__(self, key, override=False, dump=False):
        self.key = key

    @abc.abstractmethod
    def get_file(self, filename) -> str | None:
        """The path of `filename` in this key's folder, or None when it is not there."""

    @abc.abstractmethod
    def put(self, data, filename, binary=True) -> str:
        """Store `data` (bytes, else text) as `filename`; the path."""

    @abc.abstractmethod
    def get_group(self, filename: str) -> dict[str, str] | None:
        """The files stored as group `filename` (name -> path), None unless all are there."""

    @abc.abstractmethod
    def put_group(self, filename: str, group: dict[str, str]):
        """Record `group` (name -> path) under `filename`."""


class FileCacheManager(CacheManager):
    """A folder per key: under `knobs.cache.dir`, or `dump_dir` (`dump`), or `override_dir`
    (`override`, which is read only, so never made)."""

    def __init__(self, key, override=False, dump=False):
        super().__init__(key, override, dump)
        if dump:
            root = knobs.cache.dump_dir
        elif override:
            root = knobs.cache.override_dir
        else:
            root = knobs.cache.dir
        if not root:
            raise RuntimeError("no cache folder: set TRITON_CACHE_DIR or TRITON_HOME")
        self.cache_dir = os.path.join(root, key)
        if not override:
            os.makedirs(self.cache_dir, exist_ok=True)

    def _path(self, filename: str) -> str:
        return os.path.join(self.cache_dir, filename)

    def has_file(self, filename) -> bool:
        return os.path.exists(self._path(filename))

    def get_file(self, filename) -> str | None:
        return self._path(filename) if self.has_file(filename) else None

    def put(self, data, filename, binary=True) -> str:
        """Written to a temporary file of the folder, then renamed: a reader sees the whole
        file or none, whatever other processes write."""
        if not isinstance(data, bytes):
            data = str(data).encode()
        handle, temporary = tempfile.mkstemp(dir=self.cache_dir, prefix=f".{filename}.")
        try:
            with os.fdopen(handle, "wb") as f:
                f.write(data)
            os.replace(temporary, self._path(filename))
        except BaseException:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise
        return self._path(filename)

    def get_group(self, filename: str) -> dict[str, str] | None:
        path = self.get_file(_GROUP_PREFIX + filename)
        if path is None:
            return None
        try:
            with open(path) as f:
                children = json.load(f).get("child_paths")
        except (OSError, ValueError, AttributeError):  # damaged: a miss
            return None
        if not isinstance(children, dict):
            return None
        if not all(isinstance(p, str) and os.path.exists(p) for p in children.values()):
            return None
        return dict(children)

    def put_group(self, filename: str, group: dict[str, str]) -> str:
        text = json.dumps({"child_paths": group})
        return self.put(text, _GROUP_PREFIX + filename, binary=False)


def get_cache_manager(key: str) -> CacheManager:
    """The cache manager of `key`: `knobs.cache.manager_class`'s, else a FileCacheManager."""
    manager_class = knobs.cache.manager_class or FileCacheManager
    return manager_class(key)


def get_override_manager(key: str) -> CacheManager:
    return (knobs.cache.manager_class or FileCacheManager)(key, override=True)


def get_dump_manager(key: str) -> CacheManager:
    return (knobs.cache.manager_class or FileCacheManager)(key, dump=True)
