"""What a new process reads from the disk cache instead of recomputing (issue 18): the hash of
Naiad's source (runtime/cache.py: remembered under the files' names, sizes, inodes and times),
LLVM's facts of the host (backends/cpu/host_facts.py), the CPU runtime's own object code
(runtime/cpu_objects.py: the runtime library and the worker pool) and a kernel's TTIR
(runtime/ttir_cache.py), which is built again when a file it came from or a global it read
changes. Each is checked against the value computed from scratch, in fresh processes sharing
one cache directory, and every kernel's output against NumPy; a process that finds them all
links the cached kernel without importing llvmlite's binding (elf_linker.py)."""

import hashlib
import json
import os
import pathlib
import subprocess
import sys

import numpy as np

import naiad
from naiad.backends.cpu import host_facts

PROBE = """
import json, sys
import numpy as np
import naiad, naiad.language as tl
from naiad import knobs
from naiad.runtime import cache

@naiad.jit
def axpy(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, 2.5 * x + tl.load(y_ptr + offs, mask=mask), mask=mask)

rng = np.random.default_rng(int(sys.argv[1]))
x, y = rng.standard_normal((2, 500), dtype=np.float32)
out = np.full(500, np.nan, np.float32)
with knobs.override(NAIAD_BACKEND="cpu"):
    axpy[(4,)](x, y, out, 500, BLOCK=128)
np.testing.assert_allclose(out, np.float32(2.5) * x + y, rtol=1e-6)
from naiad.backends.cpu import host_facts
print(json.dumps({
    "hash": cache.naiad_source_hash(),
    "facts": host_facts.facts(),
    "llvm imported": "llvmlite.binding" in sys.modules,
}))
"""


def _full_source_hash() -> str:
    root = pathlib.Path(naiad.__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _probe(cache_dir: pathlib.Path, seed: int) -> dict:
    env = {**os.environ, "NAIAD_CACHE_DIR": str(cache_dir)}
    script = cache_dir.parent / "probe.py"  # a file: kernels need their source
    script.write_text(PROBE)
    done = subprocess.run(
        [sys.executable, str(script), str(seed)], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def _entries(cache_dir: pathlib.Path) -> set[str]:
    return {path.name for path in cache_dir.glob("*/*") if not path.name.startswith(".")}


def test_a_new_process_reads_what_the_first_one_stored(tmp_path):
    cache_dir = tmp_path / "cache"
    first = _probe(cache_dir, seed=1)
    stored = _entries(cache_dir)
    # The kernel, its TTIR, the runtime library, the worker pool, the source hash and LLVM's
    # facts of the host.
    kinds = sorted(name[:-64] for name in stored)  # the keys' prefixes
    expected = ["", "llvm-host-", "naiad-source-", "runtime-object-", "runtime-object-", "ttir-"]
    assert kinds == expected, kinds
    second = _probe(cache_dir, seed=2)
    assert _entries(cache_dir) == stored  # nothing new: every one of them was read
    assert first["hash"] == second["hash"] == _full_source_hash()
    assert first["facts"] == second["facts"] == host_facts.ask_llvm()
    assert first["llvm imported"] and not second["llvm imported"]


HELPERS = """
import naiad
import naiad.language as tl


@naiad.jit
def scaled(x):
    return x * FACTOR
"""

KERNEL = """
import json, os, sys
import numpy as np
import naiad, naiad.language as tl
from naiad import knobs
import helpers

SHIFT = tl.constexpr(float(os.environ["SHIFT"]))


@naiad.jit
def shifted(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, helpers.scaled(tl.load(x_ptr + offs, mask=mask)) + SHIFT, mask=mask)


x = np.random.default_rng(int(sys.argv[1])).standard_normal(300, dtype=np.float32)
out = np.full(300, np.nan, np.float32)
with knobs.override(NAIAD_BACKEND="cpu", NAIAD_PROFILE_COMPILE="1"):
    shifted[(3,)](x, out, 300, BLOCK=128)
print(json.dumps({"x": x.tolist(), "out": out.tolist()}))
"""


def _run_kernel(folder: pathlib.Path, factor: float, shift: float, seed: int) -> bool:
    """Run KERNEL in a fresh process; check its output; whether it built the TTIR itself."""
    for name, text in (
        ("helpers.py", HELPERS.replace("FACTOR", repr(factor))),
        ("kernel.py", KERNEL),
    ):
        path = folder / name
        if not path.exists() or path.read_text() != text:  # (writing it again is an edit)
            path.write_text(text)
    env = {**os.environ, "NAIAD_CACHE_DIR": str(folder / "cache"), "SHIFT": repr(shift)}
    env["PYTHONPATH"] = os.pathsep.join([str(folder), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, str(folder / "kernel.py"), str(seed)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    x = np.array(result["x"], np.float32)
    expected = x * np.float32(factor) + np.float32(shift)
    np.testing.assert_allclose(np.array(result["out"], np.float32), expected, rtol=1e-6)
    assert "compile profile of `shifted`" in done.stderr
    return "AST → TTIR" in done.stderr


def test_the_ttir_is_read_until_what_made_it_changes(tmp_path):
    assert _run_kernel(tmp_path, factor=3.0, shift=0.5, seed=1)  # built
    assert not _run_kernel(tmp_path, factor=3.0, shift=0.5, seed=2)  # read
    # An edit of a helper module the kernel reaches as `helpers.scaled` (not a global of its
    # own, so not in the key): its file changed, the TTIR is built again.
    assert _run_kernel(tmp_path, factor=-2.0, shift=0.5, seed=3)
    assert not _run_kernel(tmp_path, factor=-2.0, shift=0.5, seed=4)
    # A global constexpr of another value, no file edited: built again.
    assert _run_kernel(tmp_path, factor=-2.0, shift=4.25, seed=5)


def _scaled_by(scale):
    """A kernel made by a factory: kernels of every scale share their source and location."""

    @naiad.jit
    def scaled(x_ptr, out_ptr, n, BLOCK: naiad.language.constexpr):
        offs = naiad.language.program_id(0) * BLOCK + naiad.language.arange(0, BLOCK)
        mask = offs < n
        x = naiad.language.load(x_ptr + offs, mask=mask)
        naiad.language.store(out_ptr + offs, x * scale, mask=mask)

    return scaled


def test_kernels_of_one_factory_keep_their_own_closure_values(fresh_cache):
    """Two kernels one factory made, differing only in a closure value, each compile with their
    own value: the TTIR stage's key holds the closures (a kernel reading the other's TTIR gave
    the first one's results silently)."""
    from naiad import knobs
    from naiad.runtime import ttir_cache

    x = np.random.default_rng(12).standard_normal(300).astype(np.float32)
    with knobs.override(NAIAD_BACKEND="cpu", NAIAD_CPU_TIERING="off"):
        for scale in (2.0, 3.0, -0.5, 2.0):
            out = np.full_like(x, np.nan)
            _scaled_by(scale)[(3,)](x, out, x.size, BLOCK=128)
            np.testing.assert_array_equal(out, x * np.float32(scale))
    assert ttir_cache._closures(_scaled_by(2.0)) == [["_scaled_by.<locals>.scaled", "scale",
                                                     "float 2.0"]]  # fmt: skip
    assert ttir_cache._closures(_scaled_by(object())) is None  # not kept: no fingerprint
