"""The memory-bound tutorial kernels (vector add, fused softmax, layer norm forward) through the
NVIDIA back end, with no GPU:

- the layouts the TTGIR pipeline chooses are Triton's: Naiad's TTGIR of each kernel, for the
  specialization and num_warps of its TTIR fixture, is compared with Triton 3.8's `make_ttgir`
  of the same kernel (tests/fixture_kernels/ttgir/tutorial_*.ttgir, made by
  scripts/ttgir_tutorial_fixtures.py): the layouts of the global accesses, of every reduction's
  operand, and the conversions left (Triton's loop pipelining, next issue, turns the softmax
  loads into asynchronous copies: their pointers' layouts are compared);
- `kernel.warmup(..., target=...)` gives every stage for cuda:sm_90a and cuda:sm_80, and ptxas
  accepts the PTX.
"""

from pathlib import Path

import pytest
from fixture_kernels import compile_fixture, fixture, tutorials
from test_toolchain import PTXAS, assemble

from naiad.backends.nvidia import link
from naiad.backends.nvidia.compiler import ttgir_pipeline
from naiad.dialects import tt, ttg
from naiad.ir.parser import parse_module
from naiad.passes.pipeline import run_pipeline
from naiad.runtime.compiler import TTIR_PIPELINE

TTGIR_FIXTURES = Path(__file__).resolve().parents[2] / "fixture_kernels" / "ttgir"
TUTORIALS = ("01_vector_add", "02_fused_softmax", "05_layer_norm_fwd")
TARGETS = {90: "cuda:sm_90a", 80: "cuda:sm_80"}


def layout_summary(module) -> dict:
    """What the layout passes decide: the layouts of the global accesses' pointers (a set:
    pipelining copies a loop's loads into its prologue), of each reduction's operand in program
    order, and the number of conversions left."""
    accesses, reduces, converts = [], [], 0
    for op in module.walk():
        if isinstance(op, (tt.LoadOp, tt.StoreOp, ttg.AsyncCopyGlobalToLocalOp)):
            t = op.operands[0].type
            accesses.append(str(getattr(t, "encoding", None)))
        elif isinstance(op, tt.ReduceOp):
            reduces.append(str(op.operands[0].type.encoding))
        elif isinstance(op, ttg.ConvertLayoutOp):
            converts += 1
    return {"accesses": sorted(set(accesses)), "reduces": reduces, "converts": converts}


def naiad_ttgir(name: str, capability: int):
    record = fixture(name)
    module = compile_fixture(record)
    run_pipeline(TTIR_PIPELINE, module)
    run_pipeline(ttgir_pipeline(record["num_warps"], capability), module)
    return module


@pytest.mark.parametrize("capability", sorted(TARGETS))
@pytest.mark.parametrize("name", TUTORIALS)
def test_ttgir_layouts_are_tritons(name, capability):
    path = TTGIR_FIXTURES / f"tutorial_{name}_sm{capability}.ttgir"
    triton = parse_module(path.read_text(), str(path))
    naiad = naiad_ttgir(name, capability)
    assert layout_summary(naiad) == layout_summary(triton)
    assert naiad.attributes == triton.attributes


def _warmup(name: str, target: str):
    """Compile the fixture's kernel for its specialization: pointers by signature string,
    other arguments as the fixture's values."""
    record = fixture(name)
    kernel = getattr(tutorials, record["kernel"])
    args = {}
    for param, spec in record["signature"].items():
        if spec == "constexpr":
            args[param] = record["constexprs"][param]
        elif spec.startswith("*"):
            args[param] = spec
        else:
            args[param] = record["args"][param]
    return kernel.warmup(**args, grid=(1,), target=target, num_warps=record["num_warps"])


@pytest.mark.parametrize("target", sorted(TARGETS.values()))
@pytest.mark.parametrize("name", TUTORIALS)
def test_warmup_gives_every_stage(name, target, tmp_path):
    compiled = _warmup(name, target)
    stages = {"source", "ttir", "ttgir", "llir", "ptx"}
    if link.linker_version() is not None:
        stages.add("cubin")
        assert compiled.n_spills == 0 and compiled.n_regs > 0
        assert compiled.asm["cubin"][:4] == b"\x7fELF"
    assert set(compiled.asm) == stages
    ttgir = parse_module(compiled.asm["ttgir"])
    assert ttgir.attributes["ttg.num-warps"].value == fixture(name)["num_warps"]
    assert f".target {target.removeprefix('cuda:')}" in compiled.asm["ptx"]
    metadata = compiled.metadata
    assert metadata.name == compiled.name and metadata.num_warps == fixture(name)["num_warps"]
    assert metadata.shared >= 0
    assert list(metadata["signature"]) == getattr(tutorials, fixture(name)["kernel"]).arg_names
    if PTXAS is not None:
        assemble(compiled.asm["ptx"], target.removeprefix("cuda:"), tmp_path)
