"""The compile cache keys NVIDIA kernels by `num_stages`: kernels differing only in it (as an
autotuner's configurations do) are different code, so the second compiled must not be read
back as the first (it was: the pipeliner's depth was missing from the cache facts)."""

import pytest
from test_dot_lowering import ROOT, _load

from naiad.backends.nvidia import link

pytestmark = pytest.mark.skipif(link.linker_version() is None, reason="nvJitLink is not installed")


def _copies(stages: int) -> int:
    """The tutorial matmul compiled for sm_90a with `stages`: its PTX's cp.async copies."""
    tutorial = _load(ROOT / "examples" / "03_matmul.py", "stages_cache_key")
    compiled = tutorial.matmul_kernel.fn.warmup(
        *("*fp16", "*fp16", "*fp16"),
        *(512, 512, 512, 512, 1, 512, 1, 512, 1),
        BLOCK_SIZE_M=64,
        BLOCK_SIZE_N=64,
        BLOCK_SIZE_K=32,
        GROUP_SIZE_M=8,
        ACTIVATION="",
        num_warps=4,
        num_stages=stages,
        grid=(1,),
        target="cuda:sm_90a",
    )
    return compiled.asm["ptx"].count("cp.async.cg.shared.global")


def test_kernels_differing_in_stages_are_cached_apart(tmp_path, monkeypatch):
    monkeypatch.setenv("NAIAD_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("NAIAD_ALWAYS_COMPILE", raising=False)
    pipelined = _copies(3)
    assert pipelined > 0
    assert _copies(1) == 0  # read back as the 3-stage kernel before
    assert _copies(3) == pipelined  # and each is found again
