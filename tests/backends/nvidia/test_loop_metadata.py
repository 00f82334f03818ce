"""A loop marked `disable_licm` (`tl.range(..., disable_licm=True)`, `tl.condition(...,
disable_licm=True)`) carries LLVM's `llvm.licm.disable` loop metadata on its back edge in the
GPU's LLVM IR, as Triton's does, and no other loop does; ptxas assembles the kernels, and the
hint changes no value (checked on the CPU against NumPy)."""

import numpy as np
import pytest
from test_toolchain import assemble, needs_ptxas

import naiad
import naiad.language as tl


@naiad.jit
def _sums(x, out, n, WHILE: tl.constexpr, HINT: tl.constexpr):
    offsets = tl.arange(0, 64)
    total = tl.zeros([64], tl.float32)
    if WHILE:
        i = 0
        while tl.condition(i < n, disable_licm=HINT):
            total += tl.load(x + i * 64 + offsets)
            i += 1
    else:
        for i in tl.range(0, n, disable_licm=HINT):
            total += tl.load(x + i * 64 + offsets)
    tl.store(out + offsets, total)


@needs_ptxas
@pytest.mark.parametrize("use_while", [False, True])
@pytest.mark.parametrize("hint", [False, True])
def test_disable_licm_is_loop_metadata(use_while, hint, tmp_path):
    x, out = np.zeros(5 * 64, np.float32), np.zeros(64, np.float32)
    compiled = _sums.warmup(x, out, 5, WHILE=use_while, HINT=hint, grid=(1,), target="cuda:sm_90a")
    llir = compiled.asm["llir"]
    assert ("llvm.licm.disable" in llir) == hint
    assemble(compiled.asm["ptx"], "sm_90a", tmp_path)


@pytest.mark.parametrize("use_while", [False, True])
def test_disable_licm_changes_no_value(use_while):
    x = np.random.default_rng(3).standard_normal(5 * 64).astype(np.float32)
    out = np.zeros(64, np.float32)
    _sums[(1,)](x, out, 5, WHILE=use_while, HINT=True)
    np.testing.assert_allclose(out, x.reshape(5, 64).astype(np.float64).sum(0), rtol=1e-6)
