"""`drop-layouts`: TTGIR whose ops are TTIR's, laid out for a GPU, becomes TTIR again, so a
`.ttgir` file (a hand-written kernel, or one a GPU compile printed) runs on a back end that
compiles TTIR, the CPU's: every tensor loses its encoding, a `ttg.convert_layout` becomes its
operand, and the module's `ttg.*` attributes (warps, CTAs, the GPU target) go.

    #blocked = #ttg.blocked<{...}>
    %r = tt.make_range {end = 256, start = 0} : tensor<256xi32, #blocked>
    %c = ttg.convert_layout %r : tensor<256xi32, #blocked> -> tensor<256xi32, #other>
      ==>
    %r = tt.make_range {end = 256, start = 0} : tensor<256xi32>        (uses of %c read %r)

Legal because a layout says where a value lives on the GPU, never what it is: TTIR's ops
compute the same values whatever their operands' layouts. `ttg.warp_specialize` stays (the CPU
runs its regions in order, backends/cpu/sequence_partitions.py), and so does `gpu.barrier`.
What only a GPU holds (shared-memory descriptors, `ttng` ops, asynchronous copies) has no TTIR
form and is refused by name.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import CompilationError
from ..ir import Operation, RankedTensorType, register_pass
from ..ir.attributes import DenseElementsAttr
from ..ir.passes import Pass

# The ops of TTGIR that TTIR's back ends know: the partitions and their barrier.
_KEPT = frozenset(
    (
        "ttg.warp_specialize",
        "ttg.warp_specialize.partitions",
        "ttg.warp_yield",
        "ttg.warp_return",
        "gpu.barrier",
    )
)


@register_pass("drop-layouts")
@dataclass(frozen=True)
class DropLayouts(Pass):
    """Drop every tensor's layout and every `ttg.convert_layout` (module doc)."""

    def run(self, module: Operation) -> None:
        for op in list(module.walk()):
            if op.name == "ttg.convert_layout":
                op.result.replace_all_uses_with(op.operands[0])
                op.erase()
                continue
            _refuse_gpu_only(op)
            for region in op.regions:
                for block in region.blocks:
                    for argument in block.arguments:
                        argument.type = _unlaid(argument.type)
            for result in op.results:
                result.type = _unlaid(result.type)
            value = op.attributes.get("value")
            if isinstance(value, DenseElementsAttr):
                op.attributes["value"] = DenseElementsAttr(_unlaid(value.type), value.values)
        for key in [key for key in module.attributes if key.startswith("ttg.")]:
            del module.attributes[key]


def _unlaid(t):
    """`t` without its layout (a tensor's encoding; a tensor of pointers keeps its pointee)."""
    if isinstance(t, RankedTensorType) and t.encoding is not None:
        return t.clone(encoding=None)
    return t


def _refuse_gpu_only(op: Operation) -> None:
    dialect = op.name.partition(".")[0]
    gpu_only = dialect in ("ttg", "ttng", "gpu", "nvgpu", "amdgpu")
    if gpu_only and op.name not in _KEPT:
        raise CompilationError(
            f"`{op.name}` holds what only a GPU has: a TTGIR file with it compiles for a CUDA "
            "target, not for one that compiles TTIR"
        )
