"""The forward half of remove-layout-conversions: carry the layouts of the ops that fix one
(anchors) down to every value computed from them, so that values are made where they are used
instead of being converted there.

1. Anchors: the results of loads and stores that are worth their layout (at least as many
   elements as the program has threads) and of atomics and dots.
2. Propagation: each anchor's layout flows to the users of its value (elementwise ops,
   broadcasts, conversions, reductions as slices, expand_dims, trans, reshape, join, split),
   through `scf.for` (initial value -> iteration argument and result), `scf.while` (initial
   value -> `before` argument; `scf.condition` -> `after` argument and result) and
   `scf.yield` (-> the loop's or if's result, or a while's `before` argument); a value reached
   by several layouts keeps the first (a blocked one for a memory op). `arith.trunci` stops
   it, as Triton's pass does.
3. Rewrite, in program order and in place: an op whose results got a new layout takes its
   operands in the layouts that give it (converted where they differ) and gives its results
   the new layout; any other user gets its operands converted back to the layouts it had them
   in (a store keeps the layout coalesce gave it), except a reduction to a scalar, which reads
   its operands in any layout, the first one's for all.

    %x = tt.load %p : tensor<1024x!tt.ptr<f32>, #blocked1>
    %a = ttg.convert_layout %x : ... #blocked1> -> ... #blocked>
    %b = arith.addf %a, %a : tensor<1024xf32, #blocked>
    ==>
    %x = tt.load %p : tensor<1024x!tt.ptr<f32>, #blocked1>
    %a = ttg.convert_layout %x : ... #blocked1> -> ... #blocked1>     (folds away)
    %b = arith.addf %a, %a : tensor<1024xf32, #blocked1>
"""

from __future__ import annotations

from ....dialects import arith, scf, tt, ttg, ttng
from ....dialects.ttg.attributes import BlockedEncodingAttr
from ....ir import Operation, Value
from .converts import Converts
from .layout_inference import (
    infer_dst_encoding,
    infer_src_encoding,
    loop_parts,
    tensor_type,
    with_encoding,
)

_ANCHOR_OPS = (tt.DotOp, ttng.WarpGroupDotOp, tt.AtomicRMWOp, tt.AtomicCASOp)
_MEMORY_OPS = (tt.LoadOp, tt.StoreOp, tt.AtomicRMWOp, tt.AtomicCASOp)


def _program_threads(func: Operation) -> int:
    module = func.parent_op()
    return (
        module.attributes["ttg.num-warps"].value * module.attributes["ttg.threads-per-warp"].value
    )


def _is_anchor(op: Operation, threads: int) -> bool:
    if isinstance(op, tt.LoadOp):
        t = tensor_type(op.ptr)
        if t is None:
            return False
        elements = 1
        for d in t.shape:
            elements *= d
        return elements >= threads
    return isinstance(op, _ANCHOR_OPS)


def propagate_layouts(func: Operation) -> None:
    """Run steps 1-3 (see the module doc) on one `tt.func`."""
    layouts = _Propagation(func).solve()
    _Rewrite(layouts).run(func)


class _Propagation:
    def __init__(self, func: Operation):
        self.func = func
        self.layouts: dict[Value, list] = {}

    def solve(self) -> dict[Value, object]:
        threads = _program_threads(self.func)
        for op in self.func.walk():
            if _is_anchor(op, threads):
                for value in op.results:
                    if tensor_type(value) is not None:
                        self.layouts.setdefault(value, []).append(value.type.encoding)
        queue = list(self.layouts)
        while queue:
            value = queue.pop()
            queue.extend(self._to_users(value, self.layouts[value]))
        return {v: self._resolve(v, encodings) for v, encodings in self.layouts.items()}

    @staticmethod
    def _resolve(value: Value, encodings: list):
        """The first layout that reached `value`; for a memory op's result, its first
        blocked one."""
        if isinstance(value.defining_op, _MEMORY_OPS):
            for encoding in encodings:
                if isinstance(encoding, BlockedEncodingAttr):
                    return encoding
        return encodings[0]

    def _to_users(self, value: Value, encodings: list) -> list[Value]:
        changed = []
        for user, index in value.uses:
            if isinstance(user, scf.ForOp):
                if index >= 3:
                    _, arguments, results, _ = loop_parts(user)
                    targets = [arguments[index - 3], results[index - 3]]
                    self._set(targets, encodings, None, changed)
            elif isinstance(user, scf.WhileOp):
                self._set([user.before.block.arguments[index]], encodings, None, changed)
            elif isinstance(user, scf.ConditionOp):
                if index >= 1:  # operand 0 is the condition
                    loop = user.parent_op()
                    targets = [loop.after.block.arguments[index - 1], loop.results[index - 1]]
                    self._set(targets, encodings, None, changed)
            elif isinstance(user, scf.YieldOp):
                self._set(_yield_targets(user, index), encodings, None, changed)
            elif isinstance(user, arith.TruncIOp):
                continue
            elif not isinstance(user, scf.IfOp):
                self._set(user.results, encodings, user, changed)
        return changed

    def _set(self, values, encodings: list, op: Operation | None, changed: list) -> None:
        for value in values:
            if tensor_type(value) is None:
                continue
            known = self.layouts.setdefault(value, [])
            grew = False
            for encoding in encodings:
                new = encoding if op is None else infer_dst_encoding(op, encoding)
                if new is not None and new not in known:
                    known.append(new)
                    grew = True
            if grew:
                changed.append(value)
            elif not known:
                del self.layouts[value]


