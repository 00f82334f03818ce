"""Matrix products of naiad.ops (mm, addmm, bmm, baddbmm, and matmul/linear through the switch)
against a float64 reference, norm-wise (a dot product of K terms rounds K times): transposed
operands, odd sizes, an empty product; the backward of linear through torch's autograd."""

import pytest
import torch
import torch.nn.functional as F
from ops_helpers import FLOATS, assert_matches, make

import naiad.ops as ops

FULL = pytest.mark.full
DTYPES = [torch.float32] + [pytest.param(d, marks=FULL) for d in FLOATS[1:]]


def _close(actual, expected64, k):
    assert_matches(actual, expected64.to(actual.dtype), scale=4 * k**0.5, normwise=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_mm_addmm(dtype, gen, backend):
    a, b = make((37, 50), dtype, gen), make((29, 50), dtype, gen).t()  # b transposed
    expected = a.double() @ b.double()
    _close(ops.mm(a, b), expected, 50)
    bias = make((29,), dtype, gen)
    _close(ops.addmm(bias, a, b, beta=0.5, alpha=2), 0.5 * bias.double() + 2 * expected, 50)


@pytest.mark.parametrize("dtype", DTYPES)
def test_bmm_baddbmm(dtype, gen, backend):
    a, b = make((3, 20, 33), dtype, gen), make((3, 33, 17), dtype, gen)
    expected = a.double() @ b.double()
    _close(ops.bmm(a, b), expected, 33)
    c = make((20, 1), dtype, gen)
    _close(ops.baddbmm(c, a, b, beta=2), 2 * c.double() + expected, 33)


def test_empty_and_thin_products(backend):
    assert ops.mm(torch.empty(0, 4), torch.empty(4, 3)).shape == (0, 3)
    z = ops.mm(torch.empty(2, 0), torch.empty(0, 3))
    assert torch.equal(z, torch.zeros(2, 3))
    v = torch.arange(6.0).view(1, 6)
    assert_matches(ops.mm(v, v.t()), v @ v.t())


def test_linear_and_matmul_through_the_switch(gen, interpreted):
    x = make((4, 5, 24), torch.float32, gen).requires_grad_()
    w = make((16, 24), torch.float32, gen).requires_grad_()
    b = make((16,), torch.float32, gen).requires_grad_()
    g = make((4, 5, 16), torch.float32, gen)
    expected = [F.linear(x, w, b), *torch.autograd.grad(F.linear(x, w, b), (x, w, b), g)]
    with ops.use():
        y = F.linear(x, w, b)
        actual = [y, *torch.autograd.grad(y, (x, w, b), g)]
        m = torch.matmul(x, w.t())
    for a, e in zip(actual, expected, strict=True):
        assert_matches(a, e, 16, normwise=True)
    assert_matches(m, x @ w.t(), 16, normwise=True)


@pytest.mark.parametrize("k", [40, 64])
def test_mm_compiled(k, gen, compiled):
    """K not a multiple of the block's (masked loads) and a multiple (unmasked); rows and
    columns past the matrix wrap around and are never stored."""
    a, b = make((70, k), torch.float32, gen), make((k, 90), torch.float32, gen)
    _close(ops.mm(a, b), a.double() @ b.double(), k)


def test_gpu_half_products_pipeline_into_the_tensor_cores():
    """Compiled for an H100/H200 without one: each half-precision tile the products take (the
    tutorial's 128x256x64 down to 64x128x32) loads its operands by 16-byte copies, pipelined,
    into asynchronous wgmma, with no spills. The GPU's values: tests/ops/test_gpu.py."""
    import numpy as np

    import naiad.language as tl
    from naiad.ops.linalg.matmul import _HALF_TILES, matmul_kernel

    m = n = 256
    for block_m, block_n, block_k, options in _HALF_TILES:
        a, b, c = (np.zeros((m, n), np.float16) for _ in range(3))
        strides = (0, n, 1) * 4
        compiled = matmul_kernel.warmup(
            a, b, c, c, m, n, n, *strides, 1.0, 1.0, False, False, tl.float32, None, True,
            block_m, block_n, block_k, 8, grid=(1,), target="cuda:sm_90a", **options,
        )  # fmt: skip
        ttgir = compiled.asm["ttgir"]
        assert "ttg.async_copy_global_to_local" in ttgir and "isAsync = true" in ttgir
        assert compiled.n_spills in (0, None)


@pytest.mark.parametrize(
    "m, n, k, batch, tile",
    [
        (4096, 2816, 1024, 1, (128, 256)),  # 352 programs
        (2816, 1024, 1024, 1, (128, 256)),  # 88 of 132 multiprocessors: one wave of the largest
        (1024, 1024, 1024, 1, (128, 64)),  # 32 or 64 programs of the larger tiles: too few
        (4096, 256, 1024, 1, (128, 64)),
        (1024, 1024, 1024, 4, (128, 256)),  # a batch's products count together: 4 x 32
        (200, 256, 1024, 1, (64, 128)),  # nothing fills the GPU: the smallest tile
        (512, 64, 512, 128, (128, 64)),  # an N of 64: attention's weights @ V
        (16, 16, 1024, 1, (128, 64)),
        (512, 512, 64, 128, (128, 128)),  # a K of 64: Q K^T
        (2048, 128, 2048, 64, (128, 128)),  # an N of 128
    ],
)
def test_gpu_half_products_take_the_tile_their_shape_calls_for(m, n, k, batch, tile, monkeypatch):
    """The largest tile that fills the GPU, unless N or K is short (matmul._short_side_tile)."""
    from naiad.ops.linalg import matmul

    monkeypatch.setattr(matmul, "multiprocessors", lambda device: 132)  # an H200
    assert matmul._blocks(torch.device("cuda"), torch.bfloat16, m, n, k, batch)[:2] == tile


def test_products_of_one_shape_in_other_layouts(gen, backend):
    """Launches are kept per shapes and strides: the same shapes transposed, with a bias or
    scaled each get their own (a 2-dim product is not a batch's)."""
    a, b = make((12, 20), torch.float32, gen), make((20, 9), torch.float32, gen)
    bias = make((12, 1), torch.float32, gen)
    expected = a.double() @ b.double()
    for _ in range(2):
        _close(ops.mm(a, b), expected, 20)
        _close(ops.mm(a.t().contiguous().t(), b.t().contiguous().t()), expected, 20)
        _close(ops.addmm(bias, a, b), bias.double() + expected, 20)
        _close(ops.addmm(bias, a, b, alpha=3, beta=0), 3 * expected, 20)
        _close(ops.bmm(a[None], b[None])[0], expected, 20)


def test_product_shape_errors():
    a = torch.randn(2, 3)
    with pytest.raises(RuntimeError, match=r"cannot be multiplied \(2x3 and 4x5\)"):
        ops.mm(a, torch.randn(4, 5))
    with pytest.raises(RuntimeError, match="expected 2-dim operands, got 3-dim and 2-dim"):
        ops.mm(a[None], a.t())
    with pytest.raises(RuntimeError, match="expected 3-dim operands"):
        ops.bmm(a, a.t())


@pytest.mark.parametrize("batch", [None, 3])
@pytest.mark.parametrize("b_layout", ["W.t", "rows"])
def test_products_by_copied_tiles(b_layout, batch, gen, backend, monkeypatch):
    """The tensor-copy kernel (Hopper's path for half-precision products without a bias) taken
    here at small tiles, for mm and bmm: `b` as F.linear's W.t() and in rows, partial tiles on
    every side and a K the block does not divide; a second call of the kind runs the bound
    launch on new tensors."""
    from naiad.ops.linalg import matmul

    monkeypatch.setattr(matmul, "_copied_tile", lambda *args: (32, 64, 16, {}))
    monkeypatch.setattr(matmul, "_LAUNCHES", matmul.KeptTable(8))
    bound = []
    bind = matmul._bind_copied
    monkeypatch.setattr(
        matmul, "_bind_copied", lambda *args: bound.append(bind(*args)) or bound[-1]
    )
    entries = () if batch is None else (batch,)
    product = ops.mm if batch is None else ops.bmm
    for _ in range(2):
        a = make((*entries, 70, 40), torch.bfloat16, gen)
        w = make((*entries, 72, 40), torch.bfloat16, gen)
        b = w.transpose(-1, -2)
        b = b if b_layout == "W.t" else b.contiguous()
        _close(product(a, b), a.double() @ b.double(), 40)
    assert len(bound) == 1  # one plan for the kind, by tensor copies


def test_which_layouts_tensor_copies_read():
    """a in rows, b in rows or F.linear's W.t(), 16-byte row strides (8 16-bit elements)."""
    from naiad.ops.linalg.matmul import copyable_layout

    a, w = torch.empty(64, 40), torch.empty(72, 40)
    assert copyable_layout(a, w.t(), 72) and copyable_layout(a, w.t().contiguous(), 72)
    assert not copyable_layout(a.t(), w, 64)  # a in columns
    assert not copyable_layout(torch.empty(64, 44)[:, :40], w.t(), 72)  # a's rows 44 apart
    assert not copyable_layout(a, torch.empty(70, 40).t(), 70)  # the result's rows 70 apart
    batch, weights = torch.empty(3, 64, 40), torch.empty(3, 72, 40)
    assert copyable_layout(batch, weights.transpose(1, 2), 72)
    assert not copyable_layout(batch, w.t().expand(3, 40, 72), 72)  # b broadcast over the batch
    assert not copyable_layout(torch.empty(3, 64, 44)[:, :, :40], weights.transpose(1, 2), 72)
    assert not copyable_layout(a, torch.empty(40, 144)[:, ::2], 72)  # b strided both ways
