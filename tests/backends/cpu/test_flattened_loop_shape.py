"""The CPU back end fuses `tl.range(..., flatten=True)` nests (`fuse-nested-loops`, in its TTGIR
stage): the TTIR keeps the `tt.flatten` hint and the TTGIR has one loop where the nest had two,
as Triton's GPU back ends do. Inner bounds read from the outer induction variable add a first loop
that counts the fused iterations; invariant ones, the nest without its inner loop for when that
one is empty (which folds away where the outer loop then does nothing). A nest whose inner loop
carries a pointer is left alone. The values: tests/language/test_flattened_loops.py."""

import inspect
import re

import numpy as np
from fixture_kernels.flattened_loops import dependent, numbered, persistent_matmul, row_blocks


def test_a_nest_of_two_loops_becomes_one():
    compiled = numbered.warmup(10, 10, np.zeros((32, 32), np.int32), grid=(1,), target="cpu")
    assert "tt.flatten" in compiled.asm["ttir"]
    assert compiled.asm["ttir"].count("scf.for") == 2
    assert compiled.asm["ttgir"].count("scf.for") == 1


def test_moved_ops_keep_the_users_locations():
    compiled = numbered.warmup(10, 10, np.zeros((32, 32), np.int32), grid=(1,), target="cpu")
    ttgir = compiled.asm["ttgir"]
    alias = re.search(r"tt\.store .* loc\((#loc\d+)\)", ttgir).group(1)
    where = re.search(rf"^{alias} = loc\(\"(.+)\":(\d+):", ttgir, re.M)
    source = inspect.getsource(inspect.getmodule(numbered.fn)).splitlines()
    assert "tl.store(grid_ptr" in source[int(where.group(2)) - 1]


def test_dependent_inner_bounds_are_counted_by_a_loop_first():
    for ordered in (True, False):
        out = np.zeros(128, np.int32)
        compiled = dependent.warmup(10, out, out, ordered, grid=(1,), target="cpu")
        ttgir = compiled.asm["ttgir"]
        counting = ttgir[ttgir.index("scf.for") :]
        # the counting loop holds no loop; the fused loop follows it, alone
        assert counting[: counting.index("}")].count("scf.for") == 1
        assert counting[counting.index("}") :].count("scf.for") == 1


def test_an_empty_inner_loop_is_decided_before_the_loop():
    """Invariant inner bounds: `if inner trips <= 0` takes the nest without its inner loop (a
    loop still, since it stores), else the fused loop, whose inner body runs unconditionally
    on pointer blocks made from the current tile."""
    a = np.zeros((40, 50), np.float16)
    compiled = persistent_matmul.warmup(
        a, a.T.copy(), np.zeros((40, 40), np.float32), 40, 40, 50,
        PROGRAMS=3, BM=16, BN=16, BK=16, grid=(3,), target="cpu",
    )  # fmt: skip
    ttgir = compiled.asm["ttgir"]
    assert ttgir.count("scf.for") == 2
    fused = ttgir[ttgir.index("} else {") :]
    assert fused.count("scf.for") == 1
    # no `counter < inner trips` (an i64 comparison) guards the dot
    assert not re.search(r"arith\.cmpi slt, .* : i64", fused[: fused.index("tt.dot")])


def test_a_nest_whose_inner_loop_carries_a_pointer_is_left_alone():
    x = np.zeros((5, 37), np.float32)
    compiled = row_blocks.warmup(
        x, x[:, 0], np.zeros((5, 16), np.float32), 5, 37, 16, grid=(1,), target="cpu"
    )
    assert compiled.asm["ttgir"].count("scf.for") == 2
    assert "tt.flatten" in compiled.asm["ttgir"]
