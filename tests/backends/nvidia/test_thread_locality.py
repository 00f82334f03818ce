"""tritongpu-optimize-thread-locality on a real kernel (tests/fixture_kernels/loop_reductions.py):
a reduction the loop accumulates is reduced within threads in the loop and across them once
after it. Its TTGIR has two `tt.reduce` (what Triton's test_optimize_thread_locality counts),
the loop's PTX has no shuffle and no barrier, and ptxas assembles it; the reference evaluator
runs the TTGIR before and after the pass on random inputs, and both agree with NumPy (max and
min bit for bit, sums to rounding: they are taken in another order). Values on the GPU:
tests/gpu/test_thread_locality_gpu.py; the rewrite's IR: tests/ir/passes/nvidia/."""

import re

import numpy as np
import pytest
from fixture_kernels.loop_reductions import OPS, loop_row_reduce_kernel, reference
from test_passes_ttgir import run, ttir
from test_toolchain import assemble, needs_ptxas

from naiad.dialects import tt
from naiad.runtime.evaluator import evaluate

# (BLOCK_M, BLOCK_N, num_warps): the row in one tile of threads (view: one reshape), and rows
# longer than the tile (reshape, trans, reshape).
SHAPES = [(32, 32, 4), (32, 128, 4), (4, 1024, 4), (8, 512, 8)]
BEFORE = ["convert-to-ttgir", "coalesce", "remove-layout-conversions"]
AFTER = [*BEFORE, "tritongpu-optimize-thread-locality"]
N_COLUMNS = 2048


def _ttgir(op, block_m, block_n, warps, passes, dtype="fp32"):
    module = ttir(
        loop_row_reduce_kernel,
        X=f"*{dtype}",
        Y=f"*{dtype}",
        N=N_COLUMNS,
        OP=op,
        BLOCK_M=block_m,
        BLOCK_N=block_n,
    )
    return run(module, passes, num_warps=warps)


def _inputs(block_m, dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype == "fp32":
        x = rng.standard_normal((block_m, N_COLUMNS)).astype(np.float32)
        y = rng.standard_normal(block_m).astype(np.float32)
    else:
        x = rng.integers(-(2**20), 2**20, (block_m, N_COLUMNS)).astype(np.int32)
        y = rng.integers(-(2**20), 2**20, block_m).astype(np.int32)
    return x, y


def _evaluated(module, x, y):
    out = y.copy()
    evaluate(module, "loop_row_reduce_kernel", [x.ravel().copy(), out, N_COLUMNS], grid=(1,))
    return out


def _reduces(module) -> list:
    return [o for o in module.walk() if isinstance(o, tt.ReduceOp)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("op", OPS)
def test_the_pass_keeps_the_values(op, shape):
    block_m, block_n, warps = shape
    before = _ttgir(op, block_m, block_n, warps, BEFORE)
    after = _ttgir(op, block_m, block_n, warps, AFTER)
    assert len(_reduces(before)) == 1 and len(_reduces(after)) == 2
    x, y = _inputs(block_m, "fp32", seed=block_n + warps)
    want = reference(x, y, op)
    got, old = _evaluated(after, x, y), _evaluated(before, x, y)
    if op == "sum":
        tolerance = 8 * np.finfo(np.float32).eps * np.sqrt(N_COLUMNS) * np.abs(x).sum(axis=1)
        assert np.all(np.abs(got - want) <= tolerance)
        assert np.all(np.abs(old - want) <= tolerance)
    else:
        assert np.array_equal(got, want.astype(np.float32))
        assert np.array_equal(got, old)


def test_integer_sums_are_exact():
    after = _ttgir("sum", 4, 1024, 4, AFTER, dtype="i32")
    assert len(_reduces(after)) == 2
    x, y = _inputs(4, "i32", seed=7)
    assert np.array_equal(_evaluated(after, x, y), reference(x, y, "sum").astype(np.int32))


def _loop_body(ptx: str) -> str:
    """The PTX of the kernel's one loop: from its label to the branch back to it."""
    for label in re.findall(r"^(\$L__BB\d+_\d+):", ptx, re.M):
        back = re.search(rf"bra(?:\.uni)?\s+{re.escape(label)};", ptx)
        start = ptx.index(f"{label}:")
        if back and back.start() > start:
            return ptx[start : back.end()]
    raise AssertionError("no loop in the PTX")


@needs_ptxas
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("op", ["sum", "max"])
def test_the_loop_reduces_within_threads(op, shape, tmp_path):
    block_m, block_n, warps = shape
    compiled = loop_row_reduce_kernel.warmup(
        "*fp32", "*fp32", N_COLUMNS, op, block_m, block_n,
        num_warps=warps, grid=(1,), target="cuda:sm_90a",
    )  # fmt: skip
    assert compiled.asm["ttgir"].count('"tt.reduce"') == 2
    ptx = compiled.asm["ptx"]
    body = _loop_body(ptx)
    assert "shfl" not in body and "bar.sync" not in body
    assert "shfl" in ptx  # after the loop, across the lanes
    assemble(ptx, "sm_90a", tmp_path)
