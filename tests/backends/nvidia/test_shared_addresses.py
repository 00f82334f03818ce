"""Shared-memory addresses in the NVIDIA lowering, without a GPU: a tf32 operand read one
element per register (B stored row-major) sits in a layout whose reads are bank-conflict
free and whose rows 4 apart share their swizzle phase, and a pipelined K loop addresses its
buffers with 32-bit arithmetic, one XOR per group of registers hoisted out of the loop
(`lowering/thread_addresses.py`). Values on the GPU: tests/gpu/test_dot_gpu.py."""

import re

import pytest
from test_dot_lowering import ROOT, _load
from test_ldmatrix import _conflict_free, _types
from test_toolchain import needs_ptxas

from naiad.backends.nvidia.lowering.indexing import layout_of
from naiad.backends.nvidia.lowering.ldmatrix import operand_encoding, shared_offsets
from naiad.backends.nvidia.lowering.thread_addresses import thread_bits


@pytest.mark.parametrize(
    ("shape", "warps"),
    [((32, 32), [2, 2]), ((32, 64), [2, 2]), ((16, 128), [1, 4]), ((64, 16), [4, 1]),
     ((32, 256), [2, 4]), ((8, 8), [1, 1])],
)  # fmt: skip
def test_tf32_b_element_reads(shape, warps):
    """Every register of every warp reads its element without a bank conflict, and the
    registers' constants need as many XOR parts as a thread holds columns of 8 (N groups)."""
    src_t, dst_t = _types("f32", 1, shape, warps, [1, 0], 4)
    encoding = operand_encoding(src_t, dst_t, element_loads=True)
    to_offset = shared_offsets(encoding, shape).invert()
    offsets = layout_of(dst_t).compose(to_offset)
    registers, lanes = offsets.in_dim_size("register"), offsets.in_dim_size("lane")
    for warp in range(offsets.in_dim_size("warp")):
        for register in range(registers):
            reads = [
                offsets.apply(register=register, lane=lane, warp=warp)[0] for lane in range(lanes)
            ]
            assert _conflict_free([(4 * offset, 4) for offset in reads])
    parts = {offsets.apply(register=r)[0] & thread_bits(offsets) for r in range(registers)}
    columns = {layout_of(dst_t).apply(register=r)[1] // 8 for r in range(registers)}
    assert len(parts) <= len(columns)


def _k_loop(ptx: str) -> str:
    """The body of the kernel's loop (the one backward branch)."""
    labels = {m.group(1): m.start() for m in re.finditer(r"^\$(L__BB\d+_\d+):", ptx, re.M)}
    for m in re.finditer(r"bra(?:\.uni)?\s+\$(L__BB\d+_\d+);", ptx):
        if labels.get(m.group(1), len(ptx)) < m.start():
            return ptx[labels[m.group(1)] : m.end()]
    raise AssertionError("no loop")


@needs_ptxas
@pytest.mark.parametrize(("dtype", "block_n", "bases"), [("fp32", 32, 12), ("fp16", 64, 12)])
def test_pipelined_k_loop_addresses(dtype, block_n, bases):
    """tutorial 03's K loop on sm_80: 32-bit shared addresses (no widening, no 64-bit adds
    but the global pointers'), at most one XOR per group of operand registers, and immediate
    offsets for the rest: fp32's 32 element reads and 8 ldmatrix a step take 12 bases (each
    read its own before)."""
    tutorial = _load(ROOT / "examples" / "03_matmul.py", "shared_addresses_matmul")
    compiled = tutorial.matmul_kernel.fn.warmup(
        f"*{dtype}", f"*{dtype}", "*fp16", 4096, 4096, 4096, 4096, 1, 4096, 1, 4096, 1,
        BLOCK_SIZE_M=64, BLOCK_SIZE_N=block_n, BLOCK_SIZE_K=32, GROUP_SIZE_M=8, ACTIVATION="",
        num_warps=2, num_stages=5, grid=(1,), target="cuda:sm_80",
    )  # fmt: skip
    loop = _k_loop(compiled.asm["ptx"])
    assert "mma.sync" in loop and "cvt.s64.s32" not in loop
    reads = re.findall(
        r"ld(?:matrix\S*|\.shared\S*)\s+(?:\{[^}]*\}|%r\d+),\s*\[(%r\d+)(?:\+\d+)?\]", loop
    )
    assert reads, "operand reads take 32-bit shared addresses"
    assert len(re.findall(r"\bxor\.b32", loop)) <= 4
    assert len(set(reads)) <= bases
