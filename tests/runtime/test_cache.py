"""The compile cache: hits, misses, damaged entries, concurrent writers, keys."""

import json
import multiprocessing

import pytest

from naiad import knobs
from naiad.runtime import cache as cache_module
from naiad.runtime.cache import Cache, cache_key

FILES = {"kernel.ttir": b"module {}\n", "kernel.bin": bytes(range(256)) * 3}


def test_put_then_get_from_memory_and_from_disk(tmp_path):
    store = Cache(tmp_path)
    key = cache_key({"kernel": "add", "n": 1})
    assert store.get(key) is None
    store.put(key, FILES, {"name": "add", "num_warps": 4})
    assert store.get(key).files == FILES
    fresh = Cache(tmp_path)  # another process: only the disk level
    entry = fresh.get(key)
    assert entry.files == FILES and entry.metadata == {"name": "add", "num_warps": 4}


def test_cache_dir_knob(tmp_path):
    with knobs.override(NAIAD_CACHE_DIR=str(tmp_path / "here")):
        assert Cache().directory == tmp_path / "here"


@pytest.mark.parametrize("damage", ["truncate", "drop_manifest", "drop_file", "bad_json"])
def test_a_damaged_entry_is_a_miss_and_is_deleted(tmp_path, damage):
    key = cache_key({"kernel": damage})
    Cache(tmp_path).put(key, FILES)
    path = tmp_path / key[:2] / key
    if damage == "truncate":
        (path / "kernel.bin").write_bytes(b"\x00")
    elif damage == "drop_manifest":
        (path / "manifest.json").unlink()
    elif damage == "drop_file":
        (path / "kernel.ttir").unlink()
    else:
        (path / "manifest.json").write_text("{not json")
    assert Cache(tmp_path).get(key) is None
    assert not path.exists()
    Cache(tmp_path).put(key, FILES)  # rebuilt
    assert Cache(tmp_path).get(key).files == FILES


def test_manifest_records_sizes_and_hashes(tmp_path):
    key = cache_key({"kernel": "manifest"})
    Cache(tmp_path).put(key, FILES, {"shared": 0})
    manifest = json.loads((tmp_path / key[:2] / key / "manifest.json").read_text())
    assert manifest["key"] == key and manifest["metadata"] == {"shared": 0}
    assert manifest["files"]["kernel.ttir"]["size"] == len(FILES["kernel.ttir"])


def test_artifact_names_are_checked(tmp_path):
    for bad in ("", "manifest.json", "../x", ".hidden"):
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
    leftovers = [p for p in (tmp_path / key[:2]).iterdir() if p.name.startswith(".tmp-")]
    assert leftovers == []
