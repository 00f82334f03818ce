"""Rematerialization across a loop's back edge: a value an `scf.for` carries changes layout with
everything that computes it in the loop, so that a conversion inside the loop becomes one
conversion before it.

The K loop of a matmul carries its pointer tensors; coalesce gives their loads a layout of their
own, and without this each iteration converts every pointer through shared memory:

    %r:2 = scf.for ... iter_args(%p = %p0, %acc = %c) -> (tensor<128x64x!tt.ptr<f16>, #b1>, ...)
      %q = ttg.convert_layout %p : #b1 -> #b3
      %x = tt.load %q ...
      %n = tt.addptr %p, %step : tensor<128x64x!tt.ptr<f16>, #b1>, ...
      scf.yield %n, ...
    ==>
    %p1 = ttg.convert_layout %p0 : #b1 -> #b3          (once, before the loop)
    %r:2 = scf.for ... iter_args(%p = %p1, %acc = %c) -> (tensor<..., #b3>, ...)
      %x = tt.load %p ...
      %n = tt.addptr %p, %step1 : tensor<128x64x!tt.ptr<f16>, #b3>, ...
      scf.yield %n, ...

The slice (rematerialization.py) reaches the iteration argument from the conversion, and goes on
from the value the loop yields for it, which is recomputed in the new layout like any other
slice value. The argument and the loop's result are retyped in place; whatever else reads them
reads a conversion back to the old layout (inside the loop, at the start of its body: a cost,
counted by the slice; after it, once), and the initial value is converted before the loop. The
conversions made here are rematerialized in turn.
"""

from __future__ import annotations

from ....dialects import scf, ttg
from ....ir import BlockArgument, Operation, Value
from .layout_inference import loop_parts


def carried(value: Value) -> tuple[Operation, int] | None:
    """(the `scf.for`, the index among its carried values) of an iteration argument."""
    if not isinstance(value, BlockArgument) or value.index == 0:
        return None
    loop = value.owner.parent_op()
    if not isinstance(loop, scf.ForOp) or value.owner is not loop.body:
        return None
    return loop, value.index - 1


def yielded(value: Value) -> Value:
    """The value the loop yields for the iteration argument `value`."""
    loop, index = carried(value)
    return loop_parts(loop)[3].operands[index]


def retype(argument: Value, encoding, new_yielded: Value, copies: set[Operation]) -> Operation:
    """Give the carried `argument` (and its loop result) the layout `encoding`, the loop
    yielding `new_yielded` for it; readers other than `copies` keep the old layout through a
    conversion. Returns the conversion of the initial value, inserted before the loop."""
    loop, index = carried(argument)
    inits, _, results, terminator = loop_parts(loop)
    old_type = argument.type
    new_type = old_type.clone(encoding=encoding)

    init = inits[index]
    to_new = ttg.ConvertLayoutOp(init, result=new_type, location=loop.location)
    loop.parent.insert_before(to_new, loop)
    loop.set_operand(3 + index, to_new.result)
    terminator.set_operand(index, new_yielded)

    argument.type = new_type
    back = ttg.ConvertLayoutOp(argument, result=old_type, location=argument.location)
    loop.body.prepend(back)
    argument.replace_uses_where(back.result, lambda op, _: op is not back and op not in copies)

    result = results[index]
    result.type = new_type
    after = ttg.ConvertLayoutOp(result, result=old_type, location=loop.location)
    loop.parent.insert_after(after, loop)
    result.replace_uses_where(after.result, lambda op, _: op is not after)
    return to_new
