"""The compile cache under real kernels (@naiad.jit, compiled for the CPU, on NumPy arrays):
whatever a cache entry holds — damaged, malformed, tampered with, another kernel's — a launch
computes the right values and the entry is rebuilt; and a cache directory that cannot be used
costs one warning, never a launch. Loading a damaged entry could crash the process, so those
launches run in a subprocess (cache_launches.py); test_cache.py tests the Cache itself."""

import dataclasses
import json
import os
import pathlib
import shutil
import subprocess
import sys
import warnings

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.runtime import cache_store
from naiad.runtime.cache import Cache

SCRIPT = pathlib.Path(__file__).with_name("cache_launches.py")
OBJECT = "obj"  # the CPU back end's object code, named after its stage


def _manifest(entry: pathlib.Path) -> dict:
    return json.loads((entry / "manifest.json").read_text())


def _write_manifest(entry: pathlib.Path, manifest: dict) -> None:
    (entry / "manifest.json").write_text(json.dumps(manifest))


def _edit_metadata(entry, **changes):
    manifest = _manifest(entry)
    manifest["metadata"]["kernel"].update(changes)
    _write_manifest(entry, manifest)


def _fewer_scratch_bytes(entry, other):
    _edit_metadata(entry, scratch_bytes=8)


def _nothing_written(entry, other):
    _edit_metadata(entry, written=[])


def _wrong_shape(entry, other):
    manifest = _manifest(entry)
    manifest["files"] = [{"name": name, **facts} for name, facts in manifest["files"].items()]
    _write_manifest(entry, manifest)


def _missing_key(entry, other):
    manifest = _manifest(entry)
    del manifest["metadata"]["kernel"]["entry"]
    _write_manifest(entry, manifest)


def _other_object(entry, other):
    """forty_two's object code under add's entry, the file facts made to match it."""
    shutil.copyfile(other / OBJECT, entry / OBJECT)
    manifest = _manifest(entry)
    manifest["files"][OBJECT] = _manifest(other)["files"][OBJECT]
    _write_manifest(entry, manifest)


def _other_entry(entry, other):
    """forty_two's whole entry moved under add's key, its key field edited."""
    shutil.rmtree(entry)
    shutil.copytree(other, entry)
    _write_manifest(entry, {**_manifest(other), "key": entry.name})


