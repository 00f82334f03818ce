"""nll_loss, forward and backward (ATen's nll_loss_forward and nll_loss_backward): with
log_softmax, torch's cross_entropy (label smoothing and ignore_index included) is made of them.

One kernel gathers each sample's log-probability at its target and its class weight (0 where
the target is ignore_index); the reductions are Naiad's sums. Up to _ONE_PROGRAM_SAMPLES
samples, the mean and the sum are one program instead, which gathers, sums and divides (a
training step's loss: one launch where the gather, four sums, a division and two conversions
took eight, each a small op's host time). The backward writes the whole gradient in one launch:
each row's one nonzero, -weight * grad (/ total weight for the mean), and its zeros (a launch
of torch's zeros first and a scatter took two).
"""

from __future__ import annotations

import torch

from ... import language as tl
from ...errors import KernelAssertionError
from ...runtime.jit import jit
from .. import index_range
from ..allocate import empty, written_to
from ..dtypes import Unsupported, tl_dtype
from ..kept import KeptTable
from ..reduce import sum as _sum
from ..registry import aten

__all__ = ["nll_loss"]

_BLOCK = 256
# The kernels call the class indices `labels`: a kernel parameter named `target` is taken by
# JITFunction.run's own `target=` keyword when a launch misses the hot path.
NONE, MEAN, SUM = 0, 1, 2  # ATen's reduction codes


@jit
def _samples(labels, first, N, C, ignore, BLOCK: tl.constexpr):
    """(i, inside, valid, t) of the block of samples from `first`: inside where i < N, valid
    where also the target is not `ignore`, t the target (0 where not valid), each valid one
    asserted a class of the C (index_range.py)."""
    i = first + tl.arange(0, BLOCK)
    inside = i < N
    t = tl.load(labels + i, mask=inside, other=ignore)
    valid = inside & (t != ignore)
    tl.device_assert(~valid | ((t >= 0) & (t < C)), "Target out of bounds")
    return i, inside, valid, tl.where(valid, t, 0)


@jit(do_not_specialize=["N", "ignore"])
def _gather_kernel(x, labels, weight, loss, picked, N, C, s_n, s_c, ignore,
                   HAS_WEIGHT: tl.constexpr, ACC: tl.constexpr, BLOCK: tl.constexpr):  # fmt: skip
    i, inside, valid, t = _samples(labels, tl.program_id(0) * BLOCK, N, C, ignore, BLOCK)
    v = tl.load(x + i * s_n + t * s_c, mask=valid, other=0).to(ACC)
    if HAS_WEIGHT:
        w = tl.load(weight + t, mask=valid, other=0).to(ACC)
    else:
        w = tl.where(valid, 1.0, 0.0)
    tl.store(loss + i, (-w * v).to(loss.dtype.element_ty), mask=inside)
    tl.store(picked + i, w, mask=inside)


@jit(do_not_specialize=["ignore"])
def _loss_kernel(x, labels, weight, loss, total, N, C, s_n, s_c, ignore, MEAN: tl.constexpr,
                 HAS_WEIGHT: tl.constexpr, ACC: tl.constexpr, BLOCK: tl.constexpr):  # fmt: skip
    """One program over every sample: `total` = the sum of the valid samples' weights, `loss`
    = the sum of -weight * x[i, t] over them (divided by `total` for the MEAN), each stored
    in its tensor's dtype."""
    losses = tl.zeros([BLOCK], ACC)
    weights = tl.zeros([BLOCK], ACC)
    for first in range(0, N, BLOCK):
        i, _, valid, t = _samples(labels, first, N, C, ignore, BLOCK)
        v = tl.load(x + i * s_n + t * s_c, mask=valid, other=0).to(ACC)
        if HAS_WEIGHT:
            w = tl.load(weight + t, mask=valid, other=0).to(ACC)
        else:
            w = tl.where(valid, 1.0, 0.0)
        losses += -w * v
        weights += w
    summed = tl.sum(losses, 0)
    weighed = tl.sum(weights, 0)
    if MEAN:
        summed = summed / weighed
    tl.store(loss, summed.to(loss.dtype.element_ty))
    tl.store(total, weighed.to(total.dtype.element_ty))


