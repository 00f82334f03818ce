"""TTGIR -> LLVM IR (naiad/backends/nvidia/lowering): the thread -> element arithmetic against
the linear layouts, and Triton's own TTGIR of a few kernels lowered, verified by LLVM, turned
into PTX and assembled by ptxas for sm_80 and sm_90a. No GPU here: the PTX is checked for the
instructions Triton's would hold; values are checked on the GPU (tests/gpu/test_examples_gpu.py).
"""

import json
import re
import subprocess
from pathlib import Path

import pytest
from test_toolchain import PTXAS, needs_ptxas

import naiad
import naiad.language as tl
from naiad.backends.nvidia import ptx
from naiad.backends.nvidia import target as nv_target
from naiad.backends.nvidia.layouts import to_linear_layout
from naiad.backends.nvidia.lowering import lower_module
from naiad.backends.nvidia.lowering.indexing import (
    evaluate,
    redundant_thread_mask,
    register_coords,
    thread_plan,
    unique_registers,
)
from naiad.ir.parser import Parser, parse_module

FIXTURES = Path(__file__).resolve().parents[2] / "fixture_kernels" / "ttgir"
RECORDS = json.loads((FIXTURES / "linear_layouts.json").read_text())
ARCHES = ("sm_80", "sm_90a")


def lower_fixture(name: str, arch: str = "sm_90a"):
    module = parse_module((FIXTURES / f"{name}.ttgir").read_text())
    return module, lower_module(module, f"cuda:{arch}")


def assemble(text: str, arch: str, tmp_path) -> str:
    """ptxas's verbose report of `text` for `arch` (the PTX must assemble)."""
    source = tmp_path / f"kernel_{arch}.ptx"
    source.write_text(text)
    command = [PTXAS, f"--gpu-name={arch}", "-v", str(source), "-o", str(tmp_path / "k.cubin")]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stderr


def assembled_ptx(kernel, args, kwargs, tmp_path, arches=ARCHES) -> dict[str, str]:
    """arch -> PTX of `kernel` compiled for a one-program grid, each assembled by ptxas."""
    texts = {}
    for arch in arches:
        compiled = kernel.warmup(*args, grid=(1,), target=f"cuda:{arch}", **kwargs)
        assemble(compiled.asm["ptx"], arch, tmp_path)
        texts[arch] = compiled.asm["ptx"]
    return texts


def count(pattern: str, text: str) -> int:
    return len(re.findall(pattern, text))


