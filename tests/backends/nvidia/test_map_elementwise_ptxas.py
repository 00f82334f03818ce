"""`tl.map_elementwise` on the NVIDIA path without a GPU: its scalar region is inlined per pack of
a thread's registers (lowering/scalar_maps.py), branches and loops included, and the PTX
assembles for sm_80 and sm_90a. Values on a GPU: tests/language/test_map_elementwise.py with
`-m gpu`."""

import pytest
from fixture_kernels.scalar_maps import collatz_steps, divmod_packed, scaled_and_flag
from test_lowering import assembled_ptx, count
from test_toolchain import needs_ptxas

import naiad
import naiad.language as tl


@naiad.jit
def collatz(n_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.map_elementwise(collatz_steps, tl.load(n_ptr + offs)))


@naiad.jit
def packed_divmod(a_ptr, b_ptr, c_ptr, d_ptr, BLOCK: tl.constexpr, PACK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a, b = tl.load(a_ptr + offs), tl.load(b_ptr + offs)
    c, d = tl.map_elementwise(divmod_packed, a, b, pack=PACK)
    tl.store(c_ptr + offs, c)
    tl.store(d_ptr + offs, d)


@naiad.jit
def mixed(x_ptr, n_ptr, y_ptr, flag_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    y, flag = tl.map_elementwise(scaled_and_flag, tl.load(x_ptr + offs), tl.load(n_ptr + offs))
    tl.store(y_ptr + offs, y)
    tl.store(flag_ptr + offs, flag)


@needs_ptxas
def test_a_while_loop_per_element_assembles(tmp_path):
    """1024 elements over 128 threads: eight registers, eight copies of the loop."""
    texts = assembled_ptx(collatz, ("*i32", "*i32"), {"BLOCK": 1024}, tmp_path)
    for text in texts.values():
        assert count(r"\bbra\b", text) >= 8


@needs_ptxas
@pytest.mark.parametrize("block", [512, 64])
def test_packs_of_two_assemble(block, tmp_path):
    """512 elements: four registers a thread, two packs; 64: one register (and duplicates), so
    the pack is completed with a copy of it. Unsigned division and remainder are PTX's own."""
    signature = ("*u32", "*u32", "*u32", "*u32")
    texts = assembled_ptx(packed_divmod, signature, {"BLOCK": block, "PACK": 2}, tmp_path)
    for text in texts.values():
        assert "div.u32" in text and "rem.u32" in text


@needs_ptxas
def test_mixed_types_assemble(tmp_path):
    signature = ("*fp16", "*i32", "*fp32", "*i8")
    texts = assembled_ptx(mixed, signature, {"BLOCK": 256}, tmp_path)
    for text in texts.values():
        assert "cvt.f32.f16" in text
