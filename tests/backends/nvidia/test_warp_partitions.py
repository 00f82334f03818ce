"""Triton's multi-partition `ttg.warp_specialize`, hand-written in TTIR and TTGIR files and
compiled for sm_90a without a GPU (fixture_kernels/warp_partitions.py): the text round-trips;
the reference evaluator gives NumPy's values; each region runs on its own warps (placed by
allocate-warp-groups, the launch counting them all), its stores predicated on its own first
thread, its barriers named ones counting its threads alone, its reductions' scratch apart
from the others'; ptxas assembles the PTX. What the lowering refuses, it refuses by name. The
values on a GPU: tests/gpu/test_warp_partitions_gpu.py."""

import re

import numpy as np
import pytest
from fixture_kernels.warp_partitions import REGION_WARPS, SCALARS, reductions
from test_lowering import assemble
from test_toolchain import needs_ptxas

from naiad.errors import CompilationError
from naiad.ir import verify
from naiad.ir.parser import parse_module
from naiad.ir.printer import print_module
from naiad.runtime.evaluator import evaluate
from naiad.testing.filecheck import check_text
from naiad.triton.backends.compiler import GPUTarget
from naiad.triton.compiler import compile as triton_compile

HOPPER = GPUTarget("cuda", 90, 32)


def _compile(text: str, suffix: str, tmp_path):
    path = tmp_path / f"kernel{suffix}"
    path.write_text(text)
    return triton_compile(str(path), target=HOPPER)


@pytest.mark.parametrize("text", [SCALARS, reductions()], ids=["scalars", "reductions"])
def test_the_text_round_trips(text):
    module = parse_module(text)
    verify(module)
    printed = print_module(module)
    assert print_module(parse_module(printed)) == printed
    generic = print_module(module, generic=True)
    assert '"ttg.warp_specialize.partitions"()' in generic
    assert print_module(parse_module(generic)) == printed


@pytest.mark.parametrize("seed", [0, 1])
def test_the_reference_evaluator_runs_every_region(seed):
    """The evaluator runs the default region, then each partition (their values do not
    depend on the order): NumPy's values."""
    rng = np.random.default_rng(seed)
    base = int(rng.integers(-30000, 30000))
    out = np.full(3, -1, np.int32)
    evaluate(parse_module(SCALARS), "scalars", [out, base])
    assert out.tolist() == [base + 7, base * base, base]
    values = rng.integers(-(2**20), 2**20, 1024, dtype=np.int32)
    out = np.full(len(REGION_WARPS), -1, np.int32)
    evaluate(parse_module(reductions()), "reductions", [values, out])
    quarters = values.reshape(4, 256).astype(np.int64)
    assert out.tolist() == [quarters[r].max() if r % 2 else quarters[r].sum() for r in range(4)]


@needs_ptxas
def test_scalar_partitions_take_their_own_warps(tmp_path):
    compiled = _compile(SCALARS, ".ttir", tmp_path)
    ptx = compiled.asm["ptx"]
    assert compiled.metadata["num_warps"] == 4 + 2 + 1
    # The kernel's barrier is the CTA's; the default region's counts its 4 warps, the
    # 2-warp partition's its 64 threads; each region's first thread stores (thread 0, the
    # partition at warp 4's thread 128, the one at warp 6's thread 192).
    check_text(
        ptx,
        """
        CHECK: .reqntid 224
        CHECK: bar.sync 0;
        CHECK-DAG: bar.sync 1, 128;
        CHECK-DAG: bar.sync 2, 64;
        CHECK-DAG: setp.eq.b32 [[FIRST:%p[0-9]+]], %r{{[0-9]+}}, 0;
        CHECK-DAG: setp.eq.b32 [[P0:%p[0-9]+]], %r{{[0-9]+}}, 128;
        CHECK-DAG: setp.eq.b32 [[P1:%p[0-9]+]], %r{{[0-9]+}}, 192;
        CHECK-DAG: @[[P0]] st.global.b32 [ %rd{{[0-9]+}} + 0 ]
        CHECK-DAG: @[[P1]] st.global.b32 [ %rd{{[0-9]+}} + 0 ]
        CHECK-DAG: @[[FIRST]] st.global.b32 [ %rd{{[0-9]+}} + 0 ]
        """,
        "scalars.ptx",
    )
    assert "bar.sync 3" not in ptx  # the 1-warp partition has no barrier
    assemble(ptx, "sm_90a", tmp_path)


@needs_ptxas
def test_partition_reductions_keep_their_scratch_and_barriers_apart(tmp_path):
    compiled = _compile(reductions(), ".ttgir", tmp_path)
    ptx = compiled.asm["ptx"]
    assert compiled.metadata["num_warps"] == sum(REGION_WARPS)
    # A reduction across w warps exchanges w partials of 4 bytes: the 4-warp default region,
    # the 4-warp and the 2-warp partitions, each in its own bytes (none shared).
    assert compiled.metadata["shared"] == 16 + 16 + 8
    offsets = sorted(set(re.findall(r"\[global_smem\+?(\d*)\]", ptx)))
    assert len(offsets) == 3, offsets
    # Default: barrier 1, 128 threads; partition0 (2 warps) 2, 64; partition1 (1 warp) none;
    # partition2 (4 warps) 4, 128.
    for barrier in ("bar.sync 1, 128;", "bar.sync 2, 64;", "bar.sync 4, 128;"):
        assert barrier in ptx
    assert "bar.sync 3," not in ptx and "bar.sync 0" not in ptx
    check_text(ptx, "CHECK: .reqntid 352", "reductions.ptx")
    assemble(ptx, "sm_90a", tmp_path)


def test_results_are_refused_by_name(tmp_path):
    text = SCALARS.replace(
        "ttg.warp_specialize(%out, %base)", "%r = ttg.warp_specialize(%out, %base)"
    ).replace("      ttg.warp_yield", "      ttg.warp_yield %v : i32")
    text = text.replace(": (!tt.ptr<i32>, i32) -> ()", ": (!tt.ptr<i32>, i32) -> (i32)")
    refused = r"cannot lower a `ttg\.warp_specialize` with results"
    with pytest.raises(CompilationError, match=refused):
        _compile(text, ".ttir", tmp_path)


def test_partitions_beyond_the_named_barriers_are_refused(tmp_path):
    one = """
    partition{i}(%p{i}: !tt.ptr<i32>, %b{i}: i32) num_warps(1) {{
      ttg.warp_return
    }}"""
    many = "".join(one.format(i=i) for i in range(15))
    text = re.sub(r"\n    partition0.*?\} :", many + " :", SCALARS, flags=re.S)
    with pytest.raises(CompilationError, match="15 partitions: each needs one of 14"):
        _compile(text, ".ttir", tmp_path)
