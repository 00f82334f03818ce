"""Rewrites that remove `ttg.convert_layout` ops for free: the canonical forms of a conversion.

    convert(x : T -> T)                       ==> x
    convert(convert(x : A -> B) : B -> C)     ==> convert(x : A -> C)   (x itself when C is A)
    convert(tt.splat s)                       ==> tt.splat s in the new layout
    convert(tt.make_range)                    ==> tt.make_range in the new layout
    convert(arith.constant dense<...>)        ==> the constant in the new layout
    tt.descriptor_store d[..], convert(x)     ==> tt.descriptor_store d[..], x   (so _reduce)
    ttg.local_alloc convert(acc)              ==> ttg.local_alloc acc   (acc: #ttg.nvidia_mma)

Each makes the value directly where it is needed: a splat, a range or a constant costs the
same in any layout, and a tensor copy's store writes its block into shared memory from any
layout (lowering/tma.py), so a conversion before it would only add a round trip. So does a
buffer's store of a tensor-core accumulator (a chained wgmma's B): the accumulator goes into the
buffer directly (`stmatrix` on sm_90, lowering/stmatrix.py), as Triton folds the conversion into
the allocation; other sources keep theirs (the buffer's layout was chosen for the converted
value's vectors, operand_buffers.py). A conversion
left without users is dead and goes (it is Pure).
"""

from __future__ import annotations

from ....dialects import arith, tt, ttg
from ....dialects.ttg.attributes import NvidiaMmaEncodingAttr
from ....ir import (
    DenseElementsAttr,
    Operation,
    PatternRewriter,
    RewritePattern,
    apply_patterns_greedily,
)
from .layout_inference import set_constant_type


class FoldIdentityConvert(RewritePattern):
    """A conversion to the layout its operand already has is that operand."""

    root = ttg.ConvertLayoutOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        if op.src.type is not op.result.type:
            return False
        rewriter.replace_op(op, [op.src])
        return True


class FoldConvertChain(RewritePattern):
    """Two conversions in a row are one."""

    root = ttg.ConvertLayoutOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        inner = op.src.defining_op
        if not isinstance(inner, ttg.ConvertLayoutOp):
            return False
        with rewriter.modify_op_in_place(op):
            op.set_operand(0, inner.src)
        return True


class RematerializeSplat(RewritePattern):
    """A splat is made in the layout its user wants."""

    root = ttg.ConvertLayoutOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        splat = op.src.defining_op
        if not isinstance(splat, tt.SplatOp):
            return False
        rewriter.replace_op(op, rewriter.create(tt.SplatOp, splat.src, result=op.result.type))
        return True


class RematerializeMakeRange(RewritePattern):
    """A range is made in the layout its user wants."""

    root = ttg.ConvertLayoutOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        made = op.src.defining_op
        if not isinstance(made, tt.MakeRangeOp):
            return False
        start, end = made.start.value, made.end.value
        rewriter.replace_op(op, rewriter.create(tt.MakeRangeOp, start, end, result=op.result.type))
        return True


class RematerializeConstant(RewritePattern):
    """A dense constant is made in the layout its user wants, next to the original (constants
    stay together at the top of the function, as MLIR's folder keeps them)."""

    root = ttg.ConvertLayoutOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        constant = op.src.defining_op
        if not isinstance(constant, arith.ConstantOp):
            return False
        if not isinstance(constant.value, DenseElementsAttr):
            return False
        new = arith.ConstantOp(constant.value, location=constant.location)
        set_constant_type(new, op.result.type)
        constant.parent.insert_after(new, constant)
        rewriter.listener.notify_inserted(new)
        rewriter.replace_op(op, new)
        return True


class StoreWithoutConvert(RewritePattern):
    """A tensor copy's store takes its value in the layout the value has."""

    root = tt.DescriptorStoreOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        convert = op.src.defining_op
        if not isinstance(convert, ttg.ConvertLayoutOp):
            return False
        with rewriter.modify_op_in_place(op):
            op.set_operand(1, convert.src)
        return True


class ReduceWithoutConvert(StoreWithoutConvert):
    """So does a bulk tensor reduction (its value is the same operand)."""

    root = tt.DescriptorReduceOp


class AllocWithoutConvert(RewritePattern):
    """A buffer takes a tensor-core accumulator in the layout it has."""

    root = ttg.LocalAllocOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        convert = None if op.src is None else op.src.defining_op
        if not isinstance(convert, ttg.ConvertLayoutOp):
            return False
        if not isinstance(convert.src.type.encoding, NvidiaMmaEncodingAttr):
            return False
        with rewriter.modify_op_in_place(op):
            op.set_operand(0, convert.src)
        return True


PATTERNS = (
    FoldIdentityConvert(),
    FoldConvertChain(),
    RematerializeSplat(),
    RematerializeMakeRange(),
    RematerializeConstant(),
    StoreWithoutConvert(),
    ReduceWithoutConvert(),
    AllocWithoutConvert(),
)


def cleanup_converts(root: Operation) -> None:
    """Apply the rewrites above until none applies, and drop what they leave dead."""
    apply_patterns_greedily(root, PATTERNS)
