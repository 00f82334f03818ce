"""A loop marked `disable_licm` (`tl.range(..., disable_licm=True)`, `tl.condition(...,
disable_licm=True)`) keeps LLVM's loop-invariant code motion out on the CPU too: the back edge
of that loop carries `llvm.licm.disable` loop metadata in the optimized LLVM IR
(`asm["llir"]`), as on the GPU and in Triton, and no other loop does (codegen/lower_control.py).
The hint changes no value: each kernel, a loop over rows that also reads a loop-invariant
scale, runs compiled on seeded random data against a float64 NumPy reference.
"""

import re

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs


@pytest.fixture(autouse=True)
def compiled():
    with knobs.override(NAIAD_BACKEND="cpu"):
        yield


@naiad.jit
def scaled_row_sums(x, scale, out, n, WHILE: tl.constexpr, HINT: tl.constexpr):
    """out[:] = Σ_i x[i, :] * scale[0], the scale read again in every iteration."""
    offsets = tl.arange(0, 64)
    total = tl.zeros([64], tl.float32)
    if WHILE:
        i = 0
        while tl.condition(i < n, disable_licm=HINT):
            total += tl.load(x + i * 64 + offsets) * tl.load(scale)
            i += 1
    else:
        for i in tl.range(0, n, disable_licm=HINT):
            total += tl.load(x + i * 64 + offsets) * tl.load(scale)
    tl.store(out + offsets, total)


def _loop_ids_disabling_licm(llir: str) -> set[str]:
    """The loop IDs on back edges (`br ..., !llvm.loop !N`) whose node names
    `llvm.licm.disable`."""
    nodes = dict(re.findall(r"^(![0-9]+) = (?:distinct )?!\{(.*)\}$", llir, re.MULTILINE))
    disable = {name for name, body in nodes.items() if body == '!"llvm.licm.disable"'}
    on_branches = re.findall(r"^\s+br .*!llvm\.loop (![0-9]+)", llir, re.MULTILINE)
    return {i for i in on_branches if disable & set(re.findall(r"![0-9]+", nodes.get(i, "")))}


@pytest.mark.parametrize("use_while", [False, True])
@pytest.mark.parametrize("hint", [False, True])
def test_disable_licm_marks_the_back_edge(use_while, hint):
    rng = np.random.default_rng(16 + 2 * use_while + hint)
    rows = 7
    x = rng.standard_normal(rows * 64).astype(np.float32)
    scale = rng.uniform(0.5, 2.0, 1).astype(np.float32)
    out = np.zeros(64, np.float32)
    compiled = scaled_row_sums.warmup(x, scale, out, rows, WHILE=use_while, HINT=hint, grid=(1,))
    llir = compiled.asm["llir"]
    assert ("llvm.licm.disable" in llir) == hint
    assert bool(_loop_ids_disabling_licm(llir)) == hint
    scaled_row_sums[(1,)](x, scale, out, rows, WHILE=use_while, HINT=hint)
    expected = (x.reshape(rows, 64).astype(np.float64) * np.float64(scale[0])).sum(0)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
