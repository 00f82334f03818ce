"""The compile cache: hits, misses, damaged and tampered entries, a disk that cannot be written
or that other users could write, the memory and disk size limits, concurrent processes; and the
same through real CPU kernels, which must compute the right values whatever the cache holds."""

import errno
import json
import multiprocessing
import os
import pathlib
import shutil
import warnings

import pytest

from naiad import knobs
from naiad.runtime import cache as cache_module
from naiad.runtime import cache_store
from naiad.runtime.cache import Cache, cache_key

FILES = {"kernel.ttir": b"module {}\n", "kernel.bin": bytes(range(256)) * 3}
METADATA = {"entry": "add", "scratch_bytes": 768, "written": ["out_ptr"]}
SCRIPT = pathlib.Path(__file__).with_name("cache_launches.py")


def _path(root, key) -> pathlib.Path:
    return root / key[:2] / key


def _manifest(root, key) -> dict:
    return json.loads((_path(root, key) / "manifest.json").read_text())


def _rewrite_manifest(root, key, manifest) -> None:
    text = manifest if isinstance(manifest, str) else json.dumps(manifest)
    (_path(root, key) / "manifest.json").write_text(text)


def _stored(root, name="entry") -> str:
    key = cache_key({"kernel": name})
    Cache(root).put(key, FILES, METADATA)
    return key


def _assert_rebuilt(root, key) -> None:
    """`key`'s damaged entry is a miss and is gone; putting it again makes a good one."""
    assert Cache(root).get(key) is None
    assert not _path(root, key).exists()
    Cache(root).put(key, FILES, METADATA)
    entry = Cache(root).get(key)
    assert (entry.files, entry.metadata) == (FILES, METADATA)


def test_put_then_get_from_memory_and_from_disk(tmp_path):
    store = Cache(tmp_path)
    key = cache_key({"kernel": "add", "n": 1})
    assert store.get(key) is None
    store.put(key, FILES, {"name": "add", "num_warps": 4, "shape": (1, 2)})
    assert store.get(key).files == FILES
    fresh = Cache(tmp_path)  # another process: only the disk level
    entry = fresh.get(key)
    assert entry.files == FILES and entry.metadata == {
        "name": "add",
        "num_warps": 4,
        "shape": [1, 2],
    }
    assert store.get(key).metadata == entry.metadata  # the writer sees what readers see


def test_metadata_mappings_keep_their_order_on_disk(tmp_path):
    key = cache_key({"kernel": "order"})
    signature = {"x_ptr": "*fp32", "B": "i32", "a": "constexpr", "W": "i32"}
    Cache(tmp_path).put(key, FILES, {"signature": signature})
    assert list(Cache(tmp_path).get(key).metadata["signature"]) == list(signature)


def test_cache_dir_knob_is_followed_as_it_changes(tmp_path):
    store = Cache()
    # The keys first: a process's first key notes Naiad's source hash in the cache it finds.
    keys = {name: cache_key({"kernel": name}) for name in ("here", "there")}
    for name, key in keys.items():
        with knobs.override(NAIAD_CACHE_DIR=str(tmp_path / name)):
            assert store.directory == tmp_path / name
            store.put(key, FILES)
    assert len(list(tmp_path.glob("here/*/*"))) == len(list(tmp_path.glob("there/*/*"))) == 1


@pytest.mark.parametrize(
    "text, size",
    [
        ("", 1 << 30),
        ("0", 0),
        ("4096", 4096),
        ("64K", 64 << 10),
        ("3m", 3 << 20),
        ("2GiB", 2 << 30),
    ],
)
def test_cache_max_size_knob(text, size):
    with knobs.override(NAIAD_CACHE_MAX_SIZE=text):
        assert knobs.cache_max_size.get() == size


@pytest.mark.parametrize("text", ["x", "1.5G", "-1", "G", "12T"])
def test_cache_max_size_knob_refuses_what_is_not_a_size(text):
    with knobs.override(NAIAD_CACHE_MAX_SIZE=text), pytest.raises(ValueError, match="512M"):
        knobs.cache_max_size.get()


