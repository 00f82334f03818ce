"""`tl.range(..., flatten=True)` nests compiled for sm_90a without a GPU: fused into one loop
before the layouts are assigned (the TTGIR has one loop where the TTIR has two, a counting loop
first where the inner bounds read the outer variable), and the PTX assembles."""

import pytest
from fixture_kernels.flattened_loops import dependent, numbered, persistent_matmul, row_blocks
from test_lowering import assemble
from test_toolchain import needs_ptxas

CASES = {
    "numbered": (numbered, ("i32", "i32", "*i32"), {}, 1),
    "dependent_ordered": (dependent, ("i32", "*i32", "*i32"), {"ORDERED": True}, 2),
    "dependent": (dependent, ("i32", "*i32", "*i32"), {"ORDERED": False}, 2),
    # and the nest without its inner loop, for an empty one
    "row_blocks": (row_blocks, ("*fp32", "*fp32", "*fp32", "i32", "i32"), {"BLOCK": 16}, 2),
    "persistent_matmul": (
        persistent_matmul,
        ("*fp16", "*fp16", "*fp32", "i32", "i32", "i32"),
        {"PROGRAMS": 132, "BM": 64, "BN": 64, "BK": 32},
        2,
    ),
}


@needs_ptxas
@pytest.mark.parametrize("case", CASES)
def test_flattened_nests_compile_to_one_loop_and_assemble(case, tmp_path):
    kernel, signature, constants, loops = CASES[case]
    compiled = kernel.warmup(*signature, **constants, grid=(1,), target="cuda:sm_90a")
    assert compiled.asm["ttir"].count("scf.for") == 2
    assert compiled.asm["ttgir"].count("scf.for") == loops
    assemble(compiled.asm["ptx"], "sm_90a", tmp_path)
    if kernel is persistent_matmul:  # the fused loop's dot is a tensor-core one
        assert "wgmma.mma_async" in compiled.asm["ptx"]
    if constants.get("ORDERED"):  # tl.assume reaches LLVM
        assert "@llvm.assume" in compiled.asm["llir"]
