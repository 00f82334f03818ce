"""Host descriptors read and written by tensor copies (sm_90 and later: `cp.async.bulk.tensor`,
frontend/tensor_maps.py): every swizzle width (rows of 32, 64, 128 and 256 bytes: two boxes),
8- to 32-bit elements, blocks hanging over the tensor's edges (read as zero or NaN, never
written), a window of a larger tensor, and the tensor map cache across launches; descriptors
made in the kernel, whose maps each program builds in the launch's global scratch. Compared
with torch on the same random inputs. The same kernels on the CPU: tests/backends/nvidia/
test_tensor_copies_ptxas.py checks that they compile to tensor copies.
"""

import pytest
import torch
from fixture_kernels.descriptors import (
    matmul_tiles,
    running_products,
    shift_tiles,
    tile_read_twice,
)
from fixture_kernels.head_blocks import head_products, head_row_sums
from fixture_kernels.made_descriptors import helper_made_matmul, made_matmul, scale_made_tiles
from gpu_helpers import compiled  # noqa: F401  (the fixture: launches compile for the GPU)

import naiad
import naiad.language as tl
from naiad.tools.tensor_descriptor import TensorDescriptor

pytestmark = pytest.mark.gpu


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


@pytest.mark.parametrize("rows", [100, 64, 30])
def test_blocks_of_one_head_stop_at_its_last_row(rows):
    """(3, rows, .) tensors read and written in blocks [1, 64, 64] by `.3d` copies, the loop's
    pipelined: a block past a head's last row reads zeros there (not the next head's rows) and
    writes nothing past it, so every head's product is its own."""
    a, b = _random((3, rows, 256), torch.float16, 4), _random((3, 256, 64), torch.float16, 5)
    c = torch.full((3, rows, 64), 7.0, dtype=torch.float16, device="cuda")
    descs = [TensorDescriptor.from_tensor(t, [1, 64, 64]) for t in (a, b, c)]
    kernel = head_products[(_cdiv(rows, 64), 3)](*descs, 256, BM=64, BN=64, BK=64, num_stages=3)
    assert "cp.async.bulk.tensor.3d" in kernel.asm["ptx"]
    expected = (a.double() @ b.double()).to(torch.float16)
    torch.testing.assert_close(c, expected, rtol=2e-3, atol=2e-2)


