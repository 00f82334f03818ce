"""torch.multinomial: indices drawn from the categorical distributions the rows of a matrix (or
one vector) of non-negative weights give, with or without replacement.

With replacement, each sample is one uniform draw u from Philox (random.py's seed, so
`torch.manual_seed` makes runs repeat): scaled by the row's total, it falls in one category's
interval of the cumulative weights, and the category is the number of intervals that end at or
below it. The cumulative sums are made in one order for the total and for the counting, so
the last positive category's interval always ends at the total, above every u·total; a category
of weight 0 has an empty interval and is never drawn.

Without replacement, the categories race (Efraimidis and Spirakis): category c gets the key
log(u_c) / w_c for one uniform draw u_c, and the `num_samples` largest keys, largest first, are
the samples, distributed as drawing one category at a time and removing it (torch's order is
the order of the draws). Categories of weight 0 get -inf and come last.

As with random.py's ops, the streams are Naiad's: a seed gives other samples than torch's
kernels, equally distributed. The weights' values (no inf, NaN or negative, a positive total,
enough positive categories to draw without replacement) are checked where they are on the CPU,
as torch does; on a GPU reading them would wait for the device, and they are the caller's promise.
"""

from __future__ import annotations

import torch

from .. import language as tl
from ..runtime.jit import jit
from .device_kind import device_kind
from .dtypes import tl_dtype
from .indexing.sort import topk
from .random import draw_seed
from .registry import aten

__all__ = ["multinomial"]

# Categories a program reads at a time; the largest block of samples a program draws (a GPU's
# program compares its samples with a block of categories in registers; a CPU's, and the
# interpreter's, is a loop that long blocks serve best); race keys a program makes.
_CATEGORY_BLOCK = 256
_SAMPLE_BLOCK = {"cpu": 1024, "cuda": 64}
_KEY_BLOCK = {"cpu": 4096, "cuda": 1024}
# The most categories torch.multinomial accepts (an index exact in a float32's mantissa).
MAX_CATEGORIES = 1 << 24


@jit(do_not_specialize=["n_cat", "num_samples", "row_stride", "seed"])
def _with_replacement_kernel(weights, out, n_cat, num_samples, row_stride, seed,
                             SAMPLES: tl.constexpr, CATEGORIES: tl.constexpr):  # fmt: skip
    row = tl.program_id(0).to(tl.int64)
    samples = tl.program_id(1) * SAMPLES + tl.arange(0, SAMPLES)
    row_weights = weights + row * row_stride
    # The total, summed chunk by chunk exactly as the counting below sums, and the last
    # category of positive weight (the draw that rounds up to the total takes it).
    total = 0.0
    last = -1
    for start in range(0, n_cat, CATEGORIES):
        c = start + tl.arange(0, CATEGORIES)
        w = tl.load(row_weights + c, mask=c < n_cat, other=0).to(tl.float32)
        total = total + tl.max(tl.cumsum(w, 0), 0)
        last = tl.maximum(last, tl.max(tl.where(w > 0, c, -1), 0))
    u = tl.rand(seed, row * num_samples + samples) * total
    below = tl.zeros((SAMPLES,), tl.int32)
    ends = 0.0
    for start in range(0, n_cat, CATEGORIES):
        c = start + tl.arange(0, CATEGORIES)
        w = tl.load(row_weights + c, mask=c < n_cat, other=0).to(tl.float32)
        cumulative = ends + tl.cumsum(w, 0)
        ended = (cumulative[None, :] <= u[:, None]) & (c < n_cat)[None, :]
        below += tl.sum(ended.to(tl.int32), 1)
        ends = ends + tl.max(tl.cumsum(w, 0), 0)
    drawn = tl.minimum(below, last).to(tl.int64)
    tl.store(out + row * num_samples + samples, drawn, mask=samples < num_samples)


@jit(do_not_specialize=["n", "seed"])
def _race_keys_kernel(weights, keys, n, seed, BLOCK: tl.constexpr):
    # Element i of the contiguous (rows, categories) weights, its own uniform draw.
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = i < n
    w = tl.load(weights + i, mask=inside, other=0).to(tl.float32)
    key = tl.where(w > 0, tl.log(tl.rand(seed, i)) / w, float("-inf"))
    tl.store(keys + i, key, mask=inside)


def _check(weights: torch.Tensor, num_samples: int, replacement: bool) -> None:
    """torch's argument errors, and its value checks where the weights are on the CPU."""
    if weights.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not weights.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{weights.dtype}")  # fmt: skip
    n_cat = weights.shape[-1]
    if n_cat > MAX_CATEGORIES:
        raise RuntimeError(f"number of categories cannot exceed 2^24, got {n_cat}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > n_cat:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
        )
    if weights.device.type != "cpu" or not weights.numel():
        return
    rows = weights.reshape(-1, n_cat).double()
    if not torch.isfinite(rows).all() or (rows < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (rows.sum(1) <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and ((rows > 0).sum(1) < num_samples).any():
        raise RuntimeError("invalid multinomial distribution (with replacement=False, not enough "
                           "non-negative category to sample)")  # fmt: skip


@aten("multinomial.default")
def multinomial(input, num_samples, replacement=False, *, generator=None):
    """`num_samples` category indices (int64) per row of `input`'s weights: (rows, num_samples)
    for a matrix, (num_samples,) for a vector."""
    _check(input, num_samples, replacement)
    tl_dtype(input.dtype)
    weights = input.reshape(-1, input.shape[-1]).contiguous()
    rows, n_cat = weights.shape
    out = torch.empty(rows, num_samples, dtype=torch.int64, device=input.device)
    seed = draw_seed(generator)
    kind = device_kind(input.device)
    if rows and (replacement or num_samples == 1):
        block = min(_SAMPLE_BLOCK[kind], 1 << (num_samples - 1).bit_length())
        grid = (rows, -(-num_samples // block))
        _with_replacement_kernel[grid](weights, out, n_cat, num_samples, weights.stride(0), seed,
                                       block, _CATEGORY_BLOCK)  # fmt: skip
    elif rows:
        keys = torch.empty(rows, n_cat, dtype=torch.float32, device=input.device)
        block = _KEY_BLOCK[kind]
        _race_keys_kernel[(-(-keys.numel() // block),)](weights, keys, keys.numel(), seed, block)
        out = topk(keys, num_samples, dim=1)[1]
    return out if input.dim() == 2 else out.reshape(num_samples)
