"""Host descriptors read and written by tensor copies (sm_90 and later: `cp.async.bulk.tensor`,
frontend/tensor_maps.py): every swizzle width (rows of 32, 64, 128 and 256 bytes: two boxes),
8- to 32-bit elements, blocks hanging over the tensor's edges (read as zero or NaN, never
written), a window of a larger tensor, and the tensor map cache across launches. Compared with
torch on the same random inputs. The same kernels on the CPU: tests/backends/nvidia/
test_tensor_copies_ptxas.py checks that they compile to tensor copies.
"""

import pytest
import torch
from gpu_helpers import compiled  # noqa: F401  (the fixture: launches compile for the GPU)

import naiad
import naiad.language as tl
from naiad.tools.tensor_descriptor import TensorDescriptor

pytestmark = pytest.mark.gpu


@naiad.jit
def shift_tiles(src, dst, BM: tl.constexpr, BN: tl.constexpr):
    """Each program reads one block of `src` and writes it plus one into `dst`."""
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    block = src.load([pm * BM, pn * BN])
    dst.store([pm * BM, pn * BN], block + 1)


def _cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def _random(shape, dtype, seed):
    generator = torch.Generator(device="cuda").manual_seed(seed)
    if dtype.is_floating_point:
        return (torch.rand(shape, device="cuda", generator=generator) * 8 - 4).to(dtype)
    return torch.randint(-100, 100, shape, device="cuda", generator=generator, dtype=dtype)


@pytest.mark.parametrize(
    "dtype, block",
    [
        (torch.float16, (64, 64)),  # 128-byte rows
        (torch.float16, (32, 128)),  # 256-byte rows: two boxes
        (torch.bfloat16, (16, 32)),  # 64-byte rows
        (torch.float32, (8, 8)),  # 32-byte rows
        (torch.float32, (16, 32)),
        (torch.int8, (32, 64)),
        (torch.int32, (64, 16)),
    ],
)
def test_a_window_is_read_and_written_by_tensor_copies(dtype, block):
    """A (100, 80) window of a (120, 96) tensor: blocks over its edges read zeros outside it
    and write nothing there; the rest of the tensor keeps its values."""
    bm, bn = block
    src_all, dst_all = _random((120, 96), dtype, 1), _random((120, 96), dtype, 2)
    before = dst_all.clone()
    src = TensorDescriptor(src_all, [100, 80], [96, 1], list(block))
    dst = TensorDescriptor(dst_all, [100, 80], [96, 1], list(block))
    kernel = shift_tiles[(_cdiv(100, bm), _cdiv(80, bn))](src, dst, BM=bm, BN=bn)
    assert "cp.async.bulk.tensor" in kernel.asm["ptx"]
    expected = before.clone()
    expected[:100, :80] = src_all[:100, :80] + 1
    torch.testing.assert_close(dst_all, expected, rtol=0, atol=0)


@naiad.jit
def copy_out(src, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    """The block of `src` at this program's tile, whole, into `out` (BM x BN per program)."""
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    block = src.load([pm * BM, pn * BN])
    rows = pm * BM + tl.arange(0, BM)
    cols = pn * BN + tl.arange(0, BN)
    tl.store(out_ptr + rows[:, None] * (tl.num_programs(1) * BN) + cols[None, :], block)


@pytest.mark.parametrize("padding", ["zero", "nan"])
def test_the_padding_fills_what_lies_outside(padding):
    x = _random((40, 48), torch.float32, 3)
    out = torch.empty((64, 64), device="cuda")
    copy_out[(2, 2)](TensorDescriptor.from_tensor(x, [32, 32], padding=padding), out, BM=32, BN=32)
    expected = torch.full((64, 64), float("nan") if padding == "nan" else 0.0, device="cuda")
    expected[:40, :48] = x
    torch.testing.assert_close(out, expected, rtol=0, atol=0, equal_nan=True)


def test_new_tensors_get_their_own_tensor_maps():
    """The hot path encodes a map per tensor: launches over other tensors and sizes read them."""
    for seed, rows in enumerate((64, 37, 64, 90)):
        src, dst = _random((rows, 64), torch.float16, seed), torch.zeros((rows, 64), device="cuda")
        dst = dst.to(torch.float16)
        grid = (_cdiv(rows, 32), 1)
        shift_tiles[grid](TensorDescriptor.from_tensor(src, [32, 64]),
                          TensorDescriptor.from_tensor(dst, [32, 64]), BM=32, BN=64)  # fmt: skip
        torch.testing.assert_close(dst, src + 1, rtol=0, atol=0)
