"""`inline`: replace every `tt.call` by the body of its callee, then drop the private functions
no longer called.

Kernels call jit functions; the frontend emits each as a `tt.func` and a `tt.call` so that it is
compiled once per specialization, and this pass makes the kernel one function again, as Triton's
inliner does. Functions marked `noinline = true` stay calls. A single-block callee is spliced in
place (its `tt.return` operands replace the call's results); a callee with several blocks is
cloned into the caller's region between the call's block and a continuation block, its returns
becoming branches to that block.

    %r = tt.call @f(%x) : (i32) -> i32          %r = arith.muli %x, %x : i32
    tt.func private @f(%a: i32) -> i32 {   ==>
      %m = arith.muli %a, %a : i32
      tt.return %m : i32
    }
"""

from __future__ import annotations

from dataclasses import dataclass

from ..dialects import cf, tt
from ..ir import Block, BoolAttr, CallSiteLoc, Operation, Region, register_pass
from ..ir.builtin import lookup_symbol
from ..ir.passes import Pass
from .symbol_dce import SymbolDCE
from .unreachable_blocks import erase_unreachable_blocks


def _inlinable(callee: Operation | None, include_noinline: bool) -> bool:
    if callee is None or callee.is_declaration:
        return False
    if include_noinline:
        return True
    noinline = callee.attributes.get("noinline")
    return not (isinstance(noinline, BoolAttr) and noinline.value)


@register_pass("inline")
@dataclass(frozen=True)
class Inline(Pass):
    """Inline every call of a function that may be inlined, innermost calls included;
    `include_noinline` inlines `noinline` functions too (the CPU back end keeps no calls)."""

    max_depth: int = 64
    include_noinline: bool = False

    def run(self, module: Operation) -> None:
        erase_unreachable_blocks(module)
        for _ in range(self.max_depth):
            calls = [
                op
                for op in module.walk()
                if isinstance(op, tt.CallOp)
                and _inlinable(lookup_symbol(module, op.callee.root), self.include_noinline)
            ]
            if not calls:
                break
            for call in calls:
                callee = lookup_symbol(module, call.callee.root)
                if len(callee.body.blocks) == 1:
                    _splice(call, callee)
                else:
                    _clone_blocks(call, callee)
        else:
            raise RecursionError(f"inline: calls nest deeper than {self.max_depth} (recursion?)")
        SymbolDCE().run(module)


def _splice(call: tt.CallOp, callee: Operation) -> None:
    body = callee.body.block
    mapping = dict(zip(body.arguments, call.operands))
    block = call.parent
    for op in body:
        if isinstance(op, tt.ReturnOp):
            returned = [mapping.get(v, v) for v in op.operands]
            for result, value in zip(call.results, returned):
                result.replace_all_uses_with(value)
            break
        block.insert_before(_at_call_site(op.clone(mapping), call), call)
    call.erase()


def _at_call_site(op: Operation, call: tt.CallOp) -> Operation:
    """Inlined code is located `callsite(callee location at call location)`, as MLIR does."""
    for inner in op.walk():
        inner.location = CallSiteLoc(inner.location, call.location)
        for region in inner.regions:
            for block in region.blocks:
                for argument in block.arguments:
                    argument.location = CallSiteLoc(argument.location, call.location)
    return op


def _clone_blocks(call: tt.CallOp, callee: Operation) -> None:
    block = call.parent
    region = block.parent
    after = Block([r.type for r in call.results], [call.location] * len(call.results))
    following = call.next_op
    while following is not None:
        nxt = following.next_op
        following.detach()
        after.append(following)
        following = nxt
    for result, argument in zip(call.results, after.arguments):
        result.replace_all_uses_with(argument)
    copies = Region()
    mapping: dict = {}
    callee.body.clone_into(copies, mapping)
    index = region.blocks.index(block) + 1
    for offset, copy in enumerate(list(copies.blocks)):
        copy.parent = None
        region.insert_block(index + offset, copy)
        for op in list(copy):
            _at_call_site(op, call)
            if isinstance(op, tt.ReturnOp):
                op.parent.insert_before(cf.BranchOp(after, op.operands, location=op.location), op)
                op.erase()
    copies.blocks = []
    region.insert_block(index + len(callee.body.blocks), after)
    entry = mapping[callee.body.blocks[0]]
    block.insert_before(cf.BranchOp(entry, call.operands, location=call.location), call)
    call.erase()