@pytest.mark.parametrize("damage", ["truncate", "drop_manifest", "drop_file", "bad_json", "dir"])
def test_a_damaged_entry_is_a_miss_and_is_deleted(tmp_path, damage):
    key = _stored(tmp_path, damage)
    path = _path(tmp_path, key)
    if damage == "truncate":
        (path / "kernel.bin").write_bytes(b"\x00")
    elif damage == "drop_manifest":
        (path / "manifest.json").unlink()
    elif damage == "drop_file":
        (path / "kernel.ttir").unlink()
    elif damage == "bad_json":
        (path / "manifest.json").write_text("{not json")
    else:  # unreadable as a file
        (path / "kernel.bin").unlink()
        (path / "kernel.bin").mkdir()
    _assert_rebuilt(tmp_path, key)


# Valid JSON of the wrong shape: each used to raise out of get() (or crash a launch) on every
# launch until the entry was deleted by hand.
MALFORMED = {
    "a list": lambda m: [],
    "a string": lambda m: "manifest",
    "deeply nested": lambda m: "[" * 100_000 + "]" * 100_000,
    "missing files": lambda m: {k: v for k, v in m.items() if k != "files"},
    "an extra field": lambda m: {**m, "extra": 1},
    "format as text": lambda m: {**m, "format": "2"},
    "format as bool": lambda m: {**m, "format": True},
    "files a list": lambda m: {**m, "files": list(m["files"])},
    "facts a number": lambda m: {**m, "files": {"kernel.bin": 768}},
    "size as text": lambda m: _fact(m, size="768"),
    "size negative": lambda m: _fact(m, size=-1),
    "size a bool": lambda m: _fact(m, size=True),
    "sha256 short": lambda m: _fact(m, sha256="abc"),
    "sha256 a list": lambda m: _fact(m, sha256=[]),
    "a path as a name": lambda m: {**m, "files": {"../kernel.bin": m["files"]["kernel.bin"]}},
    "metadata a list": lambda m: {**m, "metadata": [1]},
    "metadata missing a key": lambda m: {**m, "metadata": {"entry": "add"}},
    "metadata edited": lambda m: {**m, "metadata": {**m["metadata"], "scratch_bytes": 8}},
    "digest missing": lambda m: {k: v for k, v in m.items() if k != "digest"},
    "another key": lambda m: {**m, "key": "0" * 64},
}


def _fact(manifest, **changes) -> dict:
    facts = dict(manifest["files"])
    facts["kernel.bin"] = {**facts["kernel.bin"], **changes}
    return {**manifest, "files": facts}


@pytest.mark.parametrize("shape", MALFORMED)
def test_a_malformed_manifest_is_a_miss_and_is_deleted(tmp_path, shape):
    key = _stored(tmp_path, shape)
    _rewrite_manifest(tmp_path, key, MALFORMED[shape](_manifest(tmp_path, key)))
    _assert_rebuilt(tmp_path, key)


def test_another_entrys_files_under_a_key_are_a_miss(tmp_path):
    """Another kernel's object code with file facts made to match, and another entry moved
    under this key with its key field edited: the digest binds metadata and files to the key."""
    key, other = _stored(tmp_path, "add"), _stored(tmp_path, "forty_two")
    Cache(tmp_path).put(other, {**FILES, "kernel.bin": b"forty-two"}, METADATA)
    (_path(tmp_path, key) / "kernel.bin").write_bytes(b"forty-two")
    manifest = _manifest(tmp_path, key)
    manifest["files"]["kernel.bin"] = _manifest(tmp_path, other)["files"]["kernel.bin"]
    _rewrite_manifest(tmp_path, key, manifest)
    _assert_rebuilt(tmp_path, key)

    shutil.rmtree(_path(tmp_path, key))
    shutil.copytree(_path(tmp_path, other), _path(tmp_path, key))
    _rewrite_manifest(tmp_path, key, {**_manifest(tmp_path, other), "key": key})
    _assert_rebuilt(tmp_path, key)


def test_a_readers_own_check_makes_a_miss(tmp_path):
    key = _stored(tmp_path)
    assert Cache(tmp_path).get(key, validate=lambda entry: entry.metadata["entry"]) is not None
    assert Cache(tmp_path).get(key, validate=lambda entry: entry.metadata["sites"]) is None
    assert not _path(tmp_path, key).exists()
    key = _stored(tmp_path)
    store = Cache(tmp_path)
    store.discard(key)
    assert not _path(tmp_path, key).exists() and store.get(key) is None


def test_artifact_names_are_checked(tmp_path):
    for bad in ("", "manifest.json", "../x", ".hidden", "a\\b"):
        with pytest.raises(ValueError):
            Cache(tmp_path).put(cache_key({"bad": bad}), {bad: b"x"})


