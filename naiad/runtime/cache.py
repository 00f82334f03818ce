"""The compile cache: compiled artifacts by key, in memory and on disk under `NAIAD_CACHE_DIR`.

A key is the hash of everything that decides the artifacts: the kernel's specialization key, the
target and codegen settings, and — so that an edit to Naiad never serves a stale binary — the
hash of Naiad's own source and the llvmlite/LLVM version.

On disk an entry is a directory named by its key holding the artifact files and `manifest.json`
(their sizes and SHA-256, plus JSON metadata). It is written under a temporary name with the
manifest last, then renamed into place: readers never see a partial entry, and when several
processes compile the same kernel the first rename wins and the others keep the winner's entry.
An entry whose manifest is missing or does not match its files is a miss: it is deleted and
rebuilt. Nothing is pickled.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import pathlib
import shutil
import uuid
from dataclasses import dataclass, field

from .. import knobs

_MANIFEST = "manifest.json"


@functools.cache
def naiad_source_hash() -> str:
    """SHA-256 of every Python file of the `naiad` package (computed once per process)."""
    root = pathlib.Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _llvm_version() -> str:
    try:
        import llvmlite
        import llvmlite.binding as llvm
    except ImportError:  # the cache works without llvmlite; compiled back ends need it
        return "none"
    return f"{llvmlite.__version__}/{'.'.join(map(str, llvm.llvm_version_info))}"


def cache_key(parts: dict) -> str:
    """The key of the artifacts decided by `parts` (JSON-serializable), Naiad and LLVM."""
    record = {"parts": parts, "naiad": naiad_source_hash(), "llvm": _llvm_version()}
    text = json.dumps(record, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class CacheEntry:
    """The artifacts of one key: `files` (name → bytes) and `metadata` (JSON values)."""

    key: str
    files: dict[str, bytes]
    metadata: dict = field(default_factory=dict)


class Cache:
    """A two-level cache; `directory` None means `NAIAD_CACHE_DIR`, else ~/.naiad/cache."""

    def __init__(self, directory: str | os.PathLike | None = None):
        configured = directory or knobs.cache_dir.get() or pathlib.Path.home() / ".naiad" / "cache"
        self.directory = pathlib.Path(configured)
        self._memory: dict[str, CacheEntry] = {}

    def _path(self, key: str) -> pathlib.Path:
        return self.directory / key[:2] / key

    def get(self, key: str) -> CacheEntry | None:
        """The entry of `key`, or None (a damaged entry on disk is deleted and is a miss)."""
        entry = self._memory.get(key)
        if entry is None:
            entry = self._read(self._path(key), key)
            if entry is not None:
                self._memory[key] = entry
        return entry

    def put(self, key: str, files: dict[str, bytes], metadata: dict | None = None) -> CacheEntry:
        """Store the artifacts of `key`; if another process stored them first, keep theirs."""
        entry = CacheEntry(key, dict(files), dict(metadata or {}))
        final = self._path(key)
        final.parent.mkdir(parents=True, exist_ok=True)
        staging = final.parent / f".tmp-{os.getpid()}-{uuid.uuid4().hex}"
        staging.mkdir()
        try:
            manifest = {"key": key, "metadata": entry.metadata, "files": {}}
            for name, data in entry.files.items():
                _check_name(name)
                (staging / name).write_bytes(data)
                manifest["files"][name] = {"size": len(data), "sha256": _sha(data)}
            (staging / _MANIFEST).write_text(json.dumps(manifest, sort_keys=True))
            try:
                os.rename(staging, final)
            except OSError:  # `final` exists: another writer won, or a damaged entry is there
                winner = self._read(final, key)
                if winner is not None:
                    entry = winner  # every process then serves the same artifacts
                else:  # damaged, and deleted by _read: take its place
                    with contextlib.suppress(OSError):  # unless another writer just did
                        os.rename(staging, final)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        self._memory[key] = entry
        return entry

    def clear_memory(self) -> None:
        """Forget the in-memory level (the disk level stays)."""
        self._memory.clear()

    def _read(self, path: pathlib.Path, key: str) -> CacheEntry | None:
        try:
            manifest = json.loads((path / _MANIFEST).read_text())
            if manifest.get("key") != key:
                raise ValueError("manifest of another key")
            files = {}
            for name, facts in manifest["files"].items():
                data = (path / name).read_bytes()
                if len(data) != facts["size"] or _sha(data) != facts["sha256"]:
                    raise ValueError(f"{name} does not match the manifest")
                files[name] = data
            return CacheEntry(key, files, manifest.get("metadata", {}))
        except (OSError, ValueError, KeyError, TypeError):
            # Missing, partial or damaged: delete it (if anything is there) and rebuild.
            shutil.rmtree(path, ignore_errors=True)
            return None


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _check_name(name: str) -> None:
    if not name or name == _MANIFEST or "/" in name or name.startswith("."):
        raise ValueError(f"invalid artifact name {name!r}")
