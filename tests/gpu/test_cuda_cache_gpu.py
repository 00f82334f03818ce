"""The compile cache on the GPU (runtime/compiler.py): a new process launches a kernel that
another process compiled, or only warmed up for the device's target, without lowering, running
LLVM or linking; its results are right; and `tl.extra.cuda.num_warps()` is the launch's.

Each process is a script written to a file (a kernel's source must be readable).

Run on the GPU machine: `scripts/gpu-check OUTDIR` (or `python3 -m pytest tests/gpu -m gpu`).
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import naiad
import naiad.language as tl
from naiad.language.extra import cuda

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = """
    import sys
    import torch
    import naiad, naiad.language as tl
    from naiad.runtime.cuda_launcher import _arch

    @naiad.jit
    def scale(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.exp(tl.load(x_ptr + offs, mask=mask)) * factor, mask=mask)

    mode = sys.argv[1]
    if mode == "cached":  # every stage after TTIR is an error
        from naiad.backends.nvidia import compiler, link, ptx
        def forbidden(*args, **kwargs):
            raise AssertionError("compiled again instead of loading the cache entry")
        compiler.compile_module = ptx.compile_ptx = link.link = forbidden
    gen = torch.Generator(device="cuda").manual_seed(5)
    x = torch.randn(5000, device="cuda", generator=gen)
    out = torch.full_like(x, float("nan"))
    if mode == "warmup":  # compile ahead for this GPU's target, launch nothing
        scale.warmup(x, out, 5000, 0.75, grid=(20,), BLOCK=256, target=_arch(0))
        sys.exit(0)
    scale[(20,)](x, out, 5000, 0.75, BLOCK=256)
    torch.testing.assert_close(out, torch.exp(x) * 0.75)
    print("ok")
"""


def _run(script: Path, mode: str, cache: Path) -> None:
    env = {**os.environ, "NAIAD_BACKEND": "auto", "NAIAD_CACHE_DIR": str(cache)}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, str(script), mode], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.parametrize("first", ["launch", "warmup"])
def test_new_process_launches_the_cached_kernel(first, tmp_path):
    script = tmp_path / "scale_script.py"
    script.write_text(textwrap.dedent(_SCRIPT))
    _run(script, first, tmp_path / "cache")
    _run(script, "cached", tmp_path / "cache")


@naiad.jit
def warps_kernel(out_ptr):
    lanes = tl.arange(0, 2)
    tl.store(out_ptr + lanes, tl.where(lanes == 0, cuda.num_warps(), cuda.num_threads()))


@pytest.fixture
def compiled(monkeypatch):
    monkeypatch.setenv("NAIAD_BACKEND", "auto")


@pytest.mark.parametrize("warps", [1, 2, 8])
def test_num_warps_is_the_launchs(warps, compiled):
    out = torch.full((2,), -1, dtype=torch.int32, device="cuda")
    warps_kernel[(1,)](out, num_warps=warps)
    assert out.tolist() == [warps, 32 * warps]