def test_keys_change_with_the_parts_and_with_naiad_source(monkeypatch):
    a = cache_key({"kernel": "add", "num_warps": 4})
    assert a == cache_key({"num_warps": 4, "kernel": "add"})  # order does not matter
    assert a != cache_key({"kernel": "add", "num_warps": 8})
    monkeypatch.setattr(cache_module, "naiad_source_hash", lambda: "edited")
    assert a != cache_key({"kernel": "add", "num_warps": 4})


def _writer(directory, key, payload, results):
    store = Cache(directory)
    store.put(key, {"kernel.bin": payload})
    results.put(Cache(directory).get(key).files["kernel.bin"])


def test_concurrent_writers_of_one_key_all_succeed(tmp_path):
    key = cache_key({"kernel": "raced"})
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    payloads = [bytes([i]) * 4096 for i in range(6)]
    workers = [context.Process(target=_writer, args=(tmp_path, key, p, results)) for p in payloads]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=60)
        assert w.exitcode == 0
    seen = {results.get(timeout=10) for _ in workers}
    stored = Cache(tmp_path).get(key).files["kernel.bin"]
    assert stored in payloads and len(seen) <= len(payloads)
    leftovers = [p for p in (tmp_path / key[:2]).iterdir() if p.name.startswith(".")]
    assert leftovers == []


# --- a disk that cannot be written, or that others could write: memory only, warned once ---


def _no_space(path, data):
    raise OSError(errno.ENOSPC, "No space left on device", str(path))


def _put_twice(root) -> list[warnings.WarningMessage]:
    """Two puts and gets in `root`: both entries served from memory; the warnings raised."""
    store = Cache(root)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for name in ("first", "second"):
            key = cache_key({"kernel": name})
            assert store.put(key, FILES, METADATA).files == FILES
            assert store.get(key).metadata == METADATA
    return caught


def _assert_warned_once(caught, root, reason) -> None:
    assert [w.category for w in caught] == [RuntimeWarning], [str(w.message) for w in caught]
    message = str(caught[0].message)
    assert str(root) in message and reason in message and "in memory only" in message


def test_a_full_disk_warns_once_and_keeps_entries_in_memory(tmp_path, monkeypatch):
    monkeypatch.setattr(cache_store, "_write_file", _no_space)
    _assert_warned_once(_put_twice(tmp_path), tmp_path, "No space left on device")
    assert list(tmp_path.glob("*/*")) == []  # no staging directory left behind


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through any mode")
def test_a_read_only_directory_warns_once(tmp_path):
    tmp_path.chmod(0o500)
    try:
        _assert_warned_once(_put_twice(tmp_path), tmp_path, "Permission denied")
    finally:
        tmp_path.chmod(0o700)


def test_a_path_that_is_a_file_warns_once(tmp_path):
    (tmp_path / "file").write_text("not a directory")
    _assert_warned_once(_put_twice(tmp_path / "file"), tmp_path / "file", "not a directory")
    assert (tmp_path / "file").read_text() == "not a directory"


def test_a_directory_of_another_user_is_refused_and_left_alone(tmp_path, monkeypatch):
    key = _stored(tmp_path, "first")
    before = sorted(p.name for p in tmp_path.rglob("*"))
    monkeypatch.setattr(cache_store, "_my_uid", lambda: os.geteuid() + 1)
    _assert_warned_once(_put_twice(tmp_path), tmp_path, f"owned by uid {os.geteuid()}")
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # nothing read, written, deleted
    assert _manifest(tmp_path, key)["key"] == key


@pytest.mark.parametrize("where", ["directory", "shard", "entry", "file"])
def test_what_group_or_others_can_write_is_refused_and_left_alone(tmp_path, where):
    key = _stored(tmp_path, "first")
    path = {
        "directory": tmp_path,
        "shard": _path(tmp_path, key).parent,
        "entry": _path(tmp_path, key),
        "file": _path(tmp_path, key) / "kernel.bin",
    }[where]
    path.chmod(0o666 if where == "file" else 0o777)
    _assert_warned_once(_put_twice(tmp_path), path, "writable by group or others")
    assert (_path(tmp_path, key) / "kernel.bin").read_bytes() == FILES["kernel.bin"]
    assert len(list(tmp_path.glob("*/*"))) == 1  # the second entry stayed in memory


