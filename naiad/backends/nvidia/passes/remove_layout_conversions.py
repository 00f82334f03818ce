"""`remove-layout-conversions`: remove the `ttg.convert_layout` ops that convert-to-ttgir and
coalesce leave between a value's producer and its users, by choosing the layouts that make them
unnecessary.

Legal always: only layouts change, never values, and a conversion stays wherever two layouts
really meet. Four steps, as Triton's pass orders them:

1. forward propagation of the anchors' layouts (layout_propagation.py);
2. the conversions' canonical forms (convert_patterns.py): chains fold, conversions to the same
   layout vanish, splats, ranges and constants are made in the layout their users want;
3. backward rematerialization of cheap producers in the converted-to layout
   (rematerialization.py);
4. step 2 again, which also drops the ops the rewrites left dead.

    %x = tt.load %p : tensor<1024x!tt.ptr<f32>, #blocked1>
    %a = ttg.convert_layout %x : tensor<1024xf32, #blocked1> -> tensor<1024xf32, #blocked>
    %b = arith.addf %a, %a : tensor<1024xf32, #blocked>
    %c = ttg.convert_layout %b : tensor<1024xf32, #blocked> -> tensor<1024xf32, #blocked1>
    tt.store %q, %c : tensor<1024x!tt.ptr<f32>, #blocked1>
    ==>
    %x = tt.load %p : tensor<1024x!tt.ptr<f32>, #blocked1>
    %b = arith.addf %x, %x : tensor<1024xf32, #blocked1>
    tt.store %q, %b : tensor<1024x!tt.ptr<f32>, #blocked1>
"""

from __future__ import annotations

from dataclasses import dataclass

from ....dialects import tt
from ....ir import Operation, register_pass
from ....ir.passes import Pass
from .convert_patterns import cleanup_converts
from .layout_propagation import propagate_layouts
from .rematerialization import rematerialize


@register_pass("remove-layout-conversions")
@dataclass(frozen=True)
class RemoveLayoutConversions(Pass):
    """Choose layouts that make conversions unnecessary (see the module doc)."""

    def run(self, module: Operation) -> None:
        functions = [op for op in module.walk() if isinstance(op, tt.FuncOp)]
        for func in functions:
            propagate_layouts(func)
        cleanup_converts(module)
        for func in functions:
            rematerialize(func)
        cleanup_converts(module)
