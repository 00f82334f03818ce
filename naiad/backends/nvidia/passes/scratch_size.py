"""The bytes of shared-memory scratch each op's lowering needs, read from its layouts.

These are the needs of the lowering (`lowering/convert.py`, `reduce.py`, `scan.py`,
`atomics.py`, `exchanges.py`), stated here so that allocate-shared-memory can place every
scratch before the lowering runs; the lowering checks each request against this table and
raises an InternalError when they disagree, so the two cannot drift silently.

- `ttg.convert_layout`: the tensor once when its plan is a round trip through shared memory
  (`lowering/convert_plan.py`) or `ldmatrix` applies (`ldmatrix.py`), none for a renumbering
  or shuffles within warps; a round trip may also take a half, a quarter, ... of it, down to
  its most rounds (`scratch_choices`, `lowering/convert_rounds.py`): allocate-shared-memory
  picks, the lowering reads the rounds from what it planned;
- `tt.reduce` with warps along the axis: per operand, one partial per warp position and kept
  element (arrays aligned to 8 bytes);
- `tt.scan` with warps along the axis: per operand, one element per aligned block of
  positions at the first warp step (the tensor's elements >> that position bit; aligned to 8
  bytes): a step exchanges one total per block;
- `tt.atomic_rmw`, `tt.atomic_cas` whose old values are used and held by several threads: the
  tensor; a used scalar: 8 bytes;
- `tt.histogram`: 4 bytes per bin;
- `tt.descriptor_load`, `_store`, `_reduce` (tensor copies, `lowering/tma.py`): the block, and
  a load's `mbarrier`, at a 1024-byte boundary (`scratch_alignment`);
- `tt.make_tensor_descriptor` (`lowering/tensor_map_create.py`): the 128-byte tensor map it
  assembles, at a 128-byte boundary.

Shape ops that may exchange registers through memory (`tt.trans`, `tt.join`, `tt.cat`, ...)
are not sized here: their lowering asks at run time, and gets room past every allocation.
"""

from __future__ import annotations

from ....ir import RankedTensorType


def _numel(shape) -> int:
    count = 1
    for extent in shape:
        count *= extent
    return count


def _align8(nbytes: int) -> int:
    return (nbytes + 7) // 8 * 8


def scratch_bytes(op) -> int | None:
    """The scratch `op` needs (0: none), or None when this table does not size `op`."""
    rule = _RULES.get(op.name)
    return None if rule is None else rule(op)


