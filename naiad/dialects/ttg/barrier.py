"""The one TritonGPU op that TTIR holds: `ttg.barrier` (from `tl.debug_barrier`). The rest of
the `ttg` dialect belongs to the NVIDIA back end."""

from __future__ import annotations

from ...ir import MemoryRead, MemoryWrite, Operation, attribute, irdl_op
from ..base import EnumAttr

# An I32BitEnumAttr: the op holds an i32 (`addrSpace = 31 : i32` in the generic form).
AddrSpace = EnumAttr(
    "AddrSpace",
    {
        "none": 0,
        "local": 1,
        "global_read": 2,
        "global_write": 4,
        "tensor_read": 8,
        "tensor_write": 16,
        "all": 31,
    },
    bit=True,
    separator="|",
)


@irdl_op
class BarrierOp(Operation):
    """Synchronize the threads of a CTA and make the accesses to `addrSpace` (a union:
    `local|global_read`, or `all`) visible to all of them. Printed by C++ upstream:
    `ttg.barrier all`."""

    name = "ttg.barrier"
    traits = frozenset({MemoryRead, MemoryWrite})
    addrSpace = attribute(AddrSpace)  # the ODS name
    custom_syntax = True

    def __init__(self, addr_space="all", **fields):
        super().__init__(addrSpace=AddrSpace.get(addr_space), **fields)
