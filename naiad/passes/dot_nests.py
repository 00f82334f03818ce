"""Which `tt.flatten` nests with a dot `fuse-nested-loops` keeps (its `except_dots` and
`shared_bytes`): the GPU's choices, see its ttgir_pipeline.

- "all": every nest with a dot (below wgmma: fused, the dot would stay synchronous);
- "tensor-maps": those whose loads are block loads through tensor maps (as nests they ran at
  Triton's speed or above, sm_90a), and, where `shared_bytes` is given, those whose fused loop
  would not fit in that much shared memory: two K steps of the dots' operands (the fewest the
  pipeliner's rings hold) beside the largest block the epilogue stores, which a fused loop's
  epilogue stages in buffers of its own while the rings are live (a nest's reused the rings'
  bytes). Tutorial 09's 128x256x128 tile: 2 x 96 KB + 64 KB, over an H100's 227 KB;
- "none": no nest.
"""

from __future__ import annotations

from ..dialects import scf, tt
from ..ir import Operation, RankedTensorType

EXCEPT_DOTS = ("none", "all", "tensor-maps")


def kept(loop: Operation, except_dots: str, shared_bytes: int) -> bool:
    """Whether the nest `loop` heads stays a nest."""
    ops = list(loop.walk())
    dots = [op for op in ops if isinstance(op, tt.DotOp)]
    if except_dots == "none" or not dots:
        return False
    if except_dots == "all" or any(isinstance(op, tt.DescriptorLoadOp) for op in ops):
        return True
    return shared_bytes > 0 and _fused_bytes(loop, dots) > shared_bytes


def _fused_bytes(loop: Operation, dots: list) -> int:
    """Two K steps of `dots`' operands and the largest block stored after the inner loop."""
    operands = sum(_bytes(dot.a.type) + _bytes(dot.b.type) for dot in dots)
    body = list(loop.body.ops)
    inner = [i for i, op in enumerate(body) if isinstance(op, scf.ForOp)]
    after = body[inner[0] + 1 :] if inner else []
    stored = [
        _bytes(_stored(op).type)
        for top in after
        for op in top.walk()
        if isinstance(op, tt.StoreOp | tt.DescriptorStoreOp)
    ]
    return 2 * operands + max(stored, default=0)


def _stored(op: Operation):
    return op.value if isinstance(op, tt.StoreOp) else op.src


def _bytes(t) -> int:
    if not isinstance(t, RankedTensorType):
        return 0
    count = 1
    for extent in t.shape:
        count *= extent
    return count * max(t.element_type.width // 8, 1)
