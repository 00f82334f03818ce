"""Host-made tensor descriptors (`naiad.tools.tensor_descriptor.TensorDescriptor`) as kernel
arguments."""

import numpy as np
import pytest
import torch

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.tools.tensor_descriptor import TensorDescriptor


@naiad.jit
def _scale_tiles(desc, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    block = desc.load([pm * BM, pn * BN])
    offs_m = pm * BM + tl.arange(0, BM)
    offs_n = pn * BN + tl.arange(0, BN)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(out_ptr + offs_m[:, None] * N + offs_n[None, :], block * 2, mask=mask)


@naiad.jit
def _store_tiles(desc, value, BM: tl.constexpr, BN: tl.constexpr):
    desc.store([tl.program_id(0) * BM, tl.program_id(1) * BN], tl.full((BM, BN), value, tl.float32))


@pytest.mark.parametrize("make", [np.asarray, torch.from_numpy])
def test_descriptor_loads_whole_and_edge_tiles(make):
    a = np.random.default_rng(0).random((50, 70), dtype=np.float32) + 0.5
    out = np.full_like(a, np.nan)
    _scale_tiles[(4, 3)](TensorDescriptor.from_tensor(make(a), [16, 32]), out, 50, 70, BM=16, BN=32)
    np.testing.assert_array_equal(out, a * 2)


def test_descriptor_store_never_writes_outside_the_shape():
    storage = np.full((40, 48), -1.0, np.float32)
    view = storage[:20, :24]  # a strided window: the descriptor covers only it
    _store_tiles[(2, 1)](TensorDescriptor(view, [20, 24], [48, 1], [16, 32]), 3.5, BM=16, BN=32)
    assert (storage[:20, :24] == 3.5).all()
    assert (storage[20:, :] == -1).all() and (storage[:, 24:] == -1).all()


def test_descriptor_arguments_are_checked():
    a = np.ones((16, 16), np.float32)
    with pytest.raises(ValueError, match="contiguous"):
        TensorDescriptor(a, [16, 16], [1, 16], [16, 16])
    with pytest.raises(ValueError, match="16 bytes"):
        _scale_tiles[(1, 1)](TensorDescriptor.from_tensor(a, [16, 2]), a, 16, 16, BM=16, BN=2)


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
def test_a_block_under_16_bytes_wide_is_refused_by_every_executor(backend):
    """The GPU's rule for descriptor blocks holds wherever the kernel runs, so a kernel that
    passes on the CPU does not fail on the GPU for it."""
    a = np.ones((16, 16), np.float32)
    with knobs.override(NAIAD_BACKEND=backend), pytest.raises(ValueError, match="2 x 4 bytes"):
        _scale_tiles[(1, 1)](TensorDescriptor.from_tensor(a, [16, 2]), a, 16, 16, BM=16, BN=2)
