"""one_hot: class indices as rows of zeros with a one at the index (int64, as torch's). Each
program writes a block of one index's row; num_classes=-1 takes the largest index plus one,
which reads the indices on the host as torch does."""

from __future__ import annotations

import torch

from ... import language as tl
from ...runtime.jit import jit
from ..indexing.row_blocks import tile, tiles_and_grid

__all__ = ["one_hot"]


@jit(do_not_specialize=["N", "C"])
def _one_hot_kernel(index, out, N, C, BLOCK_N: tl.constexpr, BLOCK_C: tl.constexpr):
    _, n, c, mask = tile(1, N, C, 1, BLOCK_N, BLOCK_C)
    j = tl.load(index + n, mask=n < N).to(tl.int64)
    tl.store(out + n * C + c, (c == j).to(tl.int64), mask=mask)


def one_hot(tensor, num_classes=-1):
    """torch.nn.functional.one_hot: shape tensor.shape + (num_classes,)."""
    if tensor.dtype != torch.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    flat = tensor.reshape(-1).contiguous()
    if num_classes == -1:
        if not flat.numel():
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(flat.max()) + 1
    if flat.numel() and (int(flat.min()) < 0 or int(flat.max()) >= num_classes):
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = torch.empty(flat.numel(), num_classes, dtype=torch.int64, device=tensor.device)
    if out.numel():
        _, block_n, block_c, grid = tiles_and_grid(1, flat.numel(), num_classes, out.device)
        _one_hot_kernel[grid](flat, out, flat.numel(), num_classes, block_n, block_c)
    return out.view(*tensor.shape, num_classes)
