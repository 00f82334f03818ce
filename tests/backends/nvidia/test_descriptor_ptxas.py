"""Kernels taking host tensor descriptors, compiled for sm_80 and sm_90a the way a CUDA launch
compiles them (`warmup(target=...)`: the TTGIR passes, the lowering, PTX, the cubin) and
assembled by ptxas. The kernel's parameters are the descriptor's parts as the frontend expands
it, which the CUDA launcher packs (tests/runtime/test_cuda_descriptors.py)."""

import re

import numpy as np
import pytest
from fixture_kernels.descriptors import add_into, products_added, row_sums_3d, scale_into
from test_lowering import ARCHES, assemble
from test_toolchain import needs_ptxas

import naiad
import naiad.language as tl
from naiad.tools.tensor_descriptor import TensorDescriptor


def _entry_parameters(ptx: str) -> list[str]:
    """The types of the kernel entry's parameters, in order."""
    head = ptx[ptx.index(".entry") :]
    head = head[: head.index(")")]
    return re.findall(r"\.param \.(\w+)", head)


@needs_ptxas
@pytest.mark.parametrize("arch", ARCHES)
def test_a_two_dimensional_descriptor_kernel_assembles(arch, tmp_path):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((50, 70)).astype(np.float16)
    out = np.empty((50, 70), np.float32)
    compiled = scale_into.warmup(
        TensorDescriptor.from_tensor(a, [16, 64]),
        TensorDescriptor.from_tensor(out, [16, 64]),
        1.5,
        BM=16,
        BN=64,
        grid=(4, 2),
        target=f"cuda:{arch}",
    )
    text = compiled.asm["ptx"]
    assemble(text, arch, tmp_path)
    # base, 2 sizes, 2 strides for each descriptor, then the factor
    assert _entry_parameters(text) == ["u64", "u64", "u64", "u64", "u64"] * 2 + ["f32"]


@needs_ptxas
@pytest.mark.parametrize("arch", ARCHES)
def test_a_three_dimensional_descriptor_kernel_assembles(arch, tmp_path):
    """Base, 3 sizes, 3 strides and the output; on sm_90a a tensor map ahead of them, whose
    block of one head ([1, 16, 32]) is one `.3d` tensor copy (frontend/tensor_maps.py)."""
    x = np.random.default_rng(1).random((8, 16, 32)).astype(np.float16)
    compiled = row_sums_3d.warmup(
        TensorDescriptor.from_tensor(x, [1, 16, 32], padding="nan"),
        np.empty(128, np.float32),
        BM=16,
        BN=32,
        grid=(8,),
        target=f"cuda:{arch}",
    )
    ptx = compiled.asm["ptx"]
    assemble(ptx, arch, tmp_path)
    copies = arch == "sm_90a"
    assert len(_entry_parameters(ptx)) == copies + 1 + 3 + 3 + 1
    assert ("cp.async.bulk.tensor.3d.shared::cluster.global" in ptx) == copies


@needs_ptxas
def test_descriptor_accesses_vectorize_when_their_parts_allow(tmp_path):
    """An aligned descriptor with sizes and row strides divisible by 16 reads and writes its
    rows with 16-byte accesses, as an in-kernel descriptor over such arguments does; a row
    stride of 70 elements leaves rows misaligned, so accesses stay narrow."""
    rng = np.random.default_rng(1)
    widths = {}
    for cols in (64, 70):
        a = rng.standard_normal((64, cols)).astype(np.float32)
        out = np.empty((64, cols), np.float32)
        compiled = scale_into.warmup(
            TensorDescriptor.from_tensor(a, [16, 64]),
            TensorDescriptor.from_tensor(out, [16, 64]),
            1.5,
            BM=16,
            BN=64,
            grid=(4, 1),
            target="cuda:sm_80",
        )
        text = compiled.asm["ptx"]
        assemble(text, "sm_80", tmp_path)
        widths[cols] = (
            len(re.findall(r"ld\.global\.v4", text)),
            len(re.findall(r"ld\.global", text)),
        )
    assert widths[64][0] > 0 and widths[64][0] == widths[64][1]
    assert widths[70][0] == 0


