"""Host tensor descriptors (`naiad.tools.tensor_descriptor.TensorDescriptor`) on torch CUDA
tensors: loads of whole and partial blocks (the part outside the shape reads the padding, zero
or NaN), stores that never write outside the described shape (a strided window of a larger
tensor), 3-D blocks, the hot path taking new tensors and sizes, and the launch errors. Compared
with torch on the same inputs.

Run on the GPU machine: `scripts/gpu-check OUTDIR` (or `python3 -m pytest tests/gpu -m gpu`).
"""

import pytest
import torch
from fixture_kernels.descriptors import add_into, products_added, row_sums_3d, scale_into
from gpu_helpers import compiled  # noqa: F401  (the fixture: launches compile for the GPU)

import naiad
import naiad.language as tl
from naiad.tools.tensor_descriptor import TensorDescriptor

pytestmark = pytest.mark.gpu


@naiad.jit
def copy_tiles(src, out_ptr, stride_out, BM: tl.constexpr, BN: tl.constexpr):
    """Each program copies one BM x BN block of `src` into the padded `out`, whole: the part
    of a partial block outside `src`'s shape is the descriptor's padding."""
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    block = src.load([pm * BM, pn * BN])
    rows = pm * BM + tl.arange(0, BM)
    cols = pn * BN + tl.arange(0, BN)
    tl.store(out_ptr + rows[:, None] * stride_out + cols[None, :], block)


def _random(shape, dtype, seed):
    generator = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.rand(shape, device="cuda", generator=generator) * 4 - 2).to(dtype)


