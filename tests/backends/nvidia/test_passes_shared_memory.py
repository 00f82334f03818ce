"""allocate-shared-memory and tritongpu-reduce-data-duplication: the offsets chosen from live
ranges never let two live buffers share a byte; a conversion's scratch shrinks to its rounds
only where the kernel would not fit the target's shared memory (tutorial 03's f32 output on
sm_86); the lowering places each op's scratch at its offset and refuses a request larger than
the pass planned; the inserted conversion drops exactly the repeated registers. (FileCheck
cases: tests/ir/passes/nvidia/.)
"""

import re

import numpy as np
import pytest
from fixture_kernels.reductions import column_stats_kernel
from test_dot_lowering import ROOT, _load
from test_lowering import assemble
from test_toolchain import needs_ptxas

from naiad.backends.nvidia.layouts import LinearLayout, to_linear_layout
from naiad.backends.nvidia.lowering import lower_module
from naiad.backends.nvidia.passes.allocate_shared_memory import ALIGNMENT, Buffer, allocate, fit
from naiad.backends.nvidia.passes.reduce_data_duplication import independent_registers
from naiad.dialects.ttg.attributes import BlockedEncodingAttr
from naiad.errors import InternalError
from naiad.ir import IntegerAttr
from naiad.ir.parser import parse_module
from naiad.ir.passes import PassManager
from naiad.ir.types import i32


@pytest.mark.parametrize("seed", range(20))
def test_live_buffers_never_share_bytes(seed):
    rng = np.random.default_rng(seed)
    buffers = []
    for k in range(int(rng.integers(1, 30))):
        start = int(rng.integers(0, 100))
        end = start + int(rng.integers(0, 30))
        buffers.append(Buffer(k, int(rng.integers(1, 5000)), start, end))
    offsets, total = allocate(buffers)
    for a in buffers:
        assert offsets[a.owner] % ALIGNMENT == 0
        assert offsets[a.owner] + a.size <= total
        for b in buffers:
            if a is not b and a.overlaps(b):
                apart = (
                    offsets[a.owner] + a.size <= offsets[b.owner]
                    or offsets[b.owner] + b.size <= offsets[a.owner]
                )
                assert apart, (a, b, offsets)
    assert total == max(offsets[b.owner] + b.size for b in buffers)


def test_disjoint_live_ranges_share_offset_zero():
    buffers = [Buffer("a", 4096, 0, 5), Buffer("b", 1024, 6, 9), Buffer("c", 512, 10, 10)]
    offsets, total = allocate(buffers)
    assert offsets == {"a": 0, "b": 0, "c": 0}
    assert total == 4096


def test_overlapping_live_ranges_stack():
    buffers = [Buffer("a", 4096, 0, 5), Buffer("b", 1000, 3, 9), Buffer("c", 100, 4, 4)]
    offsets, total = allocate(buffers)
    assert offsets == {"a": 0, "b": 4096, "c": 5104}
    assert total == 5204


def test_scratch_shrinks_only_where_the_kernel_would_not_fit():
    """A conversion's 128 KiB scratch (it can go in 2 or 4 rounds) after a ring of 96 KiB:
    whole under a 163 KiB limit, halved under 99 KiB (the ring's 96 KiB then bound the
    kernel), quartered only when the ring leaves less; a scratch that cannot shrink stays."""
    ring = Buffer("ring", 98304, 0, 10)
    convert = Buffer("convert", 131072, 12, 12, smaller=(65536, 32768))
    for limit, size, total in [(166912, 131072, 131072), (101376, 65536, 98304)]:
        buffers, _, spanned = fit([ring, convert], limit)
        assert [b.size for b in buffers] == [98304, size] and spanned == total
    live = Buffer("ring", 98304, 0, 20)  # the ring still live at the conversion
    buffers, _, spanned = fit([live, convert], 101376 + 32768)
    assert [b.size for b in buffers] == [98304, 32768] and spanned == 98304 + 32768
    whole = Buffer("reduce", 131072, 12, 12)
    assert fit([ring, whole], 101376)[2] == 131072


def test_scratch_beside_a_live_buffer_shrinks_where_that_lowers_the_total():
    """A fused persistent matmul's epilogue (outside the loop's body, under its branch):
    its 64 KiB conversion beside rings live through the loop takes 2 rounds of 32 KiB, the
    kernel fitting or not (Triton's 180,224 bytes for tutorial 09); the same conversion in a
    loop's body (every iteration) or live alone (after a matmul's loop) stays whole."""
    rings = [Buffer("a", 49152, 0, 30), Buffer("b", 98304, 0, 30)]
    epilogue = Buffer("convert", 65536, 20, 20, smaller=(32768,))
    buffers, _, total = fit([*rings, epilogue], 232448)
    assert [b.size for b in buffers] == [49152, 98304, 32768] and total == 180224
    in_body = Buffer("convert", 65536, 20, 20, smaller=(32768,), in_loop=True)
    assert fit([*rings, in_body], 232448)[2] == 212992
    after = [Buffer("a", 49152, 0, 10), Buffer("b", 98304, 0, 10), epilogue]
    buffers, _, total = fit(after, 232448)
    assert buffers[-1].size == 65536 and total == 147456


