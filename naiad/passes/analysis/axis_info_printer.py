"""`test-print-axis-info`: write AxisInfo's facts into the IR as attributes, so FileCheck tests
can check the analysis (MLIR's `test-print-*` convention; Triton's is `test-print-alignment`).
A test pass: nothing in a pipeline should run it.

Every op with an integer or pointer result gets `axis_info.contiguity`, `.divisibility`,
`.constancy` (one number per dimension) and, for a known constant, `.constant_value`; an op
with several results gets a list per attribute, one entry per result. Block arguments are
described on the op that holds their region, as `axis_info.args.*` lists (the arguments of
every block of every region, in order): a function's parameters, a loop's induction variable
and iteration arguments.

    %0 = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
      ==>
    %0 = tt.make_range {axis_info.constancy = array<i64: 1>,
                        axis_info.contiguity = array<i64: 1024>,
                        axis_info.divisibility = array<i64: 4611686018427387904>,
                        end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import ArrayAttr, DenseArrayAttr, IntegerAttr, Operation, i64, register_pass
from ...ir.passes import Pass
from .axis_info import AxisInfoAnalysis
from .axis_info_rules import is_tracked

_FIELDS = ("contiguity", "divisibility", "constancy")


@register_pass("test-print-axis-info")
@dataclass(frozen=True)
class TestPrintAxisInfo(Pass):
    """Annotate every op and region-holding op with the axis facts of its values."""

    def run(self, module: Operation) -> None:
        analysis = AxisInfoAnalysis(module)
        for op in list(module.walk()):
            results = list(op.results)
            if any(is_tracked(v.type) for v in results):
                _annotate(op, "axis_info", [analysis.info(v) for v in results])
            arguments = [a for region in op.regions for b in region.blocks for a in b.arguments]
            if any(is_tracked(a.type) for a in arguments):
                _annotate(op, "axis_info.args", [analysis.info(a) for a in arguments], lists=True)


def _annotate(op: Operation, prefix: str, infos: list, lists: bool = False) -> None:
    if len(infos) == 1 and not lists:
        (info,) = infos
        for field in _FIELDS:
            op.attributes[f"{prefix}.{field}"] = DenseArrayAttr(i64, getattr(info, field))
        if info.constant is not None:
            op.attributes[f"{prefix}.constant_value"] = IntegerAttr(info.constant, i64)
        return
    for field in _FIELDS:
        op.attributes[f"{prefix}.{field}"] = ArrayAttr(
            DenseArrayAttr(i64, getattr(info, field)) for info in infos
        )