@pytest.mark.parametrize("padding", ["zero", "nan"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("shape, block", [((64, 128), (16, 32)), ((50, 70), (16, 32)),
                                          ((1, 33), (8, 64)), ((129, 17), (32, 16))])  # fmt: skip
def test_partial_blocks_read_the_padding(shape, block, dtype, padding):
    a = _random(shape, dtype, seed=shape[0] * 1000 + shape[1])
    grid = (-(-shape[0] // block[0]), -(-shape[1] // block[1]))
    out = torch.full((grid[0] * block[0], grid[1] * block[1]), 7.0, device="cuda", dtype=dtype)
    desc = TensorDescriptor.from_tensor(a, list(block), padding=padding)
    copy_tiles[grid](desc, out, out.stride(0), BM=block[0], BN=block[1])
    expected = torch.full_like(out, 0.0 if padding == "zero" else float("nan"))
    expected[: shape[0], : shape[1]] = a
    torch.testing.assert_close(out, expected, rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_stores_stay_inside_a_strided_window(dtype):
    m, n = 45, 77
    src = _random((m, n), torch.float32, seed=5)
    storage = torch.full((m + 7, n + 9), -1.0, device="cuda", dtype=dtype)
    window = storage[:m, :n]  # row stride n + 9: the descriptor covers only the window
    dst = TensorDescriptor(window, [m, n], [storage.stride(0), 1], [16, 32])
    scale_into[(3, 3)](TensorDescriptor.from_tensor(src, [16, 32]), dst, 2.5, BM=16, BN=32)
    torch.testing.assert_close(window, (src * 2.5).to(dtype), rtol=0, atol=0)
    assert (storage[m:] == -1).all() and (storage[:, n:] == -1).all()


def test_three_dimensional_blocks():
    x = _random((6, 16, 32), torch.float16, seed=9)
    out = torch.full((6 * 16,), float("nan"), device="cuda")
    row_sums_3d[(6,)](TensorDescriptor.from_tensor(x, [1, 16, 32]), out, BM=16, BN=32)
    reference = x.double().sum(dim=2).reshape(-1)
    torch.testing.assert_close(out.double(), reference, rtol=1e-5, atol=1e-5)


def test_the_hot_path_takes_new_tensors_and_sizes(monkeypatch):
    """After the first launch of a specialization, launches go through the binder's key: each
    must read its own descriptor's address, shape and strides. A specialization is the sizes'
    and strides' divisibility by 16 (here: of m and n), so these sizes make three."""
    slow = []
    original = scale_into._run_slow
    monkeypatch.setattr(scale_into, "_run_slow", lambda *args: slow.append(1) or original(*args))
    sizes = [(40, 64), (40, 64), (56, 96), (33, 100), (70, 20), (16, 32), (48, 160)]
    for i, (m, n) in enumerate(sizes):
        src = _random((m, n), torch.float32, seed=100 + i)
        dst = torch.full((m, n), float("nan"), device="cuda")
        grid = (-(-m // 16), -(-n // 32))
        src_desc = TensorDescriptor.from_tensor(src, [16, 32])
        scale_into[grid](src_desc, TensorDescriptor.from_tensor(dst, [16, 32]), -0.5, BM=16, BN=32)
        torch.testing.assert_close(dst, src * -0.5, rtol=0, atol=0)
    specializations = {(m % 16 == 0, n % 16 == 0) for m, n in sizes}
    assert len(specializations) == 3
    assert len(slow) <= 3  # each one's first launch, unless an earlier test prepared it


def test_launch_errors_name_the_descriptor():
    src = _random((32, 64), torch.float32, seed=1)
    dst = TensorDescriptor.from_tensor(torch.empty_like(src), [16, 32])
    on_cpu = TensorDescriptor.from_tensor(src.cpu(), [16, 32])
    with pytest.raises(ValueError, match=r"tensor of descriptor `src` .* on cpu"):
        scale_into[(2, 2)](on_cpu, dst, 1.0, BM=16, BN=32)
    narrow = TensorDescriptor.from_tensor(src, [16, 2])
    with pytest.raises(ValueError, match="at least 16 bytes"):
        scale_into[(2, 2)](narrow, dst, 1.0, BM=16, BN=2)


def test_in_kernel_and_host_descriptors_agree():
    """A host descriptor and the same one made in the kernel (tl.make_tensor_descriptor) give
    the same values."""

    @naiad.jit
    def made_in_kernel(a_ptr, out_ptr, M, N, stride_out, BM: tl.constexpr, BN: tl.constexpr):
        src = tl.make_tensor_descriptor(a_ptr, [M, N], [N, 1], [BM, BN])
        pm = tl.program_id(0)
        pn = tl.program_id(1)
        block = src.load([pm * BM, pn * BN])
        rows = pm * BM + tl.arange(0, BM)
        cols = pn * BN + tl.arange(0, BN)
        tl.store(out_ptr + rows[:, None] * stride_out + cols[None, :], block)

    a = _random((50, 70), torch.float32, seed=3)
    host = torch.full((64, 96), 7.0, device="cuda")
    made = torch.full((64, 96), 7.0, device="cuda")
    copy_tiles[(4, 3)](TensorDescriptor.from_tensor(a, [16, 32]), host, 96, BM=16, BN=32)
    made_in_kernel[(4, 3)](a, made, 50, 70, 96, BM=16, BN=32)
    assert torch.equal(host, made)


@pytest.mark.parametrize("shape", [(64, 128), (50, 100)])
def test_block_atomic_adds_by_bulk_reductions_sum_every_program(shape):
    """Three programs add into each block by bulk tensor reductions (sm_90) or atomics: every
    addition lands, and a partial block adds nothing outside the tensor."""
    src = _random(shape, torch.float16, seed=11)
    storage = _random((shape[0] + 3, 128), torch.float32, seed=12)
    dst = storage[: shape[0]]
    expected = storage.double()
    expected[: shape[0], : shape[1]] += src.double() * 6  # times 1 + 2 + 3
    grid = (-(-shape[0] // 32), -(-shape[1] // 64), 3)
    add_into[grid](
        TensorDescriptor.from_tensor(src, [32, 64]),
        TensorDescriptor(dst, [shape[0], shape[1]], [128, 1], [32, 64]),
        BM=32,
        BN=64,
    )
    torch.testing.assert_close(storage.double(), expected, rtol=0, atol=1e-5)


def test_products_added_in_a_pipelined_loop():
    """Each step of a pipelined loop adds its product into the output by a bulk reduction:
    out = sum over programs of x_p @ b, block row by block row."""
    programs, k, n = 4, 512, 128
    x = _random((programs * 64, 64), torch.float16, seed=13)
    b = _random((k, n), torch.float16, seed=14)
    out = _random((k, n), torch.float32, seed=15)
    expected = out.double().clone()
    for p in range(programs):
        xp = x[p * 64 : (p + 1) * 64].double()
        expected += torch.cat([xp @ b[r : r + 64].double() for r in range(0, k, 64)])
    products_added[(programs,)](
        TensorDescriptor.from_tensor(x, [64, 64]),
        TensorDescriptor.from_tensor(b, [64, 128]),
        TensorDescriptor.from_tensor(out, [64, 128]),
        k,
        BK=64,
        BN=128,
        num_warps=4,
        num_stages=3,
    )
    torch.testing.assert_close(out.double(), expected, rtol=1e-3, atol=2e-2)