@jit(do_not_specialize=["N", "ignore"])
def _grad_kernel(grad, labels, weight, out, N, C, s_g, ignore, total, MEAN: tl.constexpr,
                 HAS_WEIGHT: tl.constexpr, ACC: tl.constexpr, ROWS: tl.constexpr,
                 BLOCK_C: tl.constexpr):  # fmt: skip
    """The (N, C) gradient, contiguous, a ROWS x BLOCK_C tile a program: each row's one
    nonzero, -weight * grad (/ total for the MEAN) at its target, and zeros."""
    i, inside, valid, t = _samples(labels, tl.program_id(0) * ROWS, N, C, ignore, ROWS)
    g = tl.load(grad + i * s_g, mask=valid, other=0).to(ACC)
    w = tl.load(weight + t, mask=valid, other=0).to(ACC) if HAS_WEIGHT else 1.0
    result = -w * g
    if MEAN:  # divided by the total weight, read as stored (a float argument would be fp32)
        result = result / tl.load(total).to(ACC)
    c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    hit = valid[:, None] & (c[None, :] == t[:, None])
    value = tl.where(hit, result[:, None], 0.0)
    mask = inside[:, None] & (c[None, :] < C)
    tl.store(out + i[:, None] * C + c[None, :], value.to(out.dtype.element_ty), mask=mask)


def _as_rows(input, target, weight, ignore_index):
    """(input as (N, C) rows, the targets as N contiguous indices: the kernels read target i
    at `labels + i`), after torch's checks: as many targets as samples and a weight per class
    (that each target is a class or `ignore_index` the kernels assert: `_checked`)."""
    if input.dim() not in (1, 2) or target.dim() != input.dim() - 1:
        raise Unsupported("nll_loss of more than two dims (nll_loss2d)")
    tl_dtype(input.dtype)
    if input.dim() == 2 and target.shape[0] != input.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
            f"({target.shape[0]})."
        )
    classes = input.shape[-1]
    if weight is not None and weight.numel() != classes:
        raise RuntimeError(
            f"weight tensor should be defined either for all {classes} classes or no classes "
            f"but got weight tensor of shape: {list(weight.shape)}"
        )
    if not target.is_contiguous():  # a column of a label table was read as its first items
        target = target.contiguous()
    return (input[None], target[None]) if input.dim() == 1 else (input, target)


# At most this many samples take the one-program loss (the mean and the sum): a GPU's one
# program walks them in blocks of _ONE_PROGRAM_BLOCK, 64 blocks at most.
_ONE_PROGRAM_SAMPLES = 65536
_ONE_PROGRAM_BLOCK = 1024
# The one-program loss's and the backward's launches per kind of call (the input's shape,
# dtype and device, its strides or the gradient's, the target's dtype, the weight's presence,
# the reduction, ignore_index), bound to it (JITFunction.bind_launch). Forgotten past
# 256 kinds.
_LAUNCHES = KeptTable(256)


def _one_program_loss(x, t, weight, reduction, ignore_index, dtype):
    """(loss, total weight) of the mean or the sum, 0-dim in `dtype`, in one launch."""
    key = (_loss_kernel, x.shape, x.stride(), x.dtype, x.device, t.dtype, weight is None,
           reduction, ignore_index)  # fmt: skip
    loss = empty((), dtype, x.device)
    total = empty((), dtype, x.device)
    w = weight if weight is not None else x
    launch = _LAUNCHES.get(key)
    if launch is None:
        n = t.shape[0]
        block = min(_ONE_PROGRAM_BLOCK, max(16, 1 << (n - 1).bit_length()))
        acc = tl_dtype(torch.float64 if x.dtype == torch.float64 else torch.float32)
        launch = _LAUNCHES.put(key, _loss_kernel.bind_launch(
            ("x", "labels", "weight", "loss", "total"), (1,), x, t, w, loss, total, n,
            x.shape[1], *x.stride(), ignore_index, reduction == MEAN, weight is not None, acc,
            block, **index_range.KERNEL_CHECKS,
        ))  # fmt: skip
    launch(x, t, w, loss, total)
    return loss, total


@aten("nll_loss_forward.default", "nll_loss_forward.output")
def nll_loss_forward(input, target, weight, reduction, ignore_index, *, output=None,
                     total_weight=None):  # fmt: skip
    """(loss, total weight) of the log-probabilities `input` at `target`."""
    x, t = _as_rows(input, target, weight, ignore_index)
    try:
        loss, total = _forward(input, x, t, weight, reduction, ignore_index, output)
    except KernelAssertionError as failure:
        raise _outside(failure, t, x.shape[1], ignore_index) from None
    return written_to(loss, output), written_to(total, total_weight)