def scratch_choices(op, stmatrix: bool = False) -> tuple[int, ...]:
    """The scratch sizes `op`'s lowering can work in, largest first: a conversion's round
    trip (not one `ldmatrix` lowers) in 1, 2, 4, ... rounds, more where its stores are
    `stmatrix` (`stmatrix`: the lowering may use it, lowering/convert.py); one size for
    every other op."""
    whole = scratch_bytes(op)
    if op.name != "ttg.convert_layout" or not whole:
        return (whole,)
    from ..lowering.convert_plan import Shared, plan_convert
    from ..lowering.convert_rounds import most_rounds
    from ..lowering.emitter import bit_width
    from ..lowering.indexing import layout_of
    from ..lowering.ldmatrix import plan_ldmatrix

    src_t, dst_t = op.src.type, op.result.type
    src, dst = layout_of(src_t), layout_of(dst_t)
    plan = plan_convert(src, dst, bit_width(src_t), stmatrix)
    if not isinstance(plan, Shared) or plan_ldmatrix(src_t, dst_t) is not None:
        return (whole,)
    rounds = most_rounds(src, dst, bit_width(src_t) // 8)
    if plan.stmatrix is not None:
        by_stmatrix = most_rounds(src, dst, bit_width(src_t) // 8, plan.stmatrix.trans)
        rounds = max(rounds, by_stmatrix)
    return tuple(whole >> k for k in range(rounds.bit_length()))


def _convert(op) -> int:
    from ..lowering.convert_plan import Renumber, Shared, plan_convert
    from ..lowering.emitter import bit_width
    from ..lowering.indexing import layout_of
    from ..lowering.ldmatrix import plan_ldmatrix

    src_t, dst_t = op.src.type, op.result.type
    plan = plan_convert(layout_of(src_t), layout_of(dst_t), bit_width(src_t))
    if isinstance(plan, Renumber):
        return 0
    if isinstance(plan, Shared) or plan_ldmatrix(src_t, dst_t) is not None:
        # the lowering tries ldmatrix before a shuffle plan; both hold the tensor once
        return _numel(src_t.shape) * (bit_width(src_t) // 8)
    return 0


def _warps_along(layout, axis: int) -> int:
    """How many warp bits of `layout` move along `axis`."""
    return sum(1 for basis in layout.bases("warp") if basis[axis])


def _reduce(op) -> int:
    from ..lowering.emitter import bit_width
    from ..lowering.indexing import layout_of

    srcs = list(op.srcs)
    axis = int(op.axis.value)
    moving = _warps_along(layout_of(srcs[0].type), axis)
    if not moving:
        return 0
    shape = srcs[0].type.shape
    elements = _numel([e for d, e in enumerate(shape) if d != axis])
    return sum(_align8((1 << moving) * elements * (bit_width(s.type) // 8)) for s in srcs)


def _scan(op) -> int:
    from ..lowering.emitter import bit_width
    from ..lowering.indexing import layout_of
    from ..lowering.scan import position_bits

    srcs = list(op.srcs)
    axis = int(op.axis.value)
    layout = layout_of(srcs[0].type)
    if not _warps_along(layout, axis):
        return 0
    bits = position_bits(layout, axis, srcs[0].type.shape[axis])
    if isinstance(bits, str):  # the lowering refuses the layout, naming why
        return 0
    first = next(bit for bit, (name, _) in enumerate(bits) if name == "warp")
    blocks = _numel(srcs[0].type.shape) >> first
    return sum(_align8(blocks * (bit_width(s.type) // 8)) for s in srcs)


def _atomic(op) -> int:
    from ..lowering.emitter import element_of
    from ..lowering.indexing import layout_of, redundant_thread_mask

    if not op.result.has_uses:
        return 0
    t = op.val.type
    if not isinstance(t, RankedTensorType):
        return 8
    if not redundant_thread_mask(layout_of(t)):
        return 0
    return _numel(t.shape) * max(element_of(t).width // 8, 1)


def _histogram(op) -> int:
    return op.result.type.shape[0] * 4


def _tensor_copy(op) -> int:
    from ..lowering.tma import scratch_bytes as tensor_copy_bytes

    return tensor_copy_bytes(op)


def _tensor_map(op) -> int:
    from ..lowering.tensor_map_create import TENSOR_MAP_BYTES

    return TENSOR_MAP_BYTES


_TENSOR_COPIES = ("tt.descriptor_load", "tt.descriptor_store", "tt.descriptor_reduce")


def scratch_alignment(op) -> int:
    """The boundary `op`'s scratch starts at: a swizzled tensor copy's destination needs its
    swizzle atom's, a tensor map being assembled its own size; 16 bytes for every other op."""
    from ..lowering.tensor_map_create import TENSOR_MAP_BYTES
    from ..lowering.tma import SCRATCH_ALIGNMENT

    if op.name in _TENSOR_COPIES:
        return SCRATCH_ALIGNMENT
    return TENSOR_MAP_BYTES if op.name == "tt.make_tensor_descriptor" else 16


_RULES = {
    "ttg.convert_layout": _convert,
    "tt.reduce": _reduce,
    "tt.scan": _scan,
    "tt.atomic_rmw": _atomic,
    "tt.atomic_cas": _atomic,
    "tt.histogram": _histogram,
    "tt.descriptor_load": _tensor_copy,
    "tt.descriptor_store": _tensor_copy,
    "tt.descriptor_reduce": _tensor_copy,
    "tt.make_tensor_descriptor": _tensor_map,
}
