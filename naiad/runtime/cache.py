"""The compile cache: compiled artifacts by key, in memory and on disk under `NAIAD_CACHE_DIR`.

A key is the hash of everything that decides the artifacts: the kernel's specialization key, the
target and codegen settings, and — so that an edit to Naiad never serves a stale binary — the
hash of Naiad's own source and the llvmlite/LLVM version.

The disk level (cache_store.py) holds an entry per key: its files and JSON metadata under a
manifest whose digest binds both to the key. An entry that is damaged in any way is a miss: it
is deleted and rebuilt. Nothing is pickled. The disk level is optional: a directory that cannot
be written (a full disk, no permission) or that another user could have written (not ours, or
writable by group or others) is reported once with a RuntimeWarning, and compiled kernels are
then kept in memory only — a launch never fails because of the cache. Past
`NAIAD_CACHE_MAX_SIZE` bytes on disk, the entries used least recently are evicted; the memory
level is bounded too (`memory_limit`), least recently used first. docs/cache.md has the rest.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import pathlib
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from .. import knobs
from ..backends.cpu import host_facts
from ..fork_safety import hold_across_fork
from . import cache_store

# The memory level mirrors recently used entries for this process. The kernels a process runs
# are held by their jit functions anyway (with their stages' text and object code), so this
# only spares re-reading the disk, and keeping every entry would hold all of it twice (a CPU
# entry is about 40 KB: 80 MB for 2,000 specializations).
MEMORY_LIMIT = 16 << 20


@functools.cache
def naiad_source_hash() -> str:
    """SHA-256 of every Python file of the `naiad` package, computed once per process. Reading
    and hashing them all takes 100 ms or more; a process that finds the files as an earlier one
    left them (the same names, sizes, inodes, modification and change times: a write changes
    the change time, which no tool sets back) reads that one's result from the disk cache."""
    root = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    files = _source_files(root)
    stamp = hashlib.sha256(b"naiad source files\n")
    for name, st in files:
        fields = (name, st.st_size, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
        stamp.update(("\0".join(map(str, fields)) + "\n").encode())
    key = "naiad-source-" + stamp.hexdigest()
    remembered = _recall(key).get("naiad")
    if isinstance(remembered, str) and len(remembered) == 64:
        return remembered
    digest = hashlib.sha256()
    for name, _ in files:
        digest.update(name.encode())
        digest.update(pathlib.Path(root, name).read_bytes())
    _note(key, {"naiad": digest.hexdigest()})
    return digest.hexdigest()


def _source_files(root: str) -> list[tuple[str, os.stat_result]]:
    """(path relative to `root`, its stat) of every Python file under `root`, in the order of
    their paths' parts (pathlib's order), symbolic links to folders not followed. os.scandir
    instead of Path.rglob: it is what a cached kernel's first launch in a new process waits
    for, and pathlib took 28 ms for Naiad's 500 files where this takes 4. The `__pycache__`
    folders, half of the folders met, hold no source and are not entered."""
    found: list[tuple[tuple[str, ...], os.stat_result]] = []

    def scan(directory: str, parts: tuple[str, ...]) -> None:
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        scan(entry.path, (*parts, entry.name))
                elif entry.name.endswith(".py"):
                    found.append(((*parts, entry.name), entry.stat()))

    scan(root, ())
    found.sort(key=lambda file: file[0])
    return [(os.sep.join(parts), st) for parts, st in found]


def _recall(key: str) -> dict:
    """The metadata an earlier process noted under `key` in the disk cache (empty if none):
    read quietly, as a cache hit or nothing (the compile cache itself reports unusable
    directories)."""
    try:
        root = Cache().directory
        cache_store.open_directory(root)
        found = cache_store.read_entry(root, key)
    except (cache_store.Refused, cache_store.DamagedEntry, OSError, ValueError):
        return {}
    return {} if found is None or not isinstance(found[1], dict) else found[1]


def _note(key: str, values: dict) -> None:
    try:
        root = Cache().directory
        cache_store.open_directory(root)
        cache_store.write_entry(root, key, {}, values)
    except (cache_store.Refused, cache_store.DamagedEntry, OSError):
        pass  # kept for this process only


def _remembered_host_facts(stamp: str, ask) -> dict:
    """LLVM's facts of this host (backends/cpu/host_facts.py) as an earlier process with the
    same stamp noted them, else `ask()`'s, noted for the next."""
    key = "llvm-host-" + stamp
    found = _recall(key)
    if host_facts.well_formed(found):
        return found
    found = ask()
    _note(key, found)
    return found


host_facts.use_store(_remembered_host_facts)


def cache_key(parts: dict) -> str:
    """The key of the artifacts decided by `parts` (JSON-serializable), Naiad and LLVM."""
    record = {"parts": parts, "naiad": naiad_source_hash(), "llvm": host_facts.llvm_version()}
    text = json.dumps(record, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class CacheEntry:
    """The artifacts of one key: `files` (name → bytes) and `metadata` (JSON values)."""

    key: str
    files: dict[str, bytes]
    metadata: dict = field(default_factory=dict)

    @property
    def nbytes(self) -> int:
        return sum(len(data) for data in self.files.values())


@dataclass
class _Directory:
    """What this process knows of one cache directory."""

    refused: str | None = None  # why it is neither read nor written (warned once)
    unwritable: str | None = None  # why it is read but no longer written (warned once)
    estimate: int | None = None  # bytes in it at the last scan, plus our writes since


# One lock for every Cache of the process, held across os.fork() (fork_safety.py): a child forked
# while another thread read or wrote the cache outside a compile (an autotuner's stored choice,
# the runtime's own objects) would wait for it forever at its first compile. Rank 15: it is
# taken under the compile lock (0) and the CPU loader's (10), and its holder takes neither of
# them nor llvmlite's (20).
_LOCK = threading.RLock()
hold_across_fork(_LOCK, 15)


def default_directory() -> str:
    """The folder of the disk cache: NAIAD_CACHE_DIR (TRITON_CACHE_DIR), else, while Naiad
    stands in for Triton, Triton's default (`$TRITON_HOME/.triton/cache`, TRITON_HOME the
    user's home when unset: Naiad's entries live beside Triton's, docs/cache.md), else
    ~/.naiad/cache."""
    chosen = knobs.cache_dir.get()
    if chosen:
        return chosen
    if knobs.reading_triton_twins():
        return triton_folder("cache")
    return os.path.join(os.path.expanduser("~"), ".naiad", "cache")


def triton_folder(name: str) -> str:
    """`$TRITON_HOME/.triton/<name>` (the user's home when TRITON_HOME is unset), where Triton
    keeps its cache and its kernel dumps."""
    return os.path.join(knobs.triton_home.get() or os.path.expanduser("~/"), ".triton", name)


class Cache:
    """A two-level cache; `directory` None follows `NAIAD_CACHE_DIR` (else ~/.naiad/cache, or
    Triton's folder while Naiad stands in for it: default_directory) as it changes, so one
    Cache serves a process. Safe to share between threads and, on disk,
    between processes."""

    def __init__(self, directory: str | os.PathLike | None = None, memory_limit=MEMORY_LIMIT):
        self._configured = pathlib.Path(directory) if directory else None
        self.memory_limit = memory_limit
        self._memory: OrderedDict[str, CacheEntry] = OrderedDict()
        self._memory_bytes = 0
        self._memory_root: pathlib.Path | None = None
        self._directories: dict[pathlib.Path, _Directory] = {}
        self._lock = _LOCK

    @property
    def directory(self) -> pathlib.Path:
        if self._configured is not None:
            return self._configured
        return pathlib.Path(default_directory())

    def get(self, key: str, validate: Callable[[CacheEntry], object] | None = None):
        """The entry of `key`, or None. A damaged entry on disk is deleted and is a miss, and so
        is one that `validate` (the reader's own check) rejects by returning false or raising
        KeyError, ValueError or TypeError."""
        with self._lock:
            root, state = self._open()
            entry = self._memory.get(key)
            if entry is not None:
                self._memory.move_to_end(key)
                return entry
            if state.refused is None:
                entry = self._read(root, state, key, validate)
            if entry is not None:
                self._remember(entry)
            return entry

    def put(self, key: str, files: dict[str, bytes], metadata: dict | None = None) -> CacheEntry:
        """Store the artifacts of `key` and return its entry: if another process stored them
        first, theirs. The metadata comes back as JSON reads it (tuples become lists)."""
        for name in files:
            cache_store.check_name(name)
        entry = CacheEntry(key, dict(files), json.loads(json.dumps(metadata or {})))
        with self._lock:
            root, state = self._open()
            if state.refused is None and state.unwritable is None:
                entry = self._write(root, state, entry)
            self._remember(entry)
            return entry

    def discard(self, key: str) -> None:
        """Forget `key`'s entry in memory and delete it on disk: for a reader that found it
        unusable in a way only it can tell (the entry is then rebuilt)."""
        with self._lock:
            root, state = self._open()
            self._forget(key)
            if state.refused is None:
                cache_store.remove(cache_store.entry_path(root, key))

    def clear_memory(self) -> None:
        """Forget the in-memory level (the disk level stays)."""
        with self._lock:
            self._memory.clear()
            self._memory_bytes = 0

    def _open(self) -> tuple[pathlib.Path, _Directory]:
        """The directory in use, checked the first time; the memory level mirrors its entries,
        so it starts empty when the directory changes (as a new Cache would)."""
        root = self.directory
        if root != self._memory_root:
            self.clear_memory()
            self._memory_root = root
        state = self._directories.get(root)
        if state is None:
            state = self._directories[root] = _Directory()
            try:
                cache_store.open_directory(root)
            except cache_store.Refused as error:
                self._refuse(root, state, str(error))
        return root, state

    def _read(self, root, state: _Directory, key: str, validate) -> CacheEntry | None:
        try:
            found = cache_store.read_entry(root, key)
        except cache_store.Refused as error:
            self._refuse(root, state, str(error))
            return None
        except cache_store.DamagedEntry:
            cache_store.remove(cache_store.entry_path(root, key))
            return None
        if found is None:
            return None
        entry = CacheEntry(key, *found)
        if validate is not None:
            try:
                valid = validate(entry)
            except (KeyError, ValueError, TypeError):
                valid = False
            if not valid:
                cache_store.remove(cache_store.entry_path(root, key))
                return None
        return entry

    def _write(self, root, state: _Directory, entry: CacheEntry) -> CacheEntry:
        try:
            files, metadata = cache_store.write_entry(root, entry.key, entry.files, entry.metadata)
        except cache_store.Refused as error:
            self._refuse(root, state, str(error))
            return entry
        except cache_store.DamagedEntry:  # its shard turned into a file meanwhile: next time
            return entry
        except OSError as error:  # full, read-only, no permission: compiling goes on
            state.unwritable = str(error)
            _warn(f"Naiad's compile cache cannot write to {root} ({error})")
            return entry
        self._limit_disk(root, state, entry)
        return CacheEntry(entry.key, files, metadata)

    def _limit_disk(self, root, state: _Directory, entry: CacheEntry) -> None:
        """Keep the directory under NAIAD_CACHE_MAX_SIZE. It is scanned only when this
        process's estimate (the last scan plus its own writes) passes the limit: other
        processes' writes are seen at that scan, and each of them keeps the limit too."""
        limit = knobs.cache_max_size.get()
        if not limit:
            return
        written = entry.nbytes + len(json.dumps(entry.metadata))
        if state.estimate is not None and state.estimate + written <= limit:
            state.estimate += written
            return
        state.estimate = cache_store.evict(root, limit, keep=entry.key)

    def _refuse(self, root, state: _Directory, reason: str) -> None:
        if state.refused is None:
            state.refused = reason
            _warn(f"Naiad's compile cache does not use {root}: {reason}")

    def _remember(self, entry: CacheEntry) -> None:
        """Keep `entry` as the most recently used, dropping the least recently used ones past
        `memory_limit` bytes (the newest always stays: put and get return it anyway)."""
        self._forget(entry.key)
        self._memory[entry.key] = entry
        self._memory_bytes += entry.nbytes
        while self._memory_bytes > self.memory_limit and len(self._memory) > 1:
            _, dropped = self._memory.popitem(last=False)
            self._memory_bytes -= dropped.nbytes

    def _forget(self, key: str) -> None:
        dropped = self._memory.pop(key, None)
        if dropped is not None:
            self._memory_bytes -= dropped.nbytes


def _warn(message: str) -> None:
    """Once per directory and cause: the disk level is optional, so this is never an error."""
    message += "; compiled kernels are kept in memory only"
    warnings.warn(message, RuntimeWarning, stacklevel=3)  # the Cache's line that met the cause