def _yield_targets(yield_op: Operation, index: int) -> list[Value]:
    """The values a `scf.yield` operand flows to: the parent's result, and for a loop the
    next iteration's argument (a while's `before` argument)."""
    parent = yield_op.parent_op()
    if isinstance(parent, scf.ForOp):
        return [parent.results[index], parent.body.arguments[1 + index]]
    if isinstance(parent, scf.WhileOp):
        return [parent.before.block.arguments[index]]
    if isinstance(parent, scf.IfOp):
        return [parent.results[index]]
    return []


class _Rewrite:
    """Step 3: give each value its chosen layout, in place (see the module doc)."""

    def __init__(self, layouts: dict[Value, object]):
        self.layouts = layouts
        self.converts = Converts()
        self.original: dict[Value, object] = {}  # value -> its layout before the rewrite

    def run(self, func: Operation) -> None:
        for op in list(func.walk()):
            if isinstance(op, scf.YieldOp):
                self._yield(op)
            elif isinstance(op, scf.ForOp):
                self._for(op)
            elif isinstance(op, scf.WhileOp):
                self._while(op)
            elif isinstance(op, scf.ConditionOp):
                self._condition(op)
            elif self._retype_results(op):
                self._operands_as(op)
            else:
                self._keep_operands(op)

    def _chosen(self, value: Value):
        encoding = self.layouts.get(value)
        t = tensor_type(value)
        if encoding is None or t is None or t.encoding is encoding:
            return None
        return encoding

    def _retype(self, value: Value, encoding) -> None:
        self.original.setdefault(value, value.type.encoding)
        value.type = with_encoding(value.type, encoding)

    def _retype_results(self, op: Operation) -> bool:
        new = [(v, self._chosen(v)) for v in op.results]
        new = [(v, e) for v, e in new if e is not None]
        for value, encoding in new:
            self._retype(value, encoding)
        return bool(new)

    def _operands_as(self, op: Operation) -> None:
        """Give a rewritten op its tensor operands in the layout its new results need (a
        conversion: its result's layout, so that it folds away)."""
        result = next(v.type.encoding for v in op.results if tensor_type(v) is not None)
        wanted = result if isinstance(op, ttg.ConvertLayoutOp) else infer_src_encoding(op, result)
        for i, value in enumerate(op.operands):
            if tensor_type(value) is None:
                continue
            encoding = wanted
            if encoding is None:
                encoding = self.original.get(value, value.type.encoding)
            op.set_operand(i, self.converts.as_encoding(value, encoding))

    def _keep_operands(self, op: Operation) -> None:
        """An op that was not rewritten sees its operands in the layouts it had them in."""
        if isinstance(op, tt.ReduceOp) and all(tensor_type(v) is None for v in op.results):
            # A reduction to a scalar reads its operands in any layout, but one for all
            # (`argmax` reduces values and indices together, register by register).
            first = op.operands[0].type.encoding
            for i, value in enumerate(op.operands[1:], start=1):
                op.set_operand(i, self.converts.as_encoding(value, first))
            return
        for i, value in enumerate(op.operands):
            old = self.original.get(value)
            if old is not None and tensor_type(value) is not None:
                op.set_operand(i, self.converts.as_encoding(value, old))

    def _for(self, op: Operation) -> None:
        """A loop's arguments and results take their chosen layouts, one each; its initial
        values are converted to the arguments' layouts, whether or not those changed: an
        initial value retyped before the loop (a layout reaching it from its own producer)
        must not reach an argument that kept another."""
        inits, arguments, results, _ = loop_parts(op)
        for k, (argument, result) in enumerate(zip(arguments, results)):
            encoding = self._chosen(result) or self._chosen(argument)
            if encoding is not None:
                self._retype(argument, encoding)
                self._retype(result, encoding)
            if tensor_type(argument) is not None:
                wanted = argument.type.encoding
                op.set_operand(3 + k, self.converts.as_encoding(inits[k], wanted))

    def _while(self, op: Operation) -> None:
        """A while's `before` arguments take their chosen layouts (its initial values converted
        to them); its `after` arguments and results, which `scf.condition` feeds alike, one
        layout each."""
        for k, argument in enumerate(op.before.block.arguments):
            encoding = self._chosen(argument)
            if encoding is not None:
                self._retype(argument, encoding)
            if tensor_type(argument) is not None:  # as a for's (see _for)
                wanted = argument.type.encoding
                op.set_operand(k, self.converts.as_encoding(op.operands[k], wanted))
        for argument, result in zip(op.after.block.arguments, op.results):
            encoding = self._chosen(result) or self._chosen(argument)
            if encoding is not None:
                self._retype(argument, encoding)
                self._retype(result, encoding)

    def _condition(self, op: Operation) -> None:
        """`scf.condition` passes its arguments in the layouts of the while's results."""
        loop = op.parent_op()
        for j, value in enumerate(op.operands[1:]):
            if tensor_type(value) is not None:
                wanted = loop.results[j].type.encoding
                op.set_operand(1 + j, self.converts.as_encoding(value, wanted))

    def _yield(self, op: Operation) -> None:
        parent = op.parent_op()
        if isinstance(parent, scf.WhileOp):
            targets = parent.before.block.arguments
        elif isinstance(parent, (scf.ForOp, scf.IfOp)):
            targets = parent.results
        else:
            self._keep_operands(op)
            return
        for i, value in enumerate(op.operands):
            if tensor_type(value) is not None:
                wanted = targets[i].type.encoding
                op.set_operand(i, self.converts.as_encoding(value, wanted))