def _truncated(entry, other):
    data = (entry / OBJECT).read_bytes()
    (entry / OBJECT).write_bytes(data[: len(data) // 2])


# Each damage on its own specialization of `add` (its BLOCK), so that one process runs them all.
DAMAGES = {
    "a manifest of the wrong shape": (16, _wrong_shape),
    "metadata missing a key": (32, _missing_key),
    "scratch bytes edited (a heap overrun)": (64, _fewer_scratch_bytes),
    "no argument written (read-only arrays pass)": (128, _nothing_written),
    "another kernel's object code": (256, _other_object),
    "another kernel's entry": (512, _other_entry),
    "a truncated object": (1024, _truncated),
}


def _launch_in_subprocess(cache_dir: pathlib.Path, specs: list[str]) -> dict:
    env = {**os.environ, "NAIAD_CACHE_DIR": str(cache_dir)}
    # A fixed source hash: the keys of both runs stay the same while the checkout changes.
    command = [sys.executable, str(SCRIPT), "pinned-by-test_cache_kernels", *specs]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, f"exit status {done.returncode}\n{done.stderr[-3000:]}"
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def damaged_launches(tmp_path_factory):
    """Compile every case's `add` and `forty_two` into a cache; damage each case's entry;
    launch them all again in a fresh process. Returns (cache, the entries, the launches)."""
    cache_dir = tmp_path_factory.mktemp("damaged") / "cache"
    specs = [f"add:{block}" for block, _ in DAMAGES.values()]
    first = _launch_in_subprocess(cache_dir, [*specs, "forty_two:16"])
    entries = {spec: cache_dir / key[:2] / key for spec, run in first.items() for key in run["new"]}
    assert len(entries) == len(first), "each launch compiles one entry"
    for block, damage in DAMAGES.values():
        damage(entries[f"add:{block}"], entries["forty_two:16"])
    return cache_dir, entries, _launch_in_subprocess(cache_dir, specs)


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_entry_is_rebuilt_and_computes_the_right_values(damaged_launches, damage):
    cache_dir, entries, launches = damaged_launches
    spec = f"add:{DAMAGES[damage][0]}"
    run = launches[spec]
    x, y, out = (np.array(run[name], np.float32) for name in ("x", "y", "out"))
    np.testing.assert_array_equal(out, x + y)
    assert run["new"] == []  # rebuilt under the same key, not elsewhere
    entry = entries[spec]
    rebuilt = Cache(cache_dir).get(entry.name)
    assert rebuilt is not None and rebuilt.metadata["kernel"]["entry"] == "add"
    assert rebuilt.files[OBJECT] != (entries["forty_two:16"] / OBJECT).read_bytes()
    kernel = rebuilt.metadata["kernel"]
    assert kernel["written"] == ["out_ptr"] and kernel["scratch_bytes"] > 8


@naiad.jit
def scale(x_ptr, out_ptr, n, SCALE: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * SCALE, mask=mask)


def _no_space(path, data):
    raise OSError(28, "No space left on device", str(path))


def _another_user(monkeypatch):
    monkeypatch.setattr(cache_store, "_my_uid", lambda: os.geteuid() + 1)


# How a cache directory is unusable, the words the warning gives, and the SCALE of that case's
# two specializations: a new one for each case, so that each launch compiles.
UNUSABLE = {
    "a full disk": ("No space left on device", 3),
    "a path that is a file": ("is not a directory", 5),
    "another user's directory": ("owned by uid", 7),
}


@pytest.mark.parametrize("how", UNUSABLE)
def test_an_unusable_cache_warns_once_and_kernels_run(tmp_path, monkeypatch, how):
    reason, factor = UNUSABLE[how]
    directory = tmp_path / "cache"
    if how == "a full disk":
        monkeypatch.setattr(cache_store, "_write_file", _no_space)
    elif how == "a path that is a file":
        directory.write_text("not a directory")
    else:
        directory.mkdir()
        _another_user(monkeypatch)
    rng = np.random.default_rng(factor)
    settings = knobs.override(NAIAD_BACKEND="cpu", NAIAD_CACHE_DIR=str(directory))
    with settings, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for value in (factor, factor + 0.5):  # two compiles, two puts: one warning
            x = rng.standard_normal(300).astype(np.float32)
            out = np.full_like(x, np.nan)
            scale[(3,)](x, out, x.size, SCALE=value, BLOCK=128)
            np.testing.assert_array_equal(out, x * np.float32(value))
    messages = [str(w.message) for w in caught if w.category is RuntimeWarning]
    assert len(messages) == 1 and str(directory) in messages[0] and reason in messages[0]
    assert directory.is_file() or [p for p in directory.rglob("*") if not p.is_dir()] == []


def _triple(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) * 3)


def _marked(code):
    """A kernel's PTX with a comment at its end (the code a changed compiler would make)."""
    return dataclasses.replace(code, text=code.text + "// x")


def test_always_compile_gives_this_compiles_code_and_keeps_it(tmp_path, monkeypatch):
    """NAIAD_ALWAYS_COMPILE compiles again and returns what it compiled, never the entry an
    earlier compile of the same key left (a compiler changed without its source changing, as
    a pass patched here, would otherwise come back as before), and stores it over that entry."""
    from naiad.backends.nvidia import compiler as nvidia
    from naiad.runtime.compiler import disk_cache

    compile_ptx = nvidia.ptx.compile_ptx
    arguments, options = ("*fp32", "*fp32"), dict(BLOCK=64, grid=(1,), target="cuda:sm_90a")
    with knobs.override(NAIAD_CACHE_DIR=str(tmp_path)):
        with monkeypatch.context() as patched:
            patched.setattr(
                nvidia.ptx, "compile_ptx", lambda *a, **k: _marked(compile_ptx(*a, **k))
            )
            assert naiad.jit(_triple).warmup(*arguments, **options).asm["ptx"].endswith("// x")
        disk_cache().clear_memory()
        assert naiad.jit(_triple).warmup(*arguments, **options).asm["ptx"].endswith("// x")
        with knobs.override(NAIAD_ALWAYS_COMPILE="1"):
            again = naiad.jit(_triple).warmup(*arguments, **options)
        disk_cache().clear_memory()
        kept = naiad.jit(_triple).warmup(*arguments, **options)
    assert not again.asm["ptx"].endswith("// x") and kept.asm["ptx"] == again.asm["ptx"]