def test_blocks_of_one_head_in_a_loop_that_feeds_no_dot_read_through_pointers():
    """The pointer loads that stand for such blocks keep each head's bound: rows past it read
    zero."""
    src = _random((3, 100, 256), torch.float16, 6)
    out = torch.empty((3, 2, 64), device="cuda")
    head_row_sums[(2, 3)](TensorDescriptor.from_tensor(src, [1, 64, 64]), out, 256, BM=64, BK=64)
    expected = torch.zeros((3, 128), dtype=torch.float64, device="cuda")
    expected[:, :100] = src.double().sum(-1)
    torch.testing.assert_close(out.reshape(3, 128).double(), expected, rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize(
    "M, N, K, BM, BN, BK, stages, warps",
    [
        (256, 256, 512, 128, 128, 64, 3, 4),  # whole tiles, one copy a row
        (200, 144, 336, 128, 128, 64, 4, 4),  # ragged M, N and K: the edges read zeros
        (256, 512, 256, 128, 256, 64, 3, 8),  # 8 warps, B rows of two boxes
        (128, 128, 64, 64, 128, 64, 3, 4),  # one K step: the prologue's second copy is off
    ],
)
def test_a_matmul_loop_pipelines_tensor_copies(dtype, M, N, K, BM, BN, BK, stages, warps):
    """The K loop's tiles come through rings filled by tensor copies, each on its slot's
    mbarrier; compared with torch's matmul in float32."""
    a, b = _random((M, K), dtype, 4), _random((K, N), dtype, 5)
    c = torch.empty((M, N), device="cuda", dtype=dtype)
    descs = [
        TensorDescriptor.from_tensor(a, [BM, BK]),
        TensorDescriptor.from_tensor(b, [BK, BN]),
        TensorDescriptor.from_tensor(c, [BM, BN]),
    ]
    grid = (_cdiv(M, BM), _cdiv(N, BN))
    kernel = matmul_tiles[grid](*descs, K, BM=BM, BN=BN, BK=BK, num_stages=stages,
                                num_warps=warps)  # fmt: skip
    assert "ttng.async_tma_copy_global_to_local" in kernel.asm["ttgir"]
    expected = (a.float() @ b.float()).to(dtype)
    torch.testing.assert_close(c, expected, rtol=2e-2, atol=2e-2 * max(K, 1) ** 0.5)


def test_a_loop_storing_through_a_tensor_map_pipelines_its_copies():
    """Each K step stores the running product through a third tensor map while the copies of
    the next steps are in flight; every block column against torch in float32."""
    a, b = _random((128, 512), torch.float16, 12), _random((512, 128), torch.float16, 13)
    c = torch.empty((128, 1024), device="cuda", dtype=torch.float16)
    descs = [
        TensorDescriptor.from_tensor(a, [128, 64]),
        TensorDescriptor.from_tensor(b, [64, 128]),
        TensorDescriptor.from_tensor(c, [128, 128]),
    ]
    kernel = running_products[(1,)](*descs, 512, BM=128, BN=128, BK=64, num_stages=3)
    assert "ttng.async_tma_copy_global_to_local" in kernel.asm["ttgir"]
    for step in range(8):
        expected = a[:, : 64 * (step + 1)].float() @ b[: 64 * (step + 1)].float()
        got = c[:, 128 * step : 128 * (step + 1)].float()
        torch.testing.assert_close(got, expected, rtol=2e-2, atol=0.5)


def test_a_tile_read_as_it_is_and_transposed_comes_by_copies():
    """Each tile of `a` feeds one dot as it is and one transposed, from one ring filled by
    tensor copies; compared with torch in float32."""
    a = _random((512, 64), torch.float16, 6)
    x, y = _random((64, 64), torch.float16, 7), _random((64, 64), torch.float16, 8)
    out1, out2 = (torch.empty((64, 64), device="cuda", dtype=torch.float32) for _ in "12")
    desc = TensorDescriptor.from_tensor(a, [64, 64])
    kernel = tile_read_twice[(1,)](desc, x, y, out1, out2, 512, BK=64, BN=64, num_stages=3)
    assert "ttng.async_tma_copy_global_to_local" in kernel.asm["ttgir"]
    tiles = a.float().view(8, 64, 64)
    torch.testing.assert_close(out1, (x.float() @ tiles).sum(0), rtol=1e-2, atol=1e-1)
    torch.testing.assert_close(
        out2, (y.float() @ tiles.transpose(1, 2)).sum(0), rtol=1e-2, atol=1e-1
    )


def test_a_loop_of_no_steps_issues_no_copies():
    """K = 0: the prologue's copies are all off, no phase is waited for, the tile is zero."""
    a, b = _random((64, 64), torch.float16, 7), _random((64, 128), torch.float16, 8)
    c = _random((64, 128), torch.float16, 9)
    descs = [
        TensorDescriptor.from_tensor(a, [64, 64]),
        TensorDescriptor.from_tensor(b, [64, 128]),
        TensorDescriptor.from_tensor(c, [64, 128]),
    ]
    matmul_tiles[(1, 1)](*descs, 0, BM=64, BN=128, BK=64, num_stages=3)
    torch.testing.assert_close(c, torch.zeros_like(c), rtol=0, atol=0)


@naiad.jit
def row_sums(src, out_ptr, K, BM: tl.constexpr, BK: tl.constexpr):
    """A loop of descriptor loads that feed a sum, not a dot: pointer loads (the fallback)."""
    acc = tl.zeros((BM, BK), tl.float32)
    for k in range(0, K, BK):
        acc += src.load([tl.program_id(0) * BM, k]).to(tl.float32)
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    tl.store(out_ptr + rows, tl.sum(acc, 1))


def test_loads_in_a_loop_that_feed_no_dot_read_through_pointers():
    x = _random((96, 200), torch.float16, 6)
    storage = torch.zeros((96, 208), device="cuda", dtype=torch.float16)
    storage[:, :200] = x
    out = torch.empty(128, device="cuda")
    desc = TensorDescriptor(storage, [96, 200], [208, 1], [64, 64])
    kernel = row_sums[(2,)](desc, out, 200, BM=64, BK=64)
    assert "cp.async.bulk.tensor" not in kernel.asm["ptx"]
    torch.testing.assert_close(out[:96], x.float().sum(1), rtol=1e-3, atol=1e-2)
    torch.testing.assert_close(out[96:], torch.zeros(32, device="cuda"), rtol=0, atol=0)


@naiad.jit
def persistent_matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                      SUBTILE: tl.constexpr, PROGRAMS: tl.constexpr):  # fmt: skip
    """Tutorial 09's TMA persistent shape: programs stride over the output tiles, B is loaded
    K-major and transposed for the dot, the epilogue stores whole tiles or two halves."""
    num_n = tl.cdiv(N, BN)
    for tile in tl.range(tl.program_id(0), tl.cdiv(M, BM) * num_n, PROGRAMS):
        om, on = (tile // num_n) * BM, (tile % num_n) * BN
        acc = tl.zeros((BM, BN), tl.float32)
        for ki in range(tl.cdiv(K, BK)):
            acc = tl.dot(a.load([om, ki * BK]), b.load([on, ki * BK]).T, acc)
        if SUBTILE:
            c0, c1 = tl.split(tl.permute(tl.reshape(acc, (BM, 2, BN // 2)), (0, 2, 1)))
            c.store([om, on], c0.to(tl.float16))
            c.store([om, on + BN // 2], c1.to(tl.float16))
        else:
            c.store([om, on], acc.to(tl.float16))


@pytest.mark.parametrize("subtile", [False, True])
def test_a_persistent_matmul_over_tensor_copies(subtile):
    M, N, K, BM, BN, BK = 400, 384, 320, 128, 128, 64
    a, b = _random((M, K), torch.float16, 10), _random((N, K), torch.float16, 11)
    c = torch.empty((M, N), device="cuda", dtype=torch.float16)
    descs = [
        TensorDescriptor.from_tensor(a, [BM, BK]),
        TensorDescriptor.from_tensor(b, [BN, BK]),
        TensorDescriptor.from_tensor(c, [BM, BN // 2 if subtile else BN]),
    ]
    persistent_matmul[(5,)](*descs, M, N, K, BM=BM, BN=BN, BK=BK, SUBTILE=subtile, PROGRAMS=5,
                            num_warps=8, num_stages=3)  # fmt: skip
    torch.testing.assert_close(c, (a.float() @ b.float().T).half(), rtol=2e-2, atol=0.4)


@pytest.mark.parametrize(
    "dtype, block",
    [(torch.float16, (64, 64)), (torch.bfloat16, (32, 64)), (torch.float32, (16, 32))],
)
@pytest.mark.parametrize("allocator", ["torch's", "set"])
def test_descriptors_made_in_the_kernel_move_blocks_by_copies(dtype, block, allocator):
    """[200, 96] tensors in [16 rows more] of memory: blocks over the edges read zeros and
    write nothing; twice (the slow path, then the hot path), with the scratch from torch or
    from the allocator set."""
    bm, bn = block
    src, dst = _random((200, 96), dtype, 3), _random((216, 96), dtype, 4)
    before = dst.clone()
    calls = []

    def allocate(size, alignment, stream):
        calls.append((size, alignment))
        return torch.empty(size, dtype=torch.int8, device="cuda")

    naiad.set_allocator(allocate if allocator == "set" else None)
    try:
        for _ in range(2):
            grid = (_cdiv(200, bm), _cdiv(96, bn))
            kernel = scale_made_tiles[grid](src, dst, 200, 96, 2.0, BM=bm, BN=bn, PADDING="zero")
    finally:
        naiad.set_allocator(None)
    assert "tensormap.cp_fenceproxy" in kernel.asm["ptx"]
    expected = before.clone()
    expected[:200] = (src.float() * 2).to(dtype)
    torch.testing.assert_close(dst, expected, rtol=0, atol=0)
    programs = _cdiv(200, bm) * _cdiv(96, bn)
    assert calls == ([(programs * 256, 128)] * 2 if allocator == "set" else [])


@pytest.mark.parametrize("kernel", [made_matmul, helper_made_matmul], ids=["kernel", "helpers"])
def test_a_matmul_over_descriptors_made_in_the_kernel(kernel):
    """c = a @ b^T with ragged M and N, the K loop's rings filled from the kernel's own maps
    (made in the kernel, or made by one helper and read in another's loop)."""
    M, N, K = 300, 200, 320
    a, b = _random((M, K), torch.float16, 5), _random((N, K), torch.float16, 6)
    c = torch.empty((M, N), dtype=torch.float16, device="cuda")
    grid = (_cdiv(M, 128), _cdiv(N, 128))
    kernel = kernel[grid](a, b, c, M, N, K, BM=128, BN=128, BK=64, num_warps=8, num_stages=3)
    assert "wgmma.mma_async" in kernel.asm["ptx"] and "cp.async.bulk.tensor" in kernel.asm["ptx"]
    expected = (a.double() @ b.double().T).to(torch.float16)
    torch.testing.assert_close(c, expected, rtol=2e-3, atol=2e-2)