def _outside(failure, t, classes: int, ignore_index: int) -> Exception:
    """torch's IndexError for a target that is no class where a kernel's assert stopped
    (index_range.refusal)."""

    def error(target: int) -> Exception:
        return IndexError(f"Target {target} is out of bounds.")

    return index_range.refusal(failure, t, 0, classes, error, ignore_index)


def _forward(input, x, t, weight, reduction, ignore_index, output):
    """nll_loss_forward's (loss, total weight) of `input` as the rows `x` at the targets `t`."""
    n = t.shape[0]
    if reduction != NONE and 0 < n <= _ONE_PROGRAM_SAMPLES and output is None:
        return _one_program_loss(x, t, weight, reduction, ignore_index, input.dtype)
    losses = torch.empty(n, dtype=input.dtype, device=input.device)
    acc = torch.float64 if input.dtype == torch.float64 else torch.float32
    picked = torch.empty(n, dtype=acc, device=input.device)
    if n:
        w = weight if weight is not None else x
        _gather_kernel[((n + _BLOCK - 1) // _BLOCK,)](
            x, t, w, losses, picked, n, x.shape[1], *x.stride(), ignore_index,
            weight is not None, tl_dtype(acc), _BLOCK, **index_range.KERNEL_CHECKS,
        )  # fmt: skip
    total = _sum(picked).to(input.dtype)
    if reduction == NONE:
        loss = losses if input.dim() == 2 else losses[0]
    elif reduction == SUM:
        loss = _sum(losses)
    else:
        loss = (_sum(losses, dtype=acc) / _sum(picked)).to(input.dtype)
    return loss, total


@aten("nll_loss_backward.default", "nll_loss_backward.grad_input")
def nll_loss_backward(grad_output, input, target, weight, reduction, ignore_index, total_weight,
                      *, grad_input=None):  # fmt: skip
    x, t = _as_rows(input, target, weight, ignore_index)
    n, c = x.shape
    out = empty(input.shape, input.dtype, input.device)
    if n and c:
        # grad_output is one value (the mean's, the sum's: read at stride 0) or one per sample
        g = grad_output if grad_output.dim() <= 1 else grad_output.reshape(-1)
        key = (_grad_kernel, x.shape, x.dtype, x.device, t.dtype, g.shape, g.stride(),
               weight is None, reduction, ignore_index)  # fmt: skip
        w = weight if weight is not None else x
        launch = _LAUNCHES.get(key)
        if launch is None:
            launch = _LAUNCHES.put(key, _grad_launch(g, t, w, out, total_weight, reduction,
                                                     ignore_index, weight is not None))  # fmt: skip
        try:
            launch(g, t, w, out, total_weight)
        except KernelAssertionError as failure:
            raise _outside(failure, t, c, ignore_index) from None
    return written_to(out, grad_input)


def _grad_launch(g, t, w, out, total, reduction, ignore_index, has_weight):
    """The backward's launch bound to its kind of call: tiles of about 4096 elements."""
    n, c = t.shape[0], out.shape[-1]
    block_c = min(1024, 1 << (c - 1).bit_length())
    rows = min(max(1, 4096 // block_c), 1 << (n - 1).bit_length())
    grid = ((n + rows - 1) // rows, (c + block_c - 1) // block_c)
    s_g = g.stride(0) if reduction == NONE and g.dim() else 0
    acc = tl_dtype(torch.float64 if out.dtype == torch.float64 else torch.float32)
    return _grad_kernel.bind_launch(
        ("grad", "labels", "weight", "out", "total"), grid, g, t, w, out, n, c, s_g,
        ignore_index, total, reduction == MEAN, has_weight, acc, rows, block_c,
        **index_range.KERNEL_CHECKS,
    )  # fmt: skip


def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    """torch.nn.functional.nll_loss's signature for (N, C) or (C,) log-probabilities (forward
    only; through the switch torch's autograd calls the registered backward)."""
    code = {"none": NONE, "mean": MEAN, "sum": SUM}[reduction]
    return nll_loss_forward(input, target, weight, code, ignore_index)[0]
