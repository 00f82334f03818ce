"""The `ttng` ops of pipelined tensor copies (the tensor memory accelerator, sm_90): `mbarrier`s
in shared memory and the copy that completes on one.

    %bars = ttg.local_alloc : () -> !ttg.memdesc<3x1xi64, #shared1, #smem, mutable>
    ttng.init_barrier %bar, 1 : !ttg.memdesc<1xi64, #shared1, #smem, mutable>
    ttng.barrier_expect %bar, 16384, %pred : !ttg.memdesc<1xi64, ...>
    ttng.async_tma_copy_global_to_local %desc[%x, %y] %slot, %bar, %pred
        : !tt.tensordesc<128x64xf16>, !ttg.memdesc<1xi64, ...> -> !ttg.memdesc<128x64xf16, ...>
    ttng.async_tma_copy_local_to_global %desc[%x, %y] %tile
        : !tt.tensordesc<128x64xf16>, !ttg.memdesc<128x64xf16, ...>
    ttng.async_tma_reduce add, %desc[%x, %y] %tile
        : !tt.tensordesc<64x128xf32>, !ttg.memdesc<64x128xf32, ...>
    ttng.async_tma_store_wait {pendings = 0 : i32}
    ttng.wait_barrier %bar, %phase : !ttg.memdesc<1xi64, ...>
    ttng.arrive_barrier %bar : !ttg.memdesc<1xi64, ...>
    ttng.inval_barrier %bar : !ttg.memdesc<1xi64, ...>

A barrier completes a phase when its one arrival (`barrier_expect`, which also names the bytes
to expect) and those bytes (the copies that complete on it) are in; `wait_barrier` waits until
the phase of parity `phase` has completed. `pred` false makes an expect or a copy nothing (a
pipelined copy past the loop's end). A copy out is the reverse, without a barrier: the
issuing thread's bulk group, which `async_tma_store_wait` waits for before its buffer is
written again.
"""

from __future__ import annotations

from ...ir import (
    MemoryRead,
    MemoryWrite,
    Operation,
    attribute,
    irdl_op,
    operand,
    var_operand,
)
from ..base import I1, I32, I32Attr
from ..tt.attributes import DescriptorReduceKind
from ..tt.types import TT_TensorDescType
from ..ttg.types import TTG_MemDesc

_EFFECTS = frozenset({MemoryRead, MemoryWrite})


@irdl_op
class InitBarrierOp(Operation):
    """Initialize the `mbarrier` at `alloc` to expect `count` arrivals per phase."""

    name = "ttng.init_barrier"
    traits = _EFFECTS
    alloc = operand(TTG_MemDesc)
    count = attribute(I32Attr)
    assembly_format = "$alloc `,` $count attr-dict `:` qualified(type($alloc))"


@irdl_op
class BarrierExpectOp(Operation):
    """Arrive on `alloc`, expecting `size` more bytes of copies in this phase (if `pred`)."""

    name = "ttng.barrier_expect"
    traits = _EFFECTS
    alloc = operand(TTG_MemDesc)
    size = attribute(I32Attr)
    pred = operand(I1)
    assembly_format = "$alloc `,` $size `,` $pred attr-dict `:` qualified(type($alloc))"


@irdl_op
class AsyncTMACopyGlobalToLocalOp(Operation):
    """Copy the block of `desc` at `coord` into the buffer `result` by the tensor memory
    accelerator, completing on `barrier` (if `pred`)."""

    name = "ttng.async_tma_copy_global_to_local"
    traits = _EFFECTS
    desc = operand(TT_TensorDescType)
    coord = var_operand(I32)
    result = operand(TTG_MemDesc)
    barrier = operand(TTG_MemDesc)
    pred = operand(I1)
    assembly_format = (
        "$desc `[` $coord `]` $result `,` $barrier `,` $pred attr-dict `:` "
        "qualified(type($desc)) `,` qualified(type($barrier)) `->` qualified(type($result))"
    )


@irdl_op
class AsyncTMACopyLocalToGlobalOp(Operation):
    """Copy the buffer `src` into the block of `desc` at `coord` by the tensor memory
    accelerator, as one bulk group of the issuing thread (`async_tma_store_wait` waits)."""

    name = "ttng.async_tma_copy_local_to_global"
    traits = _EFFECTS
    desc = operand(TT_TensorDescType)
    coord = var_operand(I32)
    src = operand(TTG_MemDesc)
    assembly_format = (
        "$desc `[` $coord `]` $src attr-dict `:` qualified(type($desc)) `,` qualified(type($src))"
    )


@irdl_op
class AsyncTMAReduceOp(Operation):
    """Combine the buffer `src` into the block of `desc` at `coord` by the reduction `kind`
    (add, and, or, xor: a bulk tensor reduction), one bulk group as a copy out."""

    name = "ttng.async_tma_reduce"
    traits = _EFFECTS
    kind = attribute(DescriptorReduceKind)
    desc = operand(TT_TensorDescType)
    coord = var_operand(I32)
    src = operand(TTG_MemDesc)
    assembly_format = (
        "$kind `,` $desc `[` $coord `]` $src attr-dict `:` qualified(type($desc)) `,` "
        "qualified(type($src))"
    )


@irdl_op
class TMAStoreWaitOp(Operation):
    """Wait until at most `pendings` bulk groups of copies out (`async_tma_copy_local_to_global`,
    `async_tma_reduce`) still read their buffers."""

    name = "ttng.async_tma_store_wait"
    traits = _EFFECTS
    pendings = attribute(I32Attr)
    assembly_format = "attr-dict"


@irdl_op
class WaitBarrierOp(Operation):
    """Wait until the phase of parity `phase` of the `mbarrier` at `alloc` has completed."""

    name = "ttng.wait_barrier"
    traits = _EFFECTS
    alloc = operand(TTG_MemDesc)
    phase = operand(I32)
    assembly_format = "$alloc `,` $phase attr-dict `:` qualified(type($alloc))"


@irdl_op
class ArriveBarrierOp(Operation):
    """Every thread that runs it arrives once on the `mbarrier` at `alloc` (a warp-specialized
    loop's consumers, freeing a slot for the producer: `init_barrier` counts them)."""

    name = "ttng.arrive_barrier"
    traits = _EFFECTS
    alloc = operand(TTG_MemDesc)
    assembly_format = "$alloc attr-dict `:` qualified(type($alloc))"


@irdl_op
class InvalBarrierOp(Operation):
    """End the `mbarrier` at `alloc`, so that its bytes may hold something else."""

    name = "ttng.inval_barrier"
    traits = _EFFECTS
    alloc = operand(TTG_MemDesc)
    assembly_format = "$alloc attr-dict `:` qualified(type($alloc))"
