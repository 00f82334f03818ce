"""`tritongpu-prove-tensor-maps`: keep a tensor map made in the kernel only where its tensor is
proven to be one the copy engine can address, as the launcher proves a host map's.

The frontend makes a `tt.make_tensor_descriptor` for every descriptor the kernel body makes
outside a loop whose block one copy moves whole and whose last stride is 1
(frontend/tensor_maps.py). Whether its base is aligned to 16 bytes and its row stride a multiple
of 16 bytes is the axis analysis's to say, after inlining: it follows the arithmetic from what
the kernel's arguments were specialized on (`ptr + 8` of an aligned f16 pointer is aligned, `ptr
+ 4` is not) and `tl.multiple_of` hints. A map whose base and row stride are proven keeps its
copies; any other gives its loads and stores back to pointers (descriptor_pointers.py) and is
erased, so an unaligned tensor is never read through a map the hardware would refuse. So is a
map that inlining put inside a loop (a jit helper that makes a descriptor, called in a loop):
an iteration would rewrite the map while the copies of an earlier one may still read it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ....dialects import scf, tt
from ....ir import Operation, register_pass
from ....ir.passes import Pass
from ....passes.analysis.axis_info import AxisInfoAnalysis
from .descriptor_pointers import to_pointer_load, to_pointer_reduce, to_pointer_store

_ALIGNMENT = 16  # bytes: a map's base address and its row strides


def proven(made: Operation, axis_info: AxisInfoAnalysis) -> bool:
    """Whether the map `made` makes is addressable: its base and row stride aligned."""
    element_bytes = made.result.type.block_type.element_type.width // 8
    base = axis_info.info(made.base).divisibility[0]
    row_stride = axis_info.info(made.strides[0]).divisibility[0]
    return base % _ALIGNMENT == 0 and (row_stride * element_bytes) % _ALIGNMENT == 0


@register_pass("tritongpu-prove-tensor-maps")
@dataclass(frozen=True)
class ProveTensorMaps(Pass):
    """Give the accesses through unproven in-kernel tensor maps (and those made in loops)
    back to pointers."""

    def run(self, module: Operation) -> None:
        made = [op for op in module.walk() if isinstance(op, tt.MakeTensorDescOp)]
        if not made:
            return
        axis_info = AxisInfoAnalysis(module)
        for op in made:
            if proven(op, axis_info) and not scf.in_loop(op.parent):
                continue
            for user in list(op.result.users):
                if isinstance(user, tt.DescriptorLoadOp):
                    to_pointer_load(user)
                elif isinstance(user, tt.DescriptorReduceOp):
                    to_pointer_reduce(user)
                else:
                    to_pointer_store(user)
            op.erase()