@naiad.jit
def _gather_add_scatter(src, dst, acc, peak, rows_ptr, R: tl.constexpr):
    """Rows `rows` of `src` plus one go to the same rows of `dst`, are added into `acc`'s first
    block and raise `peak`'s: a gather, a scatter and block atomics through host descriptors."""
    rows = tl.load(rows_ptr + tl.arange(0, R))
    block = src.gather(rows, 0) + 1
    dst.scatter(block, rows, 0)
    acc.atomic_add([0, 0], block)
    peak.atomic_max([0, 0], block.to(tl.int32))


@needs_ptxas
def test_gather_scatter_and_block_atomics_assemble_for_sm_90a(tmp_path):
    x = np.random.default_rng(2).random((64, 32)).astype(np.float32)
    acc = np.zeros((32, 32), np.float32)
    compiled = _gather_add_scatter.warmup(
        TensorDescriptor.from_tensor(x, [1, 32]),
        TensorDescriptor.from_tensor(np.empty_like(x), [1, 32]),
        TensorDescriptor.from_tensor(acc, [16, 32]),
        TensorDescriptor.from_tensor(np.zeros((32, 32), np.int32), [16, 32]),
        np.arange(16, dtype=np.int32),
        R=16,
        grid=(1,),
        target="cuda:sm_90a",
    )
    ptx = compiled.asm["ptx"]
    assemble(ptx, "sm_90a", tmp_path)
    # The add through a tensor map is one bulk tensor reduction; max stays a pointer atomic,
    # ordered `release` at GPU scope as Triton's fallback.
    assert "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group" in ptx
    assert "atom.global.gpu.release.add.f32" not in ptx
    assert "atom.global.gpu.release.max.s32" in ptx


@needs_ptxas
@pytest.mark.parametrize("arch", ARCHES)
def test_a_block_atomic_add_is_a_bulk_tensor_reduction_on_sm_90a(arch, tmp_path):
    """Through a host tensor map (sm_90a), one `cp.reduce.async.bulk.tensor` per box of the
    block (64 f32 columns: two boxes of a 128-byte swizzle); element atomics on sm_80."""
    a = np.random.default_rng(3).standard_normal((64, 128)).astype(np.float16)
    out = np.zeros((64, 128), np.float32)
    compiled = add_into.warmup(
        TensorDescriptor.from_tensor(a, [32, 64]),
        TensorDescriptor.from_tensor(out, [32, 64]),
        BM=32,
        BN=64,
        grid=(2, 2, 3),
        target=f"cuda:{arch}",
    )
    ptx = compiled.asm["ptx"]
    assemble(ptx, arch, tmp_path)
    reductions = ptx.count("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile")
    assert reductions == (2 if arch == "sm_90a" else 0)
    assert ("red.global" in ptx or "atom.global" in ptx) == (arch == "sm_80")


@needs_ptxas
def test_a_loop_adding_products_by_bulk_reductions_is_pipelined(tmp_path):
    """The dot's tile of `b` is copied stages ahead while each step's product is added by a
    bulk tensor reduction (a block atomic, not an ordering one: the loop stays a candidate)."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4 * 64, 64)).astype(np.float16)
    b = rng.standard_normal((512, 128)).astype(np.float16)
    compiled = products_added.warmup(
        TensorDescriptor.from_tensor(x, [64, 64]),
        TensorDescriptor.from_tensor(b, [64, 128]),
        TensorDescriptor.from_tensor(np.zeros((512, 128), np.float32), [64, 128]),
        512,
        BK=64,
        BN=128,
        grid=(4,),
        target="cuda:sm_90a",
        num_warps=4,
        num_stages=3,
    )
    assemble(compiled.asm["ptx"], "sm_90a", tmp_path)
    ttgir = compiled.asm["ttgir"]
    assert "ttng.async_tma_copy_global_to_local" in ttgir
    # its own buffer: written each step once the previous reduction has read it
    assert "ttng.async_tma_reduce add" in ttgir and "tt.atomic_rmw" not in ttgir
    assert ttgir.count("ttng.async_tma_store_wait") == 2
