"""A tensor descriptor's fp16/bf16 `atomic_max` / `atomic_min` on the GPU: a compare-and-swap
loop per element (lowering/atomics.py), many programs racing into one block, on random values
with ties, negatives, zeros of either sign, infinities and NaN. Compared bit for bit (any NaN
equals any NaN) with the NumPy reference of tests/fixture_kernels/half_extremes.py, which the
language tier checks the interpreter against; host and in-kernel descriptors, whole and partial
blocks.

Run on the GPU machine: `scripts/gpu-check OUTDIR` (or `python3 -m pytest tests/gpu -m gpu`).
"""

import zlib

import numpy as np
import pytest
import torch
from fixture_kernels.half_extremes import assert_same, race_into_block, reference, special_values
from gpu_helpers import compiled  # noqa: F401  (the fixture: launches compile for the GPU)

from naiad.tools.tensor_descriptor import TensorDescriptor

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def hopper():
    """Triton takes these atomics from sm_90 on (Hopper's bulk tensor reduction) only."""
    if torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("a tensor descriptor's 16-bit float min/max needs sm_90 or later")


_TORCH = {"float16": torch.float16, "bfloat16": torch.bfloat16}


def _to_cuda(array: np.ndarray, dtype: str) -> torch.Tensor:
    """The array's bits as a CUDA tensor of `dtype` (torch reads no ml_dtypes array)."""
    return torch.from_numpy(array.view(np.int16).copy()).cuda().view(_TORCH[dtype])


def _to_numpy(tensor: torch.Tensor, like: np.ndarray) -> np.ndarray:
    return tensor.view(torch.int16).cpu().numpy().view(like.dtype)


@pytest.mark.parametrize("descriptor", ["host", "kernel"])
@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize(
    "shape, block, offsets, programs",
    [
        ((40, 96), (16, 64), (8, 16), 64),
        ((20, 56), (8, 32), (-3, 30), 33),  # a partial block: the part outside is left alone
        ((1, 64), (1, 64), (0, 0), 128),
    ],
)
def test_racing_programs_give_the_reference(descriptor, op, dtype, shape, block, offsets, programs):
    gen = np.random.default_rng(zlib.crc32(f"{descriptor}{op}{dtype}{shape}".encode()))
    dst = special_values(shape, dtype, gen)
    src = special_values((programs, *block), dtype, gen)
    expected = reference(dst, src, *offsets, op)
    out = _to_cuda(dst, dtype)
    desc = TensorDescriptor.from_tensor(out, list(block)) if descriptor == "host" else None
    race_into_block[(programs,)](desc, out, _to_cuda(src, dtype), *shape, *offsets, op, *block)
    torch.cuda.synchronize()
    assert_same(_to_numpy(out, dst), expected)


@pytest.mark.parametrize("op", ["max", "min"])
def test_the_loop_ends_when_every_program_writes_the_same_elements(op):
    """1024 programs of one 1 x 8 block into the same 8 elements: of the compare-and-swaps on
    an element, all but one a round fail, and every program still ends, with the extreme of
    all."""
    gen = np.random.default_rng(5)
    dst = special_values((1, 8), "float16", gen)
    src = (gen.standard_normal((1024, 1, 8)) * 100).astype(np.float16)
    expected = reference(dst, src, 0, 0, op)
    out = _to_cuda(dst, "float16")
    race_into_block[(1024,)](None, out, _to_cuda(src, "float16"), 1, 8, 0, 0, op, 1, 8)
    torch.cuda.synchronize()
    assert_same(_to_numpy(out, dst), expected)
