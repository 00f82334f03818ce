"""One cache directory on disk: entries written whole, read back only when whole, ours and bound
to their key, and the least recently used ones evicted past a size (cache.py is the API).

An entry is `<root>/<key[:2]>/<key>/`: the artifact files and `manifest.json`,

    {"format": 2, "key": KEY, "metadata": {...}, "files": {NAME: {"size": N, "sha256": HEX}},
     "digest": HEX}

where `digest` is the SHA-256 of the canonical JSON of the key, the metadata and the files'
facts. So the metadata is covered by a hash as the files are (an edited `scratch_bytes` is a
heap overrun), and an entry is bound to its key: the object code of another kernel, even with
its file facts made consistent, or another entry moved under this key, no longer matches.

Every way an entry can be wrong for its key — missing, partial, unreadable, JSON of the wrong
shape, a file or the metadata not matching — is `DamagedEntry`: the caller deletes it and
rebuilds. An entry, shard or root directory owned by another user or writable by group or
others is `Refused`, as ssh refuses such keys: the caller leaves it alone (it is not ours to
delete) and stops using the directory.

Writers build an entry under `.tmp-*` and rename it into place, manifest written last; removal
renames an entry to `.del-*` before deleting it. So a reader, or another process's eviction,
sees an entry whole or not at all, and never touches one being written.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import pathlib
import re
import shutil
import stat
import time
import uuid

MANIFEST = "manifest.json"
FORMAT = 2
_FIELDS = frozenset({"format", "key", "metadata", "files", "digest"})
_FACTS = frozenset({"size", "sha256"})
_HEX64 = re.compile(r"[0-9a-f]{64}")
_SHARD = re.compile(r"[0-9a-f]{2}")
# Leftovers of a process that died while writing or removing: no write takes this long.
_STALE_SECONDS = 3600
# Past the size limit, eviction goes down to this fraction of it, so that the next writes do
# not each scan the directory again.
_EVICT_TO = 0.9


class DamagedEntry(Exception):
    """An entry that is not a whole, valid entry of its key: delete it and rebuild."""


class Refused(Exception):
    """A path of the cache that another user could have written: never read, never deleted."""


def entry_path(root: pathlib.Path, key: str) -> pathlib.Path:
    return root / key[:2] / key


def check_name(name: str) -> None:
    """Refuse artifact names that are not one plain file of the entry."""
    if not isinstance(name, str) or not name or name == MANIFEST or name.startswith("."):
        raise ValueError(f"invalid artifact name {name!r}")
    if "/" in name or "\\" in name or "\0" in name:
        raise ValueError(f"invalid artifact name {name!r}")


def digest(key: str, metadata: dict, facts: dict) -> str:
    """The hash that binds an entry's metadata and files to its key."""
    record = {"key": key, "metadata": metadata, "files": facts}
    text = json.dumps(record, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


# Windows has neither effective user ids nor O_NOFOLLOW: its ownership is not checked.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _my_uid() -> int | None:
    return os.geteuid() if hasattr(os, "geteuid") else None


def _check_private(info: os.stat_result, path: pathlib.Path) -> None:
    """Raise Refused unless `path` (its stat `info`) is ours and writable by no one else."""
    if _my_uid() is None:
        return
    if info.st_uid != _my_uid():
        raise Refused(f"{path} is owned by uid {info.st_uid}, not by this user ({_my_uid()})")
    if not stat.S_ISLNK(info.st_mode) and info.st_mode & 0o022:
        mode = oct(stat.S_IMODE(info.st_mode))
        raise Refused(f"{path} is writable by group or others (mode {mode}; `chmod go-w` it)")


def open_directory(root: pathlib.Path) -> None:
    """Create the cache directory if missing (private to this user), and check it is one we may
    use; raise Refused with the reason otherwise."""
    try:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.stat(root)  # a symbolic link to a directory elsewhere is fine: follow it
    except FileExistsError:
        raise Refused(f"{root} is not a directory") from None
    except OSError as error:
        raise Refused(f"{root} cannot be created or read ({error.strerror or error})") from None
    if not stat.S_ISDIR(info.st_mode):
        raise Refused(f"{root} is not a directory")
    _check_private(info, root)


def _lstat_directory(path: pathlib.Path) -> os.stat_result | None:
    """A shard's or an entry's stat: None when absent, Refused when not ours, DamagedEntry
    when not a plain directory."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise DamagedEntry(f"{path}: {error}") from None
    _check_private(info, path)
    if not stat.S_ISDIR(info.st_mode):
        raise DamagedEntry(f"{path} is not a directory")
    return info


def _read_file(path: pathlib.Path) -> bytes:
    """A file of an entry: ours, private, regular, never through a symbolic link."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except OSError as error:
        raise DamagedEntry(f"{path}: {error.strerror or error}") from None
    try:
        info = os.fstat(fd)
        _check_private(info, path)
        if not stat.S_ISREG(info.st_mode):
            raise DamagedEntry(f"{path} is not a regular file")
        with open(fd, "rb", closefd=False) as file:
            return file.read()
    except OSError as error:
        raise DamagedEntry(f"{path}: {error.strerror or error}") from None
    finally:
        os.close(fd)


def parse_manifest(text: bytes, key: str) -> tuple[dict, dict]:
    """The metadata and the file facts of a manifest, checked field by field against `key`;
    DamagedEntry when anything is missing, extra, of the wrong type or does not match."""
    try:
        manifest = json.loads(text)
    except (ValueError, RecursionError) as error:  # RecursionError: deeply nested arrays
        raise DamagedEntry(f"the manifest is not JSON ({type(error).__name__})") from None
    if not isinstance(manifest, dict) or set(manifest) != _FIELDS:
        raise DamagedEntry("the manifest does not have the fields of one")
    if type(manifest["format"]) is not int or manifest["format"] != FORMAT:
        raise DamagedEntry(f"the manifest's format is not {FORMAT}")
    if manifest["key"] != key:
        raise DamagedEntry("the manifest is another key's")
    metadata, facts = manifest["metadata"], manifest["files"]
    if not isinstance(metadata, dict) or not isinstance(facts, dict):
        raise DamagedEntry("the manifest's metadata or files are not objects")
    for name, fact in facts.items():
        try:
            check_name(name)
        except ValueError as error:
            raise DamagedEntry(str(error)) from None
        if not _well_formed(fact):
            raise DamagedEntry(f"the manifest's facts of {name!r} are malformed")
    if manifest["digest"] != digest(key, metadata, facts):
        raise DamagedEntry("the digest of key, metadata and files does not match")
    return metadata, facts


def _well_formed(fact) -> bool:
    """A file's facts: exactly a non-negative integer size and a SHA-256 in hex."""
    if not isinstance(fact, dict) or set(fact) != _FACTS:
        return False
    size, sha = fact["size"], fact["sha256"]
    return type(size) is int and size >= 0 and isinstance(sha, str) and bool(_HEX64.fullmatch(sha))


def read_entry(root: pathlib.Path, key: str) -> tuple[dict, dict] | None:
    """The files and metadata of `key`'s entry, or None when there is none; stamps it as used
    (its directory's mtime, which eviction orders by)."""
    path = entry_path(root, key)
    if _lstat_directory(path.parent) is None or _lstat_directory(path) is None:
        return None
    metadata, facts = parse_manifest(_read_file(path / MANIFEST), key)
    files = {}
    for name, fact in facts.items():
        data = _read_file(path / name)
        if len(data) != fact["size"] or hashlib.sha256(data).hexdigest() != fact["sha256"]:
            raise DamagedEntry(f"{path / name} does not match the manifest")
        files[name] = data
    with contextlib.suppress(OSError):  # a directory we may read but not write still serves
        os.utime(path)
    return files, metadata


def manifest_bytes(key: str, files: dict[str, bytes], metadata: dict) -> bytes:
    facts = {
        name: {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        for name, data in files.items()
    }
    manifest = {
        "format": FORMAT,
        "key": key,
        "metadata": metadata,
        "files": facts,
        "digest": digest(key, metadata, facts),
    }
    # Not sorted: the metadata's mappings keep their order (a kernel's signature is in
    # parameter order, as a launch built from a cache hit reads it); `digest` is canonical.
    return json.dumps(manifest).encode()


def _write_file(path: pathlib.Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as file:
        file.write(data)


def _make_shard(shard: pathlib.Path) -> None:
    """Create the shard directory if missing; a damaged one (a file) is replaced."""
    try:
        if _lstat_directory(shard) is not None:
            return
    except DamagedEntry:
        remove(shard)
    try:
        shard.mkdir(mode=0o700)
    except FileExistsError:  # another writer made it just now: check theirs
        _lstat_directory(shard)


def write_entry(root: pathlib.Path, key: str, files: dict, metadata: dict) -> tuple[dict, dict]:
    """Write `key`'s entry and return the files and metadata now on disk for it: ours, or
    those of another process that wrote it first (so every process serves the same).
    OSError when the directory cannot be written (full, read-only)."""
    path = entry_path(root, key)
    _make_shard(path.parent)
    staging = path.parent / f".tmp-{os.getpid()}-{uuid.uuid4().hex}"
    os.mkdir(staging, 0o700)
    try:
        for name, data in files.items():
            _write_file(staging / name, data)
        _write_file(staging / MANIFEST, manifest_bytes(key, files, metadata))  # last
        return _publish(staging, root, key) or (files, metadata)
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # left only when another writer won


def _publish(staging: pathlib.Path, root: pathlib.Path, key: str) -> tuple[dict, dict] | None:
    """Rename `staging` into place; the winner's entry if another writer was first, None when
    ours is the one in place (or when the place keeps changing: ours then lives in memory)."""
    path = entry_path(root, key)
    for _attempt in range(3):
        try:
            os.rename(staging, path)
            return None
        except OSError as error:
            if error.errno not in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR, errno.EISDIR):
                raise
        try:
            found = read_entry(root, key)
        except DamagedEntry:  # not a whole entry: take its place
            remove(path)
            continue
        if found is not None:
            return found
    return None


def remove(path: pathlib.Path) -> None:
    """Delete an entry (or a damaged shard): renamed away first, so that no reader sees it
    half deleted; one that is gone already (another process removed it) is fine."""
    doomed = path.parent / f".del-{os.getpid()}-{uuid.uuid4().hex}"
    try:
        os.rename(path, doomed)
    except OSError:
        return
    if doomed.is_dir() and not doomed.is_symlink():
        shutil.rmtree(doomed, ignore_errors=True)
    else:
        doomed.unlink(missing_ok=True)


def _entry_size(path: str) -> int:
    with os.scandir(path) as files:
        return sum(file.stat(follow_symlinks=False).st_size for file in files)


def _scan(root: pathlib.Path) -> list[tuple[float, int, pathlib.Path]]:
    """(last use, bytes, path) of every entry of ours; removes leftovers of dead processes.
    Entries that vanish meanwhile (another process evicting) are skipped."""
    found = []
    try:
        with os.scandir(root) as children:
            shards = [s.path for s in children if _SHARD.fullmatch(s.name) and s.is_dir()]
    except OSError:
        return found
    for shard in shards:
        try:
            with os.scandir(shard) as children:
                children = list(children)
        except OSError:
            continue
        for child in children:
            with contextlib.suppress(OSError):
                _scan_child(child, found)
    return found


def _scan_child(child: os.DirEntry, found: list) -> None:
    info = child.stat(follow_symlinks=False)
    if _my_uid() not in (None, info.st_uid) or not stat.S_ISDIR(info.st_mode):
        return  # not ours to evict
    if _HEX64.fullmatch(child.name):
        found.append((info.st_mtime, _entry_size(child.path), pathlib.Path(child.path)))
        return
    stale = time.time() - info.st_mtime > _STALE_SECONDS
    if stale and child.name.startswith((".tmp-", ".del-")):
        shutil.rmtree(child.path, ignore_errors=True)


def evict(root: pathlib.Path, limit: int, keep: str | None = None) -> int:
    """Past `limit` bytes, delete the least recently used entries (never `keep`, never one
    being written) down to a fraction of it; return the bytes left."""
    entries = _scan(root)
    total = sum(size for _, size, _ in entries)
    if total <= limit:
        return total
    for _, size, path in sorted(entries):
        if total <= limit * _EVICT_TO:
            break
        if path.name != keep:
            remove(path)
            total -= size
    return total
