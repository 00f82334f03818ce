"""`convert-to-ttgir`: TTIR -> TTGIR. Every tensor gets the default blocked layout of its shape
for `num_warps` warps, and the module the attributes that say how many warps, threads and CTAs
a program has and which GPU it targets.

Legal for any TTIR: a layout says only where elements live, so no value changes. The ops whose
results are laid out by their operands get those layouts, as Triton's conversion does, and a
`ttg.convert_layout` brings such a result back to the default wherever it is used:

- `tt.broadcast` keeps its operand's layout; `tt.trans` permutes it;
- `tt.reduce` along `a` gives `#ttg.slice<{dim = a, parent = <operand's layout>}>`;
- `tt.expand_dims` along `a` takes its operand as a slice of the operand's layout with a size-1
  dimension inserted at `a` (dimensions ordered slowest-last: [0, 1, ...]), and gives that
  layout;
- `tt.dot` computes in a blocked layout of 2x2 or 4x4 elements per thread, its operands in
  `#ttg.dot_op` of it.

    %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    ==>
    #blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
    module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", ...}
    %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #blocked>

coalesce and remove-layout-conversions then choose the layouts that matter.
"""  # noqa: E501

from __future__ import annotations

from dataclasses import dataclass

from ....dialects import arith, tt, ttg
from ....dialects.ttg import module_attributes
from ....dialects.ttg.attributes import (
    BlockedEncodingAttr,
    DotOperandEncodingAttr,
    SliceEncodingAttr,
)
from ....ir import FunctionType, Operation, RankedTensorType, TypeAttr, register_pass
from ....ir.passes import Pass
from .converts import Converts
from .layout_inference import permute_blocked, set_constant_type, tensor_type, with_encoding


@register_pass("convert-to-ttgir")
@dataclass(frozen=True)
class ConvertToTTGIR(Pass):
    """Give every tensor of a TTIR module its default layout (see the module doc)."""

    num_warps: int = 4
    threads_per_warp: int = 32
    num_ctas: int = 1
    target: str = "cuda:90"

    def run(self, module: Operation) -> None:
        if self.num_ctas != 1:
            raise NotImplementedError("convert-to-ttgir: more than one CTA per program")
        module.attributes.update(
            module_attributes(self.num_warps, self.target, self.num_ctas, self.threads_per_warp)
        )
        _Conversion(self.num_warps, self.threads_per_warp).run(module)


class _Conversion:
    def __init__(self, num_warps: int, threads_per_warp: int):
        self.num_warps = num_warps
        self.threads_per_warp = threads_per_warp
        self.converts = Converts()
        self.special = {
            tt.BroadcastOp: self._broadcast,
            tt.ExpandDimsOp: self._expand_dims,
            tt.ReduceOp: self._reduce,
            tt.TransOp: self._trans,
            tt.DotOp: self._dot,
            arith.ConstantOp: self._constant,
            tt.FuncOp: self._function,
        }

    def default(self, shape) -> BlockedEncodingAttr:
        return BlockedEncodingAttr.default(shape, self.num_warps, self.threads_per_warp)

    def run(self, module: Operation) -> None:
        # Ops are listed first: the conversions made on the way are already in their layout.
        for op in list(module.walk()):
            for region in op.regions:
                for block in region.blocks:
                    for argument in block.arguments:
                        self._set_default(argument)
            handler = self.special.get(type(op))
            if handler is not None:
                handler(op)
                continue
            self._default_operands(op)
            for value in op.results:
                self._set_default(value)

    def _set_default(self, value) -> None:
        t = tensor_type(value)
        if t is not None:
            value.type = with_encoding(t, self.default(t.shape))

    def _natural(self, value):
        """`value` in the default layout of its shape."""
        t = tensor_type(value)
        if t is None:
            return value
        return self.converts.as_encoding(value, self.default(t.shape))

    def _default_operands(self, op: Operation) -> None:
        for i, value in enumerate(op.operands):
            natural = self._natural(value)
            if natural is not value:
                op.set_operand(i, natural)

    def _function(self, op: tt.FuncOp) -> None:
        """A function's tensor arguments and results take the default layouts too."""

        def laid_out(t):
            if isinstance(t, RankedTensorType) and t.shape:
                return with_encoding(t, self.default(t.shape))
            return t

        signature = op.signature
        inputs = [laid_out(t) for t in signature.inputs]
        results = [laid_out(t) for t in signature.results]
        op.attributes["function_type"] = TypeAttr(FunctionType(inputs, results))

    def _constant(self, op: arith.ConstantOp) -> None:
        t = tensor_type(op.result)
        if t is not None:
            set_constant_type(op, with_encoding(t, self.default(t.shape)))

    def _broadcast(self, op: tt.BroadcastOp) -> None:
        self._default_operands(op)
        op.result.type = with_encoding(op.result.type, op.src.type.encoding)

    def _trans(self, op: tt.TransOp) -> None:
        self._default_operands(op)
        encoding = permute_blocked(op.src.type.encoding, list(op.order.values))
        op.result.type = with_encoding(op.result.type, encoding)

    def _reduce(self, op: tt.ReduceOp) -> None:
        self._default_operands(op)
        encoding = SliceEncodingAttr(op.axis.value, op.operands[0].type.encoding)
        for value in op.results:
            if tensor_type(value) is not None:
                value.type = with_encoding(value.type, encoding)

    def _expand_dims(self, op: tt.ExpandDimsOp) -> None:
        self._default_operands(op)
        axis = op.axis.value
        source = op.src.type.encoding

        def inserted(values, one=1):
            values = list(values)
            values.insert(axis, one)
            return values

        rank = len(source.order) + 1
        encoding = BlockedEncodingAttr(
            inserted(source.size_per_thread),
            inserted(source.threads_per_warp),
            inserted(source.warps_per_cta),
            list(range(rank)),
        )
        src_type = with_encoding(op.src.type, SliceEncodingAttr(axis, encoding))
        convert = ttg.ConvertLayoutOp(op.src, result=src_type, location=op.location)
        op.parent.insert_before(convert, op)
        op.set_operand(0, convert.result)
        op.result.type = with_encoding(op.result.type, encoding)

    def _dot(self, op: tt.DotOp) -> None:
        """The FMA dot's layout: 2x2 (4 elements a thread or more) or 4x4 (16 or more)
        accumulator tiles per thread, the last dimension fastest."""
        shape = op.d.type.shape
        rank = len(shape)
        per_thread = 1
        elements = 1
        for d in shape:
            elements *= d
        share = elements // (self.num_warps * self.threads_per_warp)
        if share >= 4:
            per_thread = 2
        if share >= 16:
            per_thread = 4
        size = [1] * rank
        size[-1] = min(per_thread, shape[-1])
        size[-2] = min(per_thread, shape[-2])
        order = list(range(rank - 1, -1, -1))
        encoding = BlockedEncodingAttr.for_shape(
            shape, size, order, self.num_warps, self.threads_per_warp
        )
        wanted = [DotOperandEncodingAttr(0, encoding), DotOperandEncodingAttr(1, encoding)]
        wanted.append(encoding)
        for index, operand_encoding in enumerate(wanted):
            operand = self._natural(op.operands[index])
            convert = ttg.ConvertLayoutOp(
                operand,
                result=with_encoding(operand.type, operand_encoding),
                location=op.location,
            )
            op.parent.insert_before(convert, op)
            op.set_operand(index, convert.result)
        op.d.type = with_encoding(op.d.type, encoding)
