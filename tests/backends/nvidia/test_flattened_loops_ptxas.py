"""`tl.range(..., flatten=True)` nests compiled for sm_90a without a GPU. The NVIDIA back end
fuses them as Triton does (a persistent matmul's wgmma dot runs on asynchronously in the fused
loop, its epilogue waiting in its branch; nests whose operands arrive by tensor copies stay
nests: naiad/backends/nvidia/compiler.py); `fuse-nested-loops` added before convert-to-ttgir
changes nothing then, and every form compiles and assembles."""

import re
from pathlib import Path

import pytest
from fixture_kernels.flattened_loops import dependent, numbered, persistent_matmul
from module_files import module_from_file
from test_lowering import assemble
from test_toolchain import needs_ptxas

import naiad
from naiad.backends.nvidia import link

ROOT = Path(__file__).resolve().parents[3]

# kernel, signature, constexprs, loops in the TTGIR by default, loops when fused
CASES = {
    "numbered": (numbered, ("i32", "i32", "*i32"), {}, 1, 1),
    # the fused loop and the one that counts the inner trips
    "dependent_ordered": (dependent, ("i32", "*i32", "*i32"), {"ORDERED": True}, 2, 2),
    "dependent": (dependent, ("i32", "*i32", "*i32"), {"ORDERED": False}, 2, 2),
    # the nest; fused, the loop and the nest without its inner loop, for an empty one
    "persistent_matmul": (
        persistent_matmul,
        ("*fp16", "*fp16", "*fp32", "i32", "i32", "i32"),
        {"PROGRAMS": 132, "BM": 64, "BN": 64, "BK": 32},
        2,
        2,
    ),
}


def _compile(kernel, signature, constants, tmp_path):
    compiled = kernel.warmup(*signature, **constants, grid=(1,), target="cuda:sm_90a")
    assert compiled.asm["ttir"].count("scf.for") == 2
    assemble(compiled.asm["ptx"], "sm_90a", tmp_path)
    if kernel is persistent_matmul:  # the dot is a tensor-core one, fused or not
        assert "wgmma.mma_async" in compiled.asm["ptx"]
    if constants.get("ORDERED"):  # tl.assume reaches LLVM
        assert "@llvm.assume" in compiled.asm["llir"]
    return compiled


@needs_ptxas
@pytest.mark.parametrize("case", CASES)
def test_flattened_nests_compile_as_chosen_and_fused(case, tmp_path):
    kernel, signature, constants, default_loops, fused_loops = CASES[case]
    chosen = _compile(kernel, signature, constants, tmp_path)
    assert chosen.asm["ttgir"].count("scf.for") == default_loops
    assert "tt.flatten" not in chosen.asm["ttgir"]
    where = {"pipeline": "ttgir", "before": "convert-to-ttgir", "kernel": kernel}
    with naiad.added_pass("fuse-nested-loops", **where):
        fused = _compile(kernel, signature, constants, tmp_path)
    assert fused.asm["ttgir"].count("scf.for") == fused_loops


@needs_ptxas
def test_a_fused_persistent_matmul_converts_no_offsets_in_its_loop(tmp_path):
    """At tutorial 09's persistent config (128x256x64, 8 warps, sm_90a) the fused loop
    converts none of its offsets (this kernel's store reuses the rows and columns of its
    loads: they are computed again, not carried, or the K steps would convert them to the
    loads' layouts), the A operand's descriptor takes its warpgroup through `shfl.sync.idx`
    (uniform for ptxas), and the PTX assembles without spills."""
    compiled = persistent_matmul.warmup(
        *CASES["persistent_matmul"][1],
        PROGRAMS=132, BM=128, BN=256, BK=64, num_warps=8, grid=(1,), target="cuda:sm_90a",
    )  # fmt: skip
    ttgir = compiled.asm["ttgir"]
    (fused,) = [line for line in ttgir.splitlines() if "scf.for" in line and "#mma>" in line]
    assert not re.search(r"ttg\.convert_layout %\S+ : tensor<\d+xi32", ttgir[ttgir.index(fused) :])
    assert "shfl.sync.idx.b32" in compiled.asm["ptx"]
    report = assemble(compiled.asm["ptx"], "sm_90a", tmp_path)
    assert "0 bytes spill stores" in report


@needs_ptxas
@pytest.mark.skipif(link.linker_version() is None, reason="nvJitLink is not installed")
def test_a_fused_persistent_matmul_keeps_no_accumulator_nor_addresses_through_its_epilogue():
    """examples/09's pointer persistent kernel at the tutorial's GPU config (128x256x64, 8
    warps, 3 stages, sm_90a): the epilogue's branch hands the next tile zeros, not the last
    tile's accumulator (whose 128 registers a thread stayed live through the epilogue), and
    its round trip through shared memory, in two rounds of 32 KB beside the rings (180,224
    bytes in all, as Triton's; 212,992 whole), addresses its 16 `stmatrix` from 2 registers
    (the constants as the operand's immediate) and its 16 16-byte loads from one: 240
    registers before, 197 after (Triton 3.6: 194 for the tutorial's kernel)."""
    tutorial = module_from_file(
        "naiad_example_09_registers", ROOT / "examples" / "09_persistent_matmul.py"
    )
    compiled = tutorial.matmul_persistent_kernel.warmup(
        "*fp16", "*fp16", "*fp16", 8192, 8192, 8192,
        PROGRAMS=132, BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8,
        num_warps=8, num_stages=3, grid=(1,), target="cuda:sm_90a",
    )  # fmt: skip
    ptx = compiled.asm["ptx"]
    stores = re.findall(r"stmatrix\S* \[(%r\d+)(?:\+\d+)?\]", ptx)
    loads = re.findall(r"ld\.shared\.v4\.b32\s+\{[^}]*\}, \[(%r\d+)(?:\+\d+)?\]", ptx)
    assert (len(stores), len(set(stores))) == (16, 2)
    assert (len(loads), len(set(loads))) == (16, 1)
    assert compiled.metadata["shared"] == 180224
    assert compiled.n_spills == 0 and compiled.n_regs <= 224  # 222 under `.reqntid 256`
