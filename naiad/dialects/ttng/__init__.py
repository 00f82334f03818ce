"""The `ttng` dialect (TritonNvidiaGPU): the Hopper ops of TTGIR.

    %d = ttng.warp_group_dot %a, %b, %c {inputPrecision = 0 : i32, isAsync = false, ...}
        : !ttg.memdesc<128x64xf16, #shared, #smem> * !ttg.memdesc<64x256xf16, #shared1, #smem>
        -> tensor<128x256xf32, #mma>
    ttng.fence_async_shared {bCluster = false}

    %w:3 = ttng.warp_group_dot_wait %d, %a, %b {pendings = 1 : i32}
        : tensor<128x256xf32, #mma>, !ttg.memdesc<128x64xf16, ...>, !ttg.memdesc<64x256xf16, ...>

`ttng.warp_group_dot` is the `tt.dot` of `wgmma`: its operands are read straight from shared
memory (`#ttg.nvmma_shared` buffers), its result is in the `#ttg.nvidia_mma` version 3 layout.
Synchronous (`isAsync = false`), its lowering waits for the instructions it issued; an
asynchronous one (the pipeliner's, in a loop) returns at once, and `ttng.warp_group_dot_wait`
waits until at most `pendings` asynchronous dots are in flight: its results are its operands
(accumulators complete but for those dots; buffers those dots no longer read).
`ttng.fence_async_shared` orders the stores of registers into a buffer before the reads of the
asynchronous proxy that `wgmma` is.
"""

from __future__ import annotations

from typing import ClassVar

from ...ir import (
    AnyType,
    MemoryRead,
    MemoryWrite,
    Operation,
    TensorOf,
    attribute,
    irdl_op,
    operand,
    opt_attribute,
    opt_operand,
    result,
    var_operand,
    var_result,
)
from ...ir.attributes import BoolAttr, IntegerAttr
from ...ir.types import i32
from ..base import I1, BoolAttrC, I32Attr, check_type, fail
from ..tt.attributes import InputPrecision
from ..ttg.types import TTG_MemDesc
from .tensor_copies import (  # the pipelined tensor copies' ops
    ArriveBarrierOp,
    AsyncTMACopyGlobalToLocalOp,
    AsyncTMACopyLocalToGlobalOp,
    AsyncTMAReduceOp,
    BarrierExpectOp,
    InitBarrierOp,
    InvalBarrierOp,
    TMAStoreWaitOp,
    WaitBarrierOp,
)
from .tensor_maps import (  # the ops of tensor maps made in the kernel
    ReinterpretTensorDescOp,
    TensormapCreateOp,
    TensormapFenceproxyAcquireOp,
)

AnyTensor = TensorOf(AnyType)


@irdl_op
class WarpGroupDotOp(Operation):
    """`d = a @ b + c` by the warpgroups' `wgmma` instructions: `b` is a shared-memory buffer,
    `a` one too or registers (`#ttg.dot_op` of the result's layout), `c` and `d` registers in
    the `nvidia_mma` version 3 layout. Where `useC` is given and false, `d = a @ b`: the
    instruction's scale-d, so that a loop that starts a new accumulator in some iterations
    (a fused persistent matmul's next tile) passes the carried one to the dot untouched."""

    name = "ttng.warp_group_dot"
    traits = frozenset({MemoryRead})
    a = operand(AnyType)
    b = operand(TTG_MemDesc)
    c = operand(AnyTensor)
    useC = opt_operand(I1)  # the ODS name
    inputPrecision = opt_attribute(InputPrecision)  # the ODS name
    maxNumImpreciseAcc = opt_attribute(I32Attr)  # the ODS name
    isAsync = opt_attribute(BoolAttrC)  # the ODS name
    d = result(AnyTensor)
    assembly_format = (
        "$a`,` $b`,` $c (`,` $useC^)? attr-dict `:` type($a) `*` qualified(type($b)) `->` type($d)"
    )
    attribute_defaults: ClassVar[dict] = {
        "inputPrecision": InputPrecision.get("ieee"),
        "maxNumImpreciseAcc": IntegerAttr(0, i32),
        "isAsync": BoolAttr(False),
    }


@irdl_op
class WarpGroupDotWaitOp(Operation):
    """Wait until at most `pendings` asynchronous `ttng.warp_group_dot`s are in flight. Each
    of `inputs` passes through to the output of its index, so that its readers come after the
    wait: the accumulators, and (Triton's pipeliner gives them) the operand buffers the dots in
    flight still read, which must not be written over before."""

    name = "ttng.warp_group_dot_wait"
    traits = frozenset({MemoryRead, MemoryWrite})
    inputs = var_operand(AnyTensor | TTG_MemDesc)
    pendings = attribute(I32Attr)
    outputs = var_result(AnyTensor | TTG_MemDesc, like="inputs")
    assembly_format = "$inputs attr-dict `:` type($inputs)"

    def verify_(self) -> None:
        if not self.inputs:
            fail(self, "expected at least one input")
        for k, (value, output) in enumerate(zip(self.inputs, self.outputs, strict=True)):
            check_type(self, output.type, value.type, f"output #{k} has the type of input #{k}")


@irdl_op
class FenceAsyncSharedOp(Operation):
    """Make this thread's earlier generic stores to shared memory visible to the asynchronous
    proxy (`fence.proxy.async.shared::cta`), before `wgmma` reads them."""

    name = "ttng.fence_async_shared"
    traits = frozenset({MemoryRead, MemoryWrite})
    bCluster = opt_attribute(BoolAttrC)  # the ODS name
    assembly_format = "attr-dict"
    attribute_defaults: ClassVar[dict] = {"bCluster": BoolAttr(False)}


__all__ = [
    "ArriveBarrierOp",
    "AsyncTMACopyGlobalToLocalOp",
    "AsyncTMACopyLocalToGlobalOp",
    "AsyncTMAReduceOp",
    "BarrierExpectOp",
    "FenceAsyncSharedOp",
    "InitBarrierOp",
    "InvalBarrierOp",
    "ReinterpretTensorDescOp",
    "TMAStoreWaitOp",
    "TensormapCreateOp",
    "TensormapFenceproxyAcquireOp",
    "WaitBarrierOp",
    "WarpGroupDotOp",
    "WarpGroupDotWaitOp",
]