def _tutorial_matmul(arch: str):
    tutorial = _load(ROOT / "examples" / "03_matmul.py", "shared_memory_matmul")
    return tutorial.matmul_kernel.fn.warmup(
        *("*fp16", "*fp16", "*fp32", 4096, 4096, 4096, 4096, 1, 4096, 1, 4096, 1),
        BLOCK_SIZE_M=128,
        BLOCK_SIZE_N=256,
        BLOCK_SIZE_K=64,
        GROUP_SIZE_M=8,
        ACTIVATION="",
        num_warps=8,
        num_stages=3,
        grid=(1,),
        target=f"cuda:{arch}",
    )


@needs_ptxas
def test_tutorial_matmul_with_an_f32_output_fits_sm86(tmp_path):
    """Tutorial 03 at 128 x 256 x 64 with an f32 C: its accumulator's conversion took the
    whole 128 KiB tile, more than the 99 KiB a block gets on sm_86 and sm_89 (A10, L4, RTX),
    so the kernel could not launch there; in two rounds it takes 64 KiB and the kernel the
    96 KiB of its rings, as Triton's (98304 bytes). On sm_80 (163 KiB) it stays whole."""
    compiled = _tutorial_matmul("sm_86")
    assert compiled.metadata["shared"] == 98304
    report = assemble(compiled.asm["ptx"], "sm_86", tmp_path)
    assert " 0 bytes spill stores" in report
    assert compiled.asm["ptx"].count("bar.sync") == 4 + 2  # the epilogue's second round
    assert _tutorial_matmul("sm_80").metadata["shared"] == 131072


def _ttgir():
    return column_stats_kernel.warmup(
        "*fp32", "*fp32", M=64, N=32, num_warps=8, grid=(1,), target="cuda:sm_90a"
    )


def test_compiled_kernel_records_its_shared_memory():
    """Both reductions cross warps; their scratches are not live together, so the kernel
    launches with one of them."""
    compiled = _ttgir()
    assert compiled.metadata["shared"] == 8 * 32 * 4  # 8 warp partials x 32 columns x f32
    assert "ttg.shared" not in compiled.asm["ttgir"]  # Triton's make_ttgir does not place them


def _reduce_module():
    """The kernel's TTGIR (after the TTGIR passes), then allocate-shared-memory."""
    module = parse_module(_ttgir().asm["ttgir"])
    PassManager(["allocate-shared-memory"]).run(module)
    return module


def test_lowering_places_scratch_at_its_offset():
    module = _reduce_module()
    reduces = [op for op in module.walk() if op.name == "tt.reduce"]
    assert [int(op.attributes["allocation.offset"].value) for op in reduces] == [0, 0]
    reduces[1].attributes["allocation.offset"] = IntegerAttr(2048, i32)
    module.attributes["ttg.shared"] = IntegerAttr(2048 + 1024, i32)
    llir = lower_module(module, "cuda:sm_90a")
    assert re.search(r"add i32 %\w+, 2048\n", llir)  # the second reduction's scratch moved
    assert module.attributes["ttg.shared"].value == 2048 + 1024


def test_lowering_refuses_more_scratch_than_planned():
    """The lowering checks its need against the size the pass recorded on the op."""
    module = _reduce_module()
    for op in module.walk():
        if op.name == "tt.reduce":
            op.attributes["allocation.size"] = IntegerAttr(16, i32)
    with pytest.raises(InternalError, match="planned 16"):
        lower_module(module, "cuda:sm_90a")


def _layout(size, threads, warps, order, shape) -> LinearLayout:
    return to_linear_layout(BlockedEncodingAttr(size, threads, warps, order), shape)


@pytest.mark.parametrize(
    "size, shape, kept",
    [
        ([1, 8], (128, 4), 2),  # the third register basis is zero
        ([1, 4], (128, 4), 2),  # none repeated
        ([2, 8], (128, 2), 2),  # two zero bases along dim 1
        ([4, 4], (4, 4), 4),  # lanes and warps repeat, registers do not
    ],
)
def test_independent_registers(size, shape, kept):
    layout = _layout(size, [32, 1], [4, 1], [1, 0], shape)
    bits = independent_registers(layout)
    assert len(bits) == kept
    coords = {layout.apply(register=r) for r in range(layout.in_dim_size("register"))}
    spanned = set()
    for r in range(1 << len(bits)):
        spanned.add(
            layout.apply(register=sum(1 << bits[i] for i in range(len(bits)) if r >> i & 1))
        )
    assert spanned == coords  # the kept bits reach every element the registers held
