"""Descriptors made in the kernel (`tl.make_tensor_descriptor`) compiled for sm_90a and assembled
by ptxas: a descriptor over memory the kernel proves aligned builds its tensor map in the launch's
global scratch (frontend/tensor_maps.py, lowering/tensor_map_create.py) and its blocks move by
tensor copies, a matmul's K loop filling its rings from them; the others keep pointers. The
values on a GPU: tests/gpu/test_tensor_copies_gpu.py."""

import re

import numpy as np
import pytest
from fixture_kernels.made_descriptors import (
    carried_made_tiles,
    helper_made_in_a_loop,
    helper_made_matmul,
    made_in_a_loop,
    made_matmul,
    merged_made_tiles,
    noinline_made_tiles,
    scale_helper_tiles,
    scale_made_tiles,
    shifted_made_tiles,
)
from test_lowering import assemble
from test_toolchain import needs_ptxas

from naiad.backends.nvidia import target as nv_target
from naiad.backends.nvidia.compiler import ttgir_pipeline
from naiad.backends.nvidia.lowering.tensor_map_create import element_type_code
from naiad.dialects import tt
from naiad.ir import FloatType, IntegerType
from naiad.passes.pipeline import run_pipeline
from naiad.runtime.compiler import build_ttir
from naiad.runtime.evaluator import evaluate


def _fields(ptx: str, field: str) -> list[str]:
    """The values `tensormap.replace` writes into `field`, in order."""
    return re.findall(
        rf"tensormap\.replace\.tile\.{field}\.shared::cta\.b1024\.b\d+ \[%\w+\], (.+);", ptx
    )


def _copies(ptx: str) -> int:
    return len(re.findall(r"cp\.async\.bulk\.tensor\.2d", ptx))


@needs_ptxas
@pytest.mark.parametrize(
    "dtype, block, padding, elemtype, swizzle, fill",
    [
        (np.float16, (64, 64), "zero", "6", "3", "0"),  # 128-byte rows
        (np.float32, (16, 16), "nan", "7", "2", "1"),  # 64-byte rows, NaN outside
    ],
)
def test_an_aligned_descriptor_builds_its_map_in_the_scratch(
    dtype, block, padding, elemtype, swizzle, fill, tmp_path
):
    """Two maps per program (256 bytes of scratch, the kernel's last parameter), each written
    field by field by one thread and published by warp 0; one copy each way; no spills."""
    x = np.random.default_rng(0).standard_normal((200, 96)).astype(dtype)
    bm, bn = block
    kernel = scale_made_tiles.warmup(
        x, np.empty_like(x), 200, 96, 2.0, BM=bm, BN=bn, PADDING=padding, grid=(1, 1),
        target="cuda:sm_90a",
    )  # fmt: skip
    ptx = kernel.asm["ptx"]
    report = assemble(ptx, "sm_90a", tmp_path)
    assert kernel.metadata["global_scratch_size"] == 256
    assert re.search(r"\.param \.u64 \.ptr \.global \.align 1 \w+_param_5\s*\)", ptx)
    assert _fields(ptx, "elemtype") == [elemtype] * 2
    assert _fields(ptx, "swizzle_mode") == [swizzle] * 2
    assert _fields(ptx, "fill_mode") == [fill, "0"]
    assert _fields(ptx, "rank") == ["1", "1"]
    assert len(re.findall(r"tensormap\.cp_fenceproxy\.global\.shared::cta", ptx)) == 2
    assert _copies(ptx) == 2 and "ld.global" not in ptx and "st.global" not in ptx
    assert " 0 bytes spill stores" in report


@needs_ptxas
@pytest.mark.parametrize("kernel", [made_matmul, helper_made_matmul], ids=["kernel", "helpers"])
def test_a_k_loop_fills_its_rings_from_maps_made_in_the_kernel(kernel, tmp_path):
    """The maps made in the kernel, or (tutorial 06's shape) by one helper and read in
    another's K loop: inlined, the loop's wgmma rings fill by tensor copies."""
    a = np.random.default_rng(1).standard_normal((256, 256)).astype(np.float16)
    kernel = kernel.warmup(
        a, a, np.empty_like(a), 256, 256, 256, BM=128, BN=128, BK=64, grid=(1, 1),
        target="cuda:sm_90a", num_warps=8, num_stages=3,
    )  # fmt: skip
    ptx = kernel.asm["ptx"]
    report = assemble(ptx, "sm_90a", tmp_path)
    assert kernel.metadata["global_scratch_size"] == 3 * 128
    assert "wgmma.mma_async" in ptx and "ld.global" not in ptx and "cp.async.cg" not in ptx
    assert _copies(ptx) >= 4  # the prologue's and the loop's, A's and B's, and C's store
    assert " 0 bytes spill stores" in report


