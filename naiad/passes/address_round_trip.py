"""`ptr_to_int(int_to_ptr(x)) -> x`, a canonicalization pattern of Naiad's own (the
`canonicalize` pass runs it with Triton's, tt_canonicalize.py):

    %p = tt.int_to_ptr %a : tensor<8xi64> -> tensor<8x!tt.ptr<i32>>
    %q = tt.int_to_ptr %b : tensor<8xi64> -> tensor<8x!tt.ptr<i32>>
    %s = arith.select %c, %p, %q : tensor<8xi1>, tensor<8x!tt.ptr<i32>>
    %i = tt.ptr_to_int %s : tensor<8x!tt.ptr<i32>> -> tensor<8xi64>
    ==>
    %i = arith.select %c, %a, %b : tensor<8xi1>, tensor<8xi64>
"""

from __future__ import annotations

from ..dialects import arith, tt
from ..ir import Operation, PatternRewriter, RewritePattern


class FoldAddressRoundTrip(RewritePattern):
    """ptr_to_int(int_to_ptr(x)) -> x, and ptr_to_int(select(c, int_to_ptr(a), int_to_ptr(b)))
    -> select(c, a, b): an integer taken through a pointer type and back keeps every bit (as
    LLVM's inttoptr and ptrtoint do), and a program that chooses between addresses and stores
    the choice (Triton's test_where on pointers) never needs a pointer. The CPU back end's
    pointers into memory hold addresses aligned to their pointee (middle/linalg/
    convert_addresses.py), so without this an unaligned integer would lose its low bits."""

    root = tt.PtrToIntOp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        source = op.src.defining_op
        if isinstance(source, tt.IntToPtrOp) and source.src.type is op.result.type:
            rewriter.replace_op(op, [source.src])
            return True
        if not isinstance(source, arith.SelectOp):
            return False
        chosen = [source.true_value.defining_op, source.false_value.defining_op]
        if not all(isinstance(c, tt.IntToPtrOp) for c in chosen):
            return False
        if any(c.src.type is not op.result.type for c in chosen):
            return False
        rewriter.replace_op(
            op, rewriter.create(arith.SelectOp, source.condition, chosen[0].src, chosen[1].src)
        )
        return True