# --- size limits ---


def test_the_memory_level_keeps_the_most_recently_used_bytes(tmp_path):
    size = sum(map(len, FILES.values()))
    store = Cache(tmp_path, memory_limit=3 * size)
    keys = [cache_key({"kernel": i}) for i in range(5)]
    for key in keys[:3]:
        store.put(key, FILES)
    store.get(keys[0])  # used: now the most recent
    for key in keys[3:]:
        store.put(key, FILES)
    assert list(store._memory) == [keys[0], keys[3], keys[4]]
    assert store._memory_bytes == 3 * size
    shutil.rmtree(tmp_path)  # what memory dropped is read from disk again: gone now
    assert store.get(keys[1]) is None and store.get(keys[4]).files == FILES


def _entry_bytes(root, key) -> int:
    return sum(p.stat().st_size for p in _path(root, key).iterdir())


def test_the_disk_keeps_the_most_recently_used_entries_under_the_limit(tmp_path, monkeypatch):
    keys = [cache_key({"kernel": i}) for i in range(6)]
    for age, key in enumerate(keys[:4]):
        Cache(tmp_path).put(key, FILES, METADATA)
        os.utime(_path(tmp_path, key), (1000 + age, 1000 + age))  # keys[0] the oldest
    size = _entry_bytes(tmp_path, keys[0])
    Cache(tmp_path).get(keys[0])  # used: now the most recent
    writing = tmp_path / keys[1][:2] / ".tmp-1-writing"  # another process's entry in the making
    writing.mkdir()
    (writing / "kernel.bin").write_bytes(FILES["kernel.bin"])
    stale = tmp_path / keys[2][:2] / ".tmp-2-dead"  # left by a process that died writing
    stale.mkdir()
    os.utime(stale, (1000, 1000))
    store = Cache(tmp_path)
    with knobs.override(NAIAD_CACHE_MAX_SIZE=str(7 * size // 2)):
        store.put(keys[4], FILES, METADATA)  # 5 entries: past the limit, down to 90% of it
    assert {key for key in keys if _path(tmp_path, key).exists()} == {keys[0], keys[3], keys[4]}
    assert writing.exists() and not stale.exists()
    assert store._directories[tmp_path].estimate == 3 * size

    def scanned(root):
        raise AssertionError("scanned the directory while under the limit")

    monkeypatch.setattr(cache_store, "_scan", scanned)
    with knobs.override(NAIAD_CACHE_MAX_SIZE="1G"):
        store.put(keys[5], FILES, METADATA)  # under the limit: counted, not scanned
    written = sum(map(len, FILES.values())) + len(json.dumps(METADATA))
    assert store._directories[tmp_path].estimate == 3 * size + written
    assert _path(tmp_path, keys[5]).exists()


def _fill(directory, worker, results):
    with knobs.override(NAIAD_CACHE_MAX_SIZE="16K"):
        for i in range(40):
            key = cache_key({"worker": worker, "i": i % 25})
            store = Cache(directory)
            store.put(key, FILES)
            entry = Cache(directory).get(key)  # evicted by another process meanwhile: None
            assert entry is None or entry.files == FILES
    results.put(worker)


def test_processes_evicting_at_once_all_succeed(tmp_path):
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    workers = [context.Process(target=_fill, args=(tmp_path, w, results)) for w in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=120)
        assert w.exitcode == 0
    assert sorted(results.get(timeout=10) for _ in workers) == [0, 1, 2, 3]
    # Each process scans when its own count passes the limit, so together they may overshoot
    # it by what each wrote since its last scan; the next writer's scan brings it under.
    assert 0 < _disk_bytes(tmp_path) <= 2 * (16 << 10)
    with knobs.override(NAIAD_CACHE_MAX_SIZE="16K"):
        Cache(tmp_path).put(cache_key({"worker": "last"}), FILES)
    assert 0 < _disk_bytes(tmp_path) <= 16 << 10
    entries = [p for p in tmp_path.glob("*/*") if not p.name.startswith(".")]
    assert all(Cache(tmp_path).get(p.name).files == FILES for p in entries)
    assert [p for p in tmp_path.glob("*/.*")] == []


def _disk_bytes(root) -> int:
    entries = [p for p in root.glob("*/*") if not p.name.startswith(".")]
    return sum(_entry_bytes(root, p.name) for p in entries)