@needs_ptxas
@pytest.mark.parametrize(
    "kernel, args, constexprs, target, maps",
    [
        (shifted_made_tiles, (32, 32), {"SHIFT": 4, "BM": 32}, "cuda:sm_90a", 1),  # dst's only
        (shifted_made_tiles, (32, 32), {"SHIFT": 8, "BM": 32}, "cuda:sm_90a", 2),  # 16 bytes on
        (made_in_a_loop, (64, 32), {"BM": 32}, "cuda:sm_90a", 0),
        (
            scale_made_tiles,
            (64, 40, 2.0),
            {"BM": 32, "BN": 32, "PADDING": "zero"},
            "cuda:sm_90a",
            0,
        ),
        (scale_made_tiles, (64, 32, 2.0), {"BM": 32, "BN": 32, "PADDING": "zero"}, "cuda:sm_80", 0),
    ],
    ids=["base-8-bytes-past", "base-16-bytes-past", "made-in-a-loop", "80-byte-rows", "sm_80"],
)
def test_descriptors_the_kernel_cannot_prove_aligned_keep_pointers(
    kernel, args, constexprs, target, maps
):
    """A base pointer 8 bytes past an aligned argument (16 bytes past keeps its map: the proof
    follows the arithmetic), a descriptor made in a loop, rows that are not 16-byte multiples,
    and sm_80: no map for that descriptor (its accesses go through pointers)."""
    x = np.random.default_rng(2).standard_normal((64, 40)).astype(np.float16)
    compiled = kernel.warmup(x, np.empty_like(x), *args, **constexprs, grid=(1,), target=target)
    ptx = compiled.asm["ptx"]
    assert compiled.metadata.get("global_scratch_size", 0) == 128 * maps  # absent when 0
    assert len(re.findall(r"tensormap\.cp_fenceproxy", ptx)) == maps
    assert ("ld.global" in ptx) == (maps < 2)


@needs_ptxas
def test_descriptors_a_helper_makes_build_their_maps():
    """The helper returns each descriptor with its map (frontend/values.py): two maps, one
    copy each way, no pointer access."""
    x = np.random.default_rng(4).standard_normal((64, 32)).astype(np.float16)
    compiled = scale_helper_tiles.warmup(
        x, np.empty_like(x), 64, 32, 2.0, BM=32, BN=32, grid=(1,), target="cuda:sm_90a"
    )
    ptx = compiled.asm["ptx"]
    assert compiled.metadata["global_scratch_size"] == 256
    assert len(re.findall(r"tensormap\.cp_fenceproxy", ptx)) == 2
    assert _copies(ptx) == 2 and "ld.global" not in ptx and "st.global" not in ptx


def _ttgir(kernel, args, constexprs):
    """(TTIR, TTGIR after the map proofs) of `kernel` for sm_90a."""
    bound = kernel._bind(args, constexprs)
    before = build_ttir(kernel, bound, "cuda:sm_90a").module
    after = build_ttir(kernel, bound, "cuda:sm_90a").module
    target = nv_target.cuda_target("cuda:sm_90a")
    run_pipeline(ttgir_pipeline(4, target.capability, arch_specific=True), after)
    return before, after


def _count(module, op_class) -> int:
    return sum(isinstance(op, op_class) for op in module.walk())


