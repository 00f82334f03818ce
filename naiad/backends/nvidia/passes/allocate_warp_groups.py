"""`tritongpu-allocate-warp-groups`: place the warps of every `ttg.warp_specialize`'s
partitions after the kernel's own, and give the module the warps to launch with.

The partitions take their warps largest first (a stable order), one after another from warp
`ttg.num-warps` on, as Triton places them; `warpGroupStartIds[i]` is partition i's first warp
and `ttg.total-num-warps` the end of the last:

    module attributes {"ttg.num-warps" = 4 : i32} {
      ttg.warp_specialize() default {...}
      partition0() num_warps(1) {...}  partition1() num_warps(8) {...}  partition2() num_warps(4) {...}
    ==>
    module attributes {"ttg.num-warps" = 4 : i32, "ttg.total-num-warps" = 17 : i32} {
      ttg.warp_specialize() attributes {warpGroupStartIds = array<i32: 16, 4, 12>} ...

Start ids already set (by hand, in a TTGIR file) are kept. Legal always: it only annotates;
the lowering (lowering/partitions.py) reads both.
"""  # noqa: E501

from __future__ import annotations

from dataclasses import dataclass

from ....ir import DenseArrayAttr, IntegerAttr, Operation, register_pass
from ....ir.passes import Pass
from ....ir.types import i32


@register_pass("tritongpu-allocate-warp-groups")
@dataclass(frozen=True)
class AllocateWarpGroups(Pass):
    """Start warps of each partition, and the module's total (module doc)."""

    def run(self, module: Operation) -> None:
        num_warps = module.attributes["ttg.num-warps"].value
        total = module.attributes.get("ttg.total-num-warps")
        total = num_warps if total is None else total.value
        for op in module.walk():
            if op.name != "ttg.warp_specialize":
                continue
            warps = op.partitionNumWarps.values
            if op.warpGroupStartIds is None:
                op.attributes["warpGroupStartIds"] = DenseArrayAttr(i32, _starts(num_warps, warps))
            starts = op.warpGroupStartIds.values
            total = max([total, *(s + w for s, w in zip(starts, warps))])
        if total != num_warps:
            module.attributes["ttg.total-num-warps"] = IntegerAttr(total, i32)


def _starts(num_warps: int, warps) -> list[int]:
    """Each partition's first warp: largest first, consecutive after the kernel's warps."""
    starts = [0] * len(warps)
    at = num_warps
    for i in sorted(range(len(warps)), key=lambda i: -warps[i]):
        starts[i] = at
        at += warps[i]
    return starts
