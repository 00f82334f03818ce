"""The whole-block kernels' launches (whole_blocks.py, whole_backward.py) bound to their kind of
call (JITFunction.bind_launch), so that a call of a kind seen before makes no descriptor.

Where the whole-block kernels take a call (flash._whole_tiles), each descriptor they read covers a
contiguous tensor's heads (`[heads, length, E]`, strides `[length * E, E, 1]`) in blocks the tiles
fix, and the heads follow from the shapes: the kind of call (dtype, device, shapes, flags, scale,
tiles) fixes every descriptor's geometry, the grid and every scalar. Its bound launch takes the
tensors alone (`described`), so a call neither makes its descriptors (15 a forward and backward,
each ~1.3 us on the development CPU, ~2.5 on the H200's host) nor keys them and the scalars; it
still keys each tensor's 16-byte alignment (and the log-sum-exp's and delta's dtype and device), and
a new alignment takes the launch entry once. What the kind fixes of a descriptor's tensor, its dtype
and device, holds by the Problem's checks (k and v of q's dtype), the key (the inputs' devices) and
the callers (the results allocated as q; the backward takes the whole blocks for an output gradient
of q's dtype and device alone). The backward's delta kernel (pointers, whichever kernels follow it)
is bound too, its tensors keyed by dtype, device and alignment; the general kernels keep
`kernel[grid](...)`.
"""

from __future__ import annotations

from ..kept import KeptTable

__all__ = ["run"]

# Bound launches by kernel, tiles and kind of call; forgotten past 256 kinds.
_LAUNCHES = KeptTable(256)


def run(p, kernel: str, blocks: tuple, sample, tensors: tuple):
    """Launch `kernel` ("forward", "dkdv", "dq": the whole-block kernels; "delta") of problem
    `p` at `blocks` (its block sizes) on `tensors`, its first parameters' tensors in order (a
    descriptor's as its tensor); `sample()` gives the launch as flash makes it, (kernel, grid,
    arguments, options), the first time a kind of call is seen."""
    kind = p.kind
    if kind is None:  # once per problem: its forward and backward launch three or four kernels
        q = p.q
        kind = p.kind = (q.dtype, q.device, p.k.device, p.v.device, p.batches, p.H, p.group,
                         p.L, p.S, p.E, p.causal, p.scale_log2)  # fmt: skip
    key = (kernel, blocks, kind)
    launch = _LAUNCHES.get(key)
    if launch is None:
        jit_function, grid, arguments, options = sample()
        varying = [param.name for param in jit_function.params[: len(tensors)]]
        described = [name for name in varying if name.endswith("_desc")]
        launch = _LAUNCHES.put(key, jit_function.bind_launch(
            varying, grid, *arguments, described=described, **options
        ))  # fmt: skip
    return launch(*tensors)
