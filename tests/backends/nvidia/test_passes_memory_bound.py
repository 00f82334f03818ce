"""The PTX of the tutorials' memory-bound kernels, loop by loop, against what Triton 3.8 emits
for the same kernel and launch (layer norm forward f16, `BLOCK_SIZE` = next_pow2(N), 8 warps;
read from `triton.compile(...).asm['ptx']`): per iteration of each of the three passes over a
row, the same vector loads, one mask compare per vector rather than per element, no select
after a load with `other` (the `other` words are moved into the load's registers before it,
Triton's way), and the same conversions and arithmetic. No GPU here; values are checked on the
GPU by tests/gpu/test_memory_bound_gpu.py.
"""

import re
from collections import Counter

import numpy as np
import pytest
from test_lowering_kernels import example

import naiad
import naiad.language as tl

# Instructions per iteration of each loop over the row in Triton 3.8's PTX (sm_90, f16,
# N = BLOCK_SIZE, 8 warps): (vector loads, mask compares, selects, f16 -> f32 conversions).
TRITON_LOOPS = {
    1024: [(1, 2, 0, 8), (1, 2, 8, 8), (3, 2, 0, 24)],
    4096: [(2, 3, 0, 16), (2, 3, 16, 16), (6, 3, 0, 48)],
    8192: [(4, 5, 0, 32), (4, 5, 32, 32), (12, 5, 0, 96)],
}


def loops(ptx: str) -> list[Counter]:
    """Per loop of the PTX (a label and the branch back to it), its instructions by name."""
    found, counts, label = [], None, None
    for line in ptx.splitlines():
        start = re.match(r"^(\$L__BB\d+_\d+):", line)
        if start:
            label, counts = start.group(1), Counter()
            continue
        if counts is None:
            continue
        text = re.sub(r"^@%p\d+\s+", "", line.strip())
        if text and not text.startswith(("//", ".loc", "{", "}")):
            counts[text.split()[0].rstrip(";")] += 1
        if re.search(rf"bra\s+{re.escape(label)};", line):
            found.append(counts)
            counts = None
    return found


def layer_norm_ptx(n: int) -> str:
    kernel = example("05_layer_norm")._layer_norm_fwd_fused
    block = naiad.next_power_of_2(n)
    warps = min(max(block // 256, 1), 8)
    args = ("*fp16", "*fp16", "*fp16", "*fp16", "*fp32", "*fp32", n, n, 1e-5)
    compiled = kernel.warmup(
        *args, BLOCK_SIZE=block, num_warps=warps, grid=(1,), target="cuda:sm_90a"
    )
    return compiled.asm["ptx"]


@pytest.mark.parametrize("n", sorted(TRITON_LOOPS))
def test_layer_norm_loops_match_triton(n):
    found = loops(layer_norm_ptx(n))
    assert len(found) == 3
    for counts, (loads, compares, selects, converts) in zip(found, TRITON_LOOPS[n]):
        assert counts["ld.global.v4.b32"] == loads
        assert counts["setp.lt.s32"] == compares  # one per vector, and the loop's own
        assert counts["selp.f32"] == selects  # only the kernel's own tl.where
        assert counts["cvt.f32.f16"] == converts


@naiad.jit
def masked_other_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    fill = (offs % 7).to(tl.float32) - 2.5
    x = tl.load(x_ptr + offs, mask=offs < n, other=fill)
    tl.store(out_ptr + offs, x)


def test_other_fills_the_load_registers():
    """A tensor `other` reaches the masked-off words through the load's own registers: no
    select follows the load, and the LLVM IR moves the packed `other` in before it."""
    compiled = masked_other_kernel.warmup(
        "*fp32", "*fp32", 64, BLOCK=1024, grid=(1,), target="cuda:sm_90a"
    )
    assert "selp" not in compiled.asm["ptx"]
    assert re.search(r"mov\.u32 \$0, \$6;.*@\$5 ld\.global\.v4\.b32", compiled.asm["llir"])


def test_other_fill_semantics_in_the_interpreter():
    """The kernel above, as the reference runs it: masked-off lanes hold `other`."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal(1024).astype(np.float32)
    out = np.full(1024, np.nan, np.float32)
    masked_other_kernel[(1,)](x, out, 100, BLOCK=1024)
    offs = np.arange(1024)
    want = np.where(offs < 100, x, (offs % 7).astype(np.float32) - 2.5)
    np.testing.assert_array_equal(out, want)
