"""one_hot: class indices as rows of zeros with a one at the index (int64, as torch's). Each
program writes a tile of the rows (row_blocks.py) and asserts its indices are classes
(index_range.py: on the CPU torch's error, on a GPU the device's assert, where two reads of the
indices' extremes had waited for it: 0.09 ms a call on an H200, torch's 0.02); num_classes=-1
takes the largest index plus one, which reads the indices on the host as torch does."""

from __future__ import annotations

import torch

from ... import language as tl
from ...errors import KernelAssertionError
from ...runtime.jit import jit
from .. import index_range
from ..indexing.row_blocks import tile, tiles_and_grid

__all__ = ["one_hot"]


@jit(do_not_specialize=["N", "C"])
def _one_hot_kernel(index, out, N, C, BLOCK_N: tl.constexpr, BLOCK_C: tl.constexpr):
    _, n, c, mask = tile(1, N, C, 1, BLOCK_N, BLOCK_C)
    j = tl.load(index + n, mask=n < N).to(tl.int64)
    tl.device_assert((j >= 0) & (j < C), "Class values must be smaller than num_classes.")
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
    out = torch.empty(flat.numel(), num_classes, dtype=torch.int64, device=tensor.device)
    if not out.numel():
        index_range.check_on_host(flat, 0, num_classes, _no_class)
    else:
        _, block_n, block_c, grid = tiles_and_grid(1, flat.numel(), num_classes, out.device)
        try:
            _one_hot_kernel[grid](flat, out, flat.numel(), num_classes, block_n, block_c,
                                  **index_range.KERNEL_CHECKS)  # fmt: skip
        except KernelAssertionError as failure:
            raise _outside(failure, flat, num_classes) from None
    return out.view(*tensor.shape, num_classes)


def _outside(failure, flat, num_classes: int) -> Exception:
    """torch's error for the first index that is no class, where the kernel's assert stopped."""
    return index_range.refusal(failure, flat, 0, num_classes, _no_class)


def _no_class(index: int) -> Exception:
    if index < 0:
        return RuntimeError("Class values must be non-negative.")
    return RuntimeError("Class values must be smaller than num_classes.")
