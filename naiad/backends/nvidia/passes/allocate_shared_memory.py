"""`allocate-shared-memory`: give every shared-memory buffer of a kernel its offset, from the
buffers' live ranges, and the module the bytes to launch with.

Two kinds of buffer live in shared memory: the scratch an op's lowering needs for the length
of that op alone (a conversion or reduction through memory, a scan across warps, the old values
of an atomic; sizes in scratch_size.py), and `ttg.local_alloc` buffers, live from the
allocation to the last use of the buffer or of any view of it (`ttg.memdesc_*`). A use inside
a loop or an `if` keeps the buffer live for that whole op, so a buffer read in every iteration
survives the iterations between. Buffers whose live ranges overlap get disjoint bytes; the
others share them; a buffer of a warp-specialize partition is live over the whole
`ttg.warp_specialize`, since the partitions run at once. Placement is first fit, largest
buffer first, each at a 16-byte boundary, or at its swizzle atom's for a `#ttg.nvmma_shared`
buffer or a tensor copy's scratch (8 rows of the swizzle width: the
hardware swizzles by address bits, wgmma.py).

A conversion's round trip through shared memory can go in rounds through a half, a quarter,
... of its tile (scratch_size.scratch_choices, lowering/convert_rounds.py). Where the buffers
placed at full size reach past the shared memory a block may use on the target's GPUs
(`target.shared_per_block`: 99 KiB on sm_86 and sm_89, where the 128 KiB of a 128 x 256 f32
accumulator's conversion kept tutorial 03's kernel from launching), the largest such scratch
live beside a buffer placed past it takes its next smaller size, and the buffers are placed
again, until they fit or none can shrink. A kernel that fits otherwise keeps its conversions
whole, since each extra round adds two barriers on the path and the splitting buys nothing
when the kernel launches anyway (a matmul tile large enough to need it runs one block an SM,
its registers' limit, either way), but for one case (`_trim`): a scratch of an op outside
every loop's body that is live beside another buffer takes a smaller size wherever that
lowers the total, its bytes otherwise taken for the whole kernel (tutorial 09's fused
epilogue beside rings live through the loop: two rounds, 180,224 bytes as Triton's).

Sets `allocation.offset` (i32) on every op owning a buffer (and `allocation.size`, the bytes
planned, on an op whose lowering uses scratch, which the lowering checks its need against; a
conversion reads its rounds from it) and `ttg.shared` (i32) on the module: the end of the
highest buffer. The lowering reads both (lowering/context.py):

    %r = "tt.reduce"(%x) <{axis = 0 : i32}> ({...}) : (tensor<1024xf32, #blocked>) -> f32
    %c = ttg.convert_layout %y : tensor<64x64xf32, #blocked> -> tensor<64x64xf32, #blocked1>
    ==>
    %r = "tt.reduce"(%x) <{axis = 0 : i32}> ({...}) {allocation.offset = 0 : i32} : ...
    %c = ttg.convert_layout %y {allocation.offset = 0 : i32} : ...   // not live together
    module attributes {..., ttg.shared = 16384 : i32}

Legal always: it only annotates. Run it last, after every pass that moves or makes ops.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ....dialects import scf, tt
from ....dialects.ttg.types import MemDescType
from ....ir import IntegerAttr, Operation, register_pass
from ....ir.passes import Pass
from ....ir.types import i32
from ..target import shared_per_block
from .accelerate_matmul import module_capability
from .scratch_size import scratch_alignment, scratch_choices

ALIGNMENT = 16


@dataclass(frozen=True)
class Buffer:
    """`size` bytes owned by `owner`, live over the op numbers [`start`, `end`]; `smaller`:
    the sizes its owner can also work in, largest first (a conversion's rounds)."""

    owner: Operation
    size: int
    start: int
    end: int
    alignment: int = ALIGNMENT
    smaller: tuple[int, ...] = ()
    in_loop: bool = False  # an op of a loop's body: its scratch is used every iteration

    def overlaps(self, other: Buffer) -> bool:
        return self.start <= other.end and other.start <= self.end


def _number(func: Operation) -> tuple[dict, dict]:
    """Each op's number in program order, and the last number nested in it."""
    index: dict = {}
    for i, op in enumerate(func.walk()):
        index[op] = i
    last: dict = {}
    for op in func.walk(post_order=True):
        nested = [last[inner] for region in op.regions for b in region.blocks for inner in b.ops]
        last[op] = max([index[op], *nested])
    return index, last


def alloc_bytes(t: MemDescType) -> int:
    """The bytes of a `ttg.local_alloc` buffer of type `t` (all its slots)."""
    count = 1
    for extent in t.alloc_shape:
        count *= extent
    return count * max(t.element_type.width // 8, 1)


def _live_end(alloc: Operation, last: dict) -> int:
    """The last op number where the buffer of `alloc`, or a view of it, is used: each use
    counted at its ancestor in `alloc`'s block, whose whole extent it keeps live."""
    end = last[alloc]
    pending = [alloc.result]
    while pending:
        value = pending.pop()
        for user in value.users:
            ancestor = user
            while ancestor.parent is not alloc.parent and ancestor.parent_op() is not None:
                ancestor = ancestor.parent_op()
            end = max(end, last[ancestor])
            pending += [r for r in user.results if isinstance(r.type, MemDescType)]
    return end


def _buffers(func: Operation, stmatrix: bool = False) -> list[Buffer]:
    index, last = _number(func)
    buffers = []
    for op in func.walk():
        if op.name == "ttg.local_alloc":
            t = op.result.type
            size = alloc_bytes(t)
            start, end = _concurrent(op, index, last, (index[op], _live_end(op, last)))
            buffers.append(Buffer(op, size, start, end, buffer_alignment(t)))
            continue
        size, *smaller = scratch_choices(op, stmatrix)
        if size:
            start, end = _concurrent(op, index, last, (index[op], index[op]))
            in_loop = isinstance(op.parent_op(), scf.ForOp | scf.WhileOp)
            alignment = scratch_alignment(op)
            buffers.append(Buffer(op, size, start, end, alignment, tuple(smaller), in_loop))
    return buffers


def _concurrent(op: Operation, index: dict, last: dict, span: tuple[int, int]):
    """`span`, or for a buffer of a warp-specialize partition the whole `ttg.warp_specialize`
    too: the partitions and the default region run at once, so their buffers never share
    bytes."""
    parent = op.parent_op()
    while parent is not None and parent.name != "ttg.warp_specialize.partitions":
        parent = parent.parent_op()
    if parent is None:
        return span
    specialize = parent.parent_op()
    return min(span[0], index[specialize]), max(span[1], last[specialize])


def buffer_alignment(t: MemDescType) -> int:
    swizzle = getattr(t.encoding, "swizzling_byte_width", 0)
    return max(ALIGNMENT, 8 * swizzle)


def _align(offset: int, alignment: int) -> int:
    return (offset + alignment - 1) // alignment * alignment


def allocate(buffers: list[Buffer]) -> tuple[dict, int]:
    """First-fit offsets (by owner) for `buffers`, largest first, and the bytes they span."""
    placed: list[tuple[Buffer, int]] = []
    offsets: dict = {}
    for buffer in sorted(buffers, key=lambda b: (-b.size, b.start)):
        live = [(other, at) for other, at in placed if other.overlaps(buffer)]
        candidates = sorted({0, *(_align(at + other.size, buffer.alignment) for other, at in live)})
        for offset in candidates:
            if all(offset + buffer.size <= at or at + other.size <= offset for other, at in live):
                break
        placed.append((buffer, offset))
        offsets[buffer.owner] = offset
    total = max((at + b.size for b, at in placed), default=0)
    return offsets, total


def fit(buffers: list[Buffer], limit: int) -> tuple[list[Buffer], dict, int]:
    """`buffers` placed (as `allocate`) within `limit` bytes where shrinking scratch can do it
    (see the module doc): the buffers at their sizes, their offsets, the bytes they span."""
    offsets, total = allocate(buffers)
    while total > limit:
        past = [b for b in buffers if offsets[b.owner] + b.size > limit]
        shrinkable = [b for b in buffers if b.smaller and any(b.overlaps(o) for o in past)]
        if not shrinkable:
            break
        largest = max(shrinkable, key=lambda b: b.size)
        smaller = replace(largest, size=largest.smaller[0], smaller=largest.smaller[1:])
        buffers = [smaller if b is largest else b for b in buffers]
        offsets, total = allocate(buffers)
    return _trim(buffers, offsets, total)


def _trim(buffers: list[Buffer], offsets: dict, total: int) -> tuple[list[Buffer], dict, int]:
    """`buffers` with each scratch of an op outside every loop's body (an epilogue under a
    branch) that is live with another buffer at a smaller size wherever that lowers the
    total: its bytes come on top of that buffer's, and its rounds cost two barriers each,
    once (tutorial 09's fused epilogue beside rings that live through the loop: 212,992 ->
    180,224 bytes, as Triton's). A scratch live alone (a matmul's epilogue after its loop,
    whose rings are dead) stays whole, as fast as before."""
    shrunk = True
    while shrunk:
        shrunk = False
        for buffer in sorted(buffers, key=lambda b: -b.size):
            if not buffer.smaller or buffer.in_loop:
                continue
            if not any(b is not buffer and b.overlaps(buffer) for b in buffers):
                continue
            smaller = replace(buffer, size=buffer.smaller[0], smaller=buffer.smaller[1:])
            trial = [smaller if b is buffer else b for b in buffers]
            trial_offsets, trial_total = allocate(trial)
            if trial_total < total:
                buffers, offsets, total, shrunk = trial, trial_offsets, trial_total, True
                break
    return buffers, offsets, total


@register_pass("allocate-shared-memory")
@dataclass(frozen=True)
class AllocateSharedMemory(Pass):
    """Offsets of every shared-memory buffer from live ranges (see the module doc)."""

    def run(self, module: Operation) -> None:
        total = 0
        capability = module_capability(module)
        limit = shared_per_block(capability)
        for func in [op for op in module.walk() if isinstance(op, tt.FuncOp)]:
            stmatrix = _stores_by_stmatrix(module, func, capability)
            buffers, offsets, size = fit(_buffers(func, stmatrix), limit)
            for buffer in buffers:
                owner = buffer.owner
                owner.attributes["allocation.offset"] = IntegerAttr(offsets[owner], i32)
                if owner.name != "ttg.local_alloc":  # scratch: the lowering reads its size
                    owner.attributes["allocation.size"] = IntegerAttr(buffer.size, i32)
            total = max(total, size)
        module.attributes["ttg.shared"] = IntegerAttr(total, i32)


def _stores_by_stmatrix(module: Operation, func: Operation, capability: int) -> bool:
    """Whether the lowering may store a conversion's round trip by `stmatrix`
    (lowering/convert.py: sm_90, a kernel under no memory-bound register floor)."""
    from ..lowering.occupancy import min_ctas_per_sm
    from ..lowering.stmatrix import STMATRIX_CAPABILITY

    if capability < STMATRIX_CAPABILITY:
        return False
    warps = module.attributes.get("ttg.total-num-warps", module.attributes.get("ttg.num-warps"))
    return min_ctas_per_sm(func, int(warps.value) if warps is not None else 4) is None
