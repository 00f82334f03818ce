"""The CUDA stages on disk, without a GPU: `kernel.warmup(target="cuda:...")` compiles once, a
new process (or one whose memory level is cleared) gets the same TTGIR, LLVM IR, PTX, cubin and
metadata without lowering, running LLVM or linking; every input of the key is honoured; a damaged
entry is rebuilt. Also `tl.extra.cuda.num_warps()`, which reads the launch's warps."""

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

import naiad
import naiad.language as tl
from naiad.backends.nvidia import compiler as nv_compiler
from naiad.backends.nvidia import link, ptx
from naiad.language.extra import cuda
from naiad.runtime import compiler

pytestmark = pytest.mark.usefixtures("fresh_cache")

TARGET = "cuda:sm_90a"
has_linker = link.linker_version() is not None


@naiad.jit
def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * factor, mask=mask)


@naiad.jit
def warps_kernel(out_ptr):
    tl.store(out_ptr + tl.arange(0, 2), tl.arange(0, 2) * cuda.num_threads() + cuda.num_warps())


def _warmup(**options):
    return scale_kernel.warmup(
        "*fp32", "*fp32", 4096, 1.5, grid=(16,), BLOCK=256, target=TARGET, **options
    )


def _forbid_compiling(monkeypatch):
    """Make every stage after TTIR an error: what the cache must make unnecessary."""

    def forbidden(*args, **kwargs):
        raise AssertionError("compiled again instead of loading the cache entry")

    monkeypatch.setattr(nv_compiler, "compile_module", forbidden)
    monkeypatch.setattr(ptx, "compile_ptx", forbidden)
    monkeypatch.setattr(link, "link", forbidden)


def _entries(directory: pathlib.Path) -> list[pathlib.Path]:
    """The compiled kernels' entries (hexadecimal keys; not the TTIR's `ttir-…` beside them)."""
    found = directory.glob("*/*")
    return sorted(p for p in found if (p / "manifest.json").is_file() and "-" not in p.name)


def test_second_compile_comes_from_disk(monkeypatch, fresh_cache):
    first = _warmup()
    compiler.disk_cache().clear_memory()  # as a new process: nothing in memory
    _forbid_compiling(monkeypatch)
    second = _warmup()
    for stage in ("ttgir", "llir", "ptx") + (("cubin",) if has_linker else ()):
        assert second.asm[stage] == first.asm[stage], stage
    assert dict(second.metadata) == dict(first.metadata)
    assert second.metadata.signature == {
        "x_ptr": "*fp32",
        "out_ptr": "*fp32",
        "n": "i32",
        "factor": "fp32",
        "BLOCK": "constexpr",
    }
    assert second.metadata.num_warps == 4 and second.metadata.shared == first.metadata.shared
    (entry,) = _entries(fresh_cache)
    manifest = json.loads((entry / "manifest.json").read_text())
    assert manifest["metadata"]["kernel"]["name"] == "scale_kernel"
    if has_linker:
        assert second.asm["cubin"][:4] == b"\x7fELF"
        assert second.n_regs > 0 and second.n_spills == 0


@pytest.mark.parametrize(
    "change", [{"num_warps": 8}, {"maxnreg": 64}, {"debug": True}, {"target": "cuda:sm_80"}]
)
def test_each_input_of_the_key_makes_its_own_entry(change, fresh_cache):
    _warmup()
    target = change.pop("target", TARGET)
    scale_kernel.warmup("*fp32", "*fp32", 4096, 1.5, grid=(16,), BLOCK=256, target=target, **change)
    assert len(_entries(fresh_cache)) == 2


def test_other_specialization_other_entry(fresh_cache):
    _warmup()
    scale_kernel.warmup("*fp32", "*fp32", 4095, 1.5, grid=(16,), BLOCK=256, target=TARGET)
    assert len(_entries(fresh_cache)) == 2


@pytest.mark.skipif(not has_linker, reason="no nvJitLink nor driver: no cubin to damage")
def test_damaged_entry_is_rebuilt(fresh_cache):
    first = _warmup()
    (entry,) = _entries(fresh_cache)
    cubin = entry / "cubin"
    cubin.write_bytes(cubin.read_bytes()[:-7])
    compiler.disk_cache().clear_memory()
    second = _warmup()
    assert second.asm["cubin"] == first.asm["cubin"]
    assert (entry / "cubin").read_bytes() == first.asm["cubin"]


def test_new_process_compiles_nothing_after_ttir(fresh_cache, tmp_path):
    """A second interpreter finds the entry the first wrote; every stage after TTIR raises."""
    script = tmp_path / "warm.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import sys
            sys.path.insert(0, {str(pathlib.Path(__file__).parent)!r})
            import test_cuda_cache as t
            from naiad.backends.nvidia import compiler, link, ptx
            if sys.argv[1] == "cached":
                def forbidden(*args, **kwargs):
                    raise AssertionError("compiled again")
                compiler.compile_module = ptx.compile_ptx = link.link = forbidden
            kernel = t._warmup()
            print(len(kernel.asm["ptx"]), kernel.metadata.get("n_regs"))
            """
        )
    )
    env = {**os.environ, "NAIAD_CACHE_DIR": str(fresh_cache)}
    runs = [
        subprocess.run([sys.executable, str(script), mode], capture_output=True, text=True, env=env)
        for mode in ("fresh", "cached")
    ]
    for done in runs:
        assert done.returncode == 0, done.stderr[-2000:]
    assert runs[0].stdout == runs[1].stdout


@pytest.mark.parametrize("warps", [1, 2, 4, 8])
def test_num_warps_is_the_launchs(warps):
    kernel = warps_kernel.warmup("*i32", grid=(1,), num_warps=warps, target=TARGET)
    # arange(0, 2) * num_threads + num_warps: both are constants of the TTIR
    assert f"arith.constant dense<{32 * warps}> : tensor<2xi32>" in kernel.asm["ttir"]
    assert f"arith.constant dense<{warps}> : tensor<2xi32>" in kernel.asm["ttir"]
    assert f'"ttg.num-warps" = {warps}' in kernel.asm["ttgir"]
    assert f".reqntid {32 * warps}" in kernel.asm["ptx"]