@pytest.mark.parametrize(
    "kernel, maps_made, maps_kept",
    [
        (helper_made_in_a_loop, 2, 0),
        (merged_made_tiles, 1, 1),
        (carried_made_tiles, 1, 1),
        (noinline_made_tiles, 0, 0),
    ],
    ids=["made-by-a-helper-in-a-loop", "merged-at-an-if", "carried-by-a-loop", "noinline"],
)
def test_maps_that_cannot_be_kept_go_back_to_pointers(kernel, maps_made, maps_kept):
    """A map made in a loop once inlined (given back by the proofs), a descriptor merged at
    an `if` or carried by a loop and descriptors a `noinline` helper reads (whose maps the TTIR
    drops, nothing reading them): their accesses go through pointers, with the TTIR's values
    (the evaluator)."""
    M, N, BM = 96, 32, 32
    x = np.random.default_rng(6).standard_normal(M * N).astype(np.float16)
    before, after = _ttgir(kernel, (x, np.empty_like(x), M, N), {"BM": BM})
    assert _count(before, tt.MakeTensorDescOp) == maps_made
    assert _count(after, tt.MakeTensorDescOp) == maps_kept
    for func in (op for op in before.walk() if isinstance(op, tt.FuncOp)):
        if func.sym_visibility is not None:  # a callee that stays a call takes no map
            assert not any(isinstance(a.type, tt.TensorDescType) for a in func.arguments)
    outs = []
    for module in (after, before):
        dst = np.full_like(x, 7.0)
        func = next(op for op in module.walk() if isinstance(op, tt.FuncOp))
        evaluate(module, func.sym_name.value, [x, dst, M, N], grid=(M // BM,))
        outs.append(dst)
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0], x + np.float16(1))


@pytest.mark.parametrize(
    "kernel, N, constexprs",
    [
        (shifted_made_tiles, 32, {"SHIFT": 4, "BM": 32}),  # an unproven base
        (scale_made_tiles, 40, {"BM": 16, "BN": 32, "PADDING": "nan"}),  # unproven rows
    ],
    ids=["base", "rows-nan-padded"],
)
def test_unproven_maps_read_and_write_through_pointers(kernel, N, constexprs):
    """The accesses an unproven map gives back to pointers (tritongpu-prove-tensor-maps)
    read and write what the TTIR's did, edges and padding included (the evaluator)."""
    M = 50
    x = np.random.default_rng(5).standard_normal(M * N + 8).astype(np.float16)
    args = (x, np.empty_like(x), M, N) + ((2.0,) if kernel is scale_made_tiles else ())
    bound = kernel._bind(args, constexprs)
    before = build_ttir(kernel, bound, "cuda:sm_90a").module
    after = build_ttir(kernel, bound, "cuda:sm_90a").module
    target = nv_target.cuda_target("cuda:sm_90a")
    run_pipeline(ttgir_pipeline(4, target.capability, arch_specific=True), after)
    maps = [sum(isinstance(op, tt.MakeTensorDescOp) for op in m.walk()) for m in (before, after)]
    assert maps == [2, 1 if kernel is shifted_made_tiles else 0]  # dst's base is aligned
    outs = []
    for module in (after, before):
        dst = np.full_like(x, 7.0)
        values = [x, dst, M, N] + ([2.0] if kernel is scale_made_tiles else [])
        func = next(op for op in module.walk() if isinstance(op, tt.FuncOp))
        bm = constexprs["BM"]
        bn = constexprs.get("BN", 32)
        evaluate(module, func.sym_name.value, values, grid=(-(-M // bm), -(-N // bn)))
        outs.append(dst)
    np.testing.assert_array_equal(outs[0], outs[1])


@needs_ptxas
def test_debug_mode_keeps_pointers_for_its_bounds_checks():
    x = np.random.default_rng(3).standard_normal((64, 32)).astype(np.float16)
    compiled = scale_made_tiles.warmup(
        x, np.empty_like(x), 64, 32, 2.0, BM=32, BN=32, PADDING="zero", grid=(1,),
        target="cuda:sm_90a", debug=True,
    )  # fmt: skip
    assert "global_scratch_size" not in compiled.metadata
    assert "tensormap" not in compiled.asm["ptx"]


def test_element_types_are_numbered_as_ptx_numbers_them():
    """Not the driver's numbering: bf16 is 10 and f64 9 in PTX (9 and 8 for the driver)."""
    floats = {kind: element_type_code(FloatType(kind)) for kind in ("f16", "bf16", "f32", "f64")}
    assert floats == {"f16": 6, "bf16": 10, "f32": 7, "f64": 9}
    assert [element_type_code(IntegerType(w)) for w in (8, 16, 32, 64)] == [0, 1, 2, 4]
    assert element_type_code(FloatType("f8E4M3FN")) == 0  # 8-bit floats move as bytes
