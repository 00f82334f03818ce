"""cat and stack: every input copied into its slice of the result by one launch of joined.py's
kernel where it can (inputs of the result's dtype whose dims before and after the joined one
fold), else each by the pointwise facility's copy (convert.py), which writes through the
slice's strides."""

from __future__ import annotations

import torch

from ..allocate import empty
from ..convert import to
from ..dtypes import Kind, computation_dtypes
from ..kept import KeptTable
from ..reduce.rows import normalized_dims
from ..registry import aten
from .joined import joined_launch

__all__ = ["cat", "stack"]


# What one kind of call decides (each input's dtype, device, shape and strides, and the dim as
# given): the result's shape, dtype and device, the dim, each input's slice of the result (its
# position in the call, offset and size along the dim; empty inputs have none) and joined.py's
# launches (None: a copy per input). A call of a known kind allocates and copies, without the
# dtypes' promotion and the shapes' sums.
_PLANS = KeptTable(1024)


@aten("cat.default", "cat.out")
def cat(tensors, dim=0, *, out=None):
    """The tensors joined along `dim` (1-dim empty tensors skipped, as torch does)."""
    key = None
    if out is None:
        key = (dim,)
        for t in tensors:
            key += (t.dtype, t.device, t.shape, t.stride())
        plan = _PLANS.get(key)
        if plan is not None:
            return _joined(tensors, *plan)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    kept = [i for i, t in enumerate(tensors) if not (t.dim() == 1 and t.numel() == 0)]
    positions = kept or range(len(tensors))
    joined = [tensors[i] for i in positions]
    (axis,) = normalized_dims(dim, joined[0].dim())
    _check_joinable(joined, axis, positions)
    dtype = computation_dtypes(joined, Kind.NO_OPMATH)[1] if len(joined) > 1 else None
    dtype = dtype or joined[0].dtype
    shape = list(joined[0].shape)
    shape[axis] = sum(t.shape[axis] for t in joined)
    slices, offset = [], 0
    for i in positions:
        size = tensors[i].shape[axis]
        if tensors[i].numel():
            slices.append((i, offset, size))
        offset += size
    layout = _memory_format(joined)
    plan = (shape, dtype, joined[0].device, layout, axis, tuple(slices))
    if key is None:
        if not torch.can_cast(dtype, out.dtype):  # as torch refuses it (not truncated)
            raise TypeError(
                f"torch.cat(): input types can't be cast to the desired output type {out.dtype}"
            )
        out.resize_(shape)
        return _joined(tensors, *plan, None, out)
    result = _allocated(shape, dtype, joined[0].device, layout)
    launches = joined_launch(tensors, result, axis, slices)
    _PLANS.put(key, (*plan, launches))
    return _joined(tensors, *plan, launches, result)


def _memory_format(joined):
    """The layout of cat's result, as torch chooses it: the format the inputs suggest where
    they all suggest one (channels-last images joined stay channels-last), else contiguous."""
    formats = {_suggested_format(t) for t in joined}
    return formats.pop() if len(formats) == 1 else torch.contiguous_format


def _suggested_format(t):
    """Channels-last (2-D or 3-D images) where `t` is laid out so and not also contiguous."""
    fmt = {4: torch.channels_last, 5: torch.channels_last_3d}.get(t.dim())
    if fmt is None or t.is_contiguous() or not t.is_contiguous(memory_format=fmt):
        return torch.contiguous_format
    return fmt


def _allocated(shape, dtype, device, memory_format):
    if memory_format == torch.contiguous_format:
        return empty(shape, dtype, device)
    return torch.empty(shape, dtype=dtype, device=device, memory_format=memory_format)


def _check_joinable(joined, axis: int, positions) -> None:
    """torch's errors for inputs that do not join along `axis`: ranks, devices or sizes along
    the other dims unlike the first's."""
    first = joined[0]
    for position, t in zip(positions, joined):
        if t.dim() != first.dim():
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {first.dim()} and {t.dim()}"
            )
        if t.device != first.device:
            raise RuntimeError(
                "Expected all tensors to be on the same device, but found at least two devices, "
                f"{first.device} and {t.device}!"
            )
        for d, (size, expected) in enumerate(zip(t.shape, first.shape)):
            if d != axis and size != expected:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {axis}. Expected size "
                    f"{expected} but got size {size} for tensor number {position} in the list."
                )


def _joined(tensors, shape, dtype, device, memory_format, dim, slices, launches, out=None):
    """Each input copied into its slice of the result (`out`, resized, or allocated): by the
    plan's `launches` (joined.py: one per PARTS inputs), else each by the facility's copy."""
    if out is None:
        out = _allocated(shape, dtype, device, memory_format)
    if launches:
        for launch, positions in launches:
            launch(out, *[tensors[p] for p in positions])
        return out
    for i, offset, size in slices:
        to(tensors[i], out.dtype, out=out.narrow(dim, offset, size))
    return out


def stack(tensors, dim=0):
    """The tensors joined along a new dim."""
    if not tensors:
        raise ValueError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        if t.shape != tensors[0].shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} "
                f"at entry 0 and {list(t.shape)} at entry {i}"
            )
    (dim,) = normalized_dims(dim, tensors[0].dim() + 1)
    return cat([t.unsqueeze(dim) for t in tensors], dim)