# -- which element each register of each thread holds ----------------------------------------
@pytest.mark.parametrize("family", ["blocked", "slice", "mma", "dot_mma", "dot_blocked"])
def test_thread_arithmetic_matches_the_layout(family):
    """The terms the lowering emits for the thread part, XOR each register's constant, give
    the element the linear layout says, for every thread of the CTA and every register."""
    records = [r for r in RECORDS if r["family"] == family][:12]
    for record in records:
        tensor = Parser(record["type"]).parse_type()
        layout = to_linear_layout(tensor.encoding, tensor.shape)
        plan = thread_plan(layout)
        registers = register_coords(layout)
        warps = layout.in_dim_size("warp")
        for tid in range(32 * warps):
            thread = evaluate(plan, tid)
            for r, constant in enumerate(registers):
                got = tuple(t ^ c for t, c in zip(thread, constant))
                assert got == layout.apply(register=r, lane=tid % 32, warp=tid // 32), record


def test_blocked_lanes_are_one_shift():
    """A blocked layout's lanes and warps are one run of bits: `(tid & 127) << 2`."""
    tensor = Parser(
        "tensor<1024xf32, #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], "
        "warpsPerCTA = [4], order = [0]}>>"
    ).parse_type()
    (terms,) = thread_plan(to_linear_layout(tensor.encoding, tensor.shape))
    assert [(t.shift, t.mask, t.scale) for t in terms] == [(0, 127, 4)]


def test_copies_are_stored_once():
    """A 32-element tensor over 4 warps: warps 1-3 and the upper lanes hold copies."""
    tensor = Parser(
        "tensor<32xf32, #ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], "
        "warpsPerCTA = [4], order = [0]}>>"
    ).parse_type()
    layout = to_linear_layout(tensor.encoding, tensor.shape)
    mask = redundant_thread_mask(layout)
    holders = [tid for tid in range(128) if not tid & mask]
    elements = sorted(
        evaluate(thread_plan(layout), tid)[0] ^ c[0]
        for tid in holders
        for c in (register_coords(layout)[r] for r in unique_registers(layout))
    )
    assert elements == list(range(32))


# -- Triton's TTGIR, lowered --------------------------------------------------------------------
@needs_ptxas
@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("name", ["add_sm90", "softmax_sm90", "row_sum_sm80", "transpose_sm80"])
def test_fixture_kernels_assemble(name, arch, tmp_path):
    _, llir = lower_fixture(name, arch)
    code = ptx.compile_ptx(llir, nv_target.cuda_target(arch))
    assert f".target {arch}" in code.text
    report = assemble(code.text, arch, tmp_path)
    assert "0 bytes spill stores" in report


def test_vector_add_is_vectorized_and_predicated():
    """Triton's vector add: 4 f32 per thread, the tile twice, so two 16-byte loads per
    operand and two 16-byte stores, each under its mask; no shared memory."""
    module, llir = lower_fixture("add_sm90")
    text = ptx.compile_ptx(llir, nv_target.cuda_target("sm_90a")).text
    assert count(r"@%p\d+ ld\.global\.v4\.b32", text) == 4
    assert count(r"@%p\d+ st\.global\.v4\.b32", text) == 2
    assert count(r"ld\.global\.b32|st\.global\.b32", text) == 0
    assert module.attributes["ttg.shared"].value == 0
    assert ".reqntid 128" in text


def test_softmax_reduces_with_shuffles_and_shared_memory():
    """Row max and row sum over 4 warps: 5 butterfly steps each, one f32 per warp through
    shared memory; exp is ex2.approx of x*log2(e) and `/` is div.full, as Triton's. Three
    barriers: one before each reduction reads its partials, one before the second writes over
    the first's; the kernel's end needs none (lowering/barriers.py)."""
    module, llir = lower_fixture("softmax_sm90")
    text = ptx.compile_ptx(llir, nv_target.cuda_target("sm_90a")).text
    assert count(r"shfl\.sync\.bfly\.b32", text) == 10
    assert count(r"ex2\.approx\.f32", text) == 8
    assert count(r"div\.full\.f32", text) == 8
    assert count(r"bar\.sync", text) == 3
    assert module.attributes["ttg.shared"].value == 4 * 4


def test_layout_conversion_goes_through_shared_memory():
    """row_sum converts a slice layout to a blocked one: written and read back through the
    scratch, which is the largest need (the 64 column results of the second reduction)."""
    module, llir = lower_fixture("row_sum_sm80", "sm_80")
    assert "@global_smem" in llir
    assert module.attributes["ttg.shared"].value >= 64 * 4
    assert "nvvm.barrier0" in llir


def test_the_llvm_ir_is_verified():
    """Every fixture's IR parses and verifies in LLVM (ptx.parse_module raises otherwise)."""
    for name in ("add_sm90", "softmax_sm90", "row_sum_sm80", "transpose_sm80"):
        _, llir = lower_fixture(name)
        ptx.parse_module(llir, name)


@naiad.jit
def _multiply_add(x, y, z, out):
    r = tl.arange(0, 128)
    tl.store(out + r, tl.load(x + r) * tl.load(y + r) + tl.load(z + r))


@pytest.mark.parametrize("fusion", [True, False])
def test_enable_fp_fusion_decides_fma(fusion):
    """Float multiplies and adds fuse into fma by default (Triton's `enable_fp_fusion`); with
    the option off, each rounds on its own, as the interpreter computes them."""
    compiled = _multiply_add.warmup(
        *["*fp32"] * 4, grid=(1,), target="cuda:sm_90a", enable_fp_fusion=fusion
    )
    text = compiled.asm["ptx"]
    assert ("fma.rn.f32" in text) == fusion
    assert ("mul.rn.f32" in text and "add.rn.f32" in text) != fusion
