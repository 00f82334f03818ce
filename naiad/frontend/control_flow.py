"""`if`, `for`, `while` and `return` as structured control flow (`scf`).

- `if` on a compile-time value visits only the taken branch (the other may not even type-check).
  `if` on a scalar tensor is `scf.if`; the names a branch rebinds (and the names both branches
  define) flow out as its results, in Triton's order: names defined before the `if` in
  definition order, then the new ones sorted. Each must have one type in both branches.
- `for` over `range`/`tl.range` is `scf.for` with the induction variable typed as the interpreter
  types it; the names the body assigns that exist before the loop are carried (`iter_args`) and
  must keep their type. A constexpr negative step runs the loop upwards and counts down in the
  body, as Triton does. `tl.static_range` and Python sequences are unrolled.
- `while` is `scf.while`: the condition in the `before` region, the body in `after`.
- `return` inside an `if` (no `cf` blocks): the rest of the function joins the branches, so
  the `scf.if` yields the returned values and the function returns them.

The carried names of a loop come from the body's assignments in the AST (the interpreter's rule);
those the live code leaves untouched (assigned only in a dead constexpr branch) are dropped again.
"""

from __future__ import annotations

import ast
import builtins
import warnings

from .. import ir
from ..dialects import scf, ub
from ..language import core
from ..language import dtypes as t
from ..language.if_conditions import if_condition
from ..language.iterators import condition as lang_condition
from ..language.iterators import range as lang_range
from ..language.semantic import loop_index_type
from . import loops
from . import values as vals

NOT_RETURNED = object()  # a body's `returned` until it reaches a `return`


class ControlFlowMixin:
    """The control-flow visitors of `CodeGenerator`."""

    # -- if -------------------------------------------------------------------------------------
    def visit_If(self, node):
        cond = self.visit(node.test)
        if not isinstance(cond, core.tensor):
            self.visit_body(node.body if core._unwrap_if_constexpr(cond) else node.orelse)
            return
        cond = if_condition(cond, self.semantic, lambda message: self._warn_at(node.test, message))
        cond = self.scalar_condition(cond, "if")
        if self.source.contains_return(node):
            self._if_returning(node, cond)
        else:
            self._if_merging(node, cond)

    def _warn_at(self, node, message: str):
        """A UserWarning naming the user's line of `node`, not the compiler's."""
        where = self.source.location(node)
        warnings.warn_explicit(message, UserWarning, where.filename, where.lineno)

    def scalar_condition(self, cond, what: str):
        """A runtime condition as an i1 scalar (other scalars compare with 0, as Triton's
        `cond.to(tl.int1)`)."""
        if cond.type.is_block():
            raise ValueError(
                f"the condition of `{what}` must be a scalar, got a tensor of shape "
                f"{list(cond.type.shape)}"
            )
        if cond.type != t.int1:
            cond = self.semantic.cast(cond, t.int1)
        return cond

    def _branch(self, stmts):
        """Visit `stmts` in a new block with a copy of the scope: (block, scope, returned)."""
        block = ir.Block()
        saved_scope, saved_rest = self.scope, self._rest
        self.scope, self._rest = dict(saved_scope), None
        try:
            with self.builder.at_end(block):
                self.visit_body(stmts)
            returned, self.returned = self.returned, NOT_RETURNED
            return block, self.scope, returned
        finally:
            self.scope, self._rest = saved_scope, saved_rest

    def _if_merging(self, node, cond):
        then_block, then_scope, _ = self._branch(node.body)
        else_block, else_scope, _ = self._branch(node.orelse)
        carried = []
        for name, before in self.scope.items():
            then_value, else_value = then_scope.get(name, before), else_scope.get(name, before)
            if then_value is not before or else_value is not before:
                carried.append((name, then_value, else_value))
        new = (then_scope.keys() & else_scope.keys()) - self.scope.keys()
        carried += [(name, then_scope[name], else_scope[name]) for name in sorted(new)]
        carried = [(n, vals.without_maps(a), vals.without_maps(b)) for n, a, b in carried]
        for name, then_value, else_value in carried:
            if not vals.same_structure(then_value, else_value):
                raise TypeError(
                    f"Mismatched type for {name} between then block "
                    f"({vals.describe(then_value)}) and else block ({vals.describe(else_value)})"
                )
        then_leaves = [x for _, v, _ in carried for x in vals.leaves(v)]
        else_leaves = [x for _, _, v in carried for x in vals.leaves(v)]
        results = self._create_if(cond, then_block, else_block, then_leaves, else_leaves)
        handles = iter(results)
        for name, then_value, _ in carried:
            self.scope[name] = vals.rebuild(then_value, handles)
        where = f"in one branch of the `if` at line {node.lineno}"
        self.scoped_out(then_scope, where)
        self.scoped_out(else_scope, where)

    def _create_if(self, cond, then_block, else_block, then_leaves, else_leaves):
        """The `scf.if` of two built branches, each ending in a yield of its leaves."""
        with self.builder.at_end(then_block):
            self.builder.create(scf.YieldOp, [x.handle for x in then_leaves])
        with_else = bool(then_leaves) or not else_block.is_empty
        if with_else:
            with self.builder.at_end(else_block):
                self.builder.create(scf.YieldOp, [x.handle for x in else_leaves])
        op = self.builder.create(
            scf.IfOp,
            cond.handle,
            [types_of(x) for x in then_leaves],
            thenRegion=ir.Region([then_block]),
            elseRegion=ir.Region([else_block] if with_else else []),
        )
        return op.results

    def _if_returning(self, node, cond):
        """An `if` with a `return` inside: both branches continue to the end of the function,
        and the `scf.if` yields what they return."""
        if self._loop_depth:
            raise NotImplementedError(
                "Cannot have `return` statements inside `while` or `for` statements"
            )
        rest = self.rest_statements()
        then_block, _, then_ret = self._branch(node.body + rest)
        else_block, _, else_ret = self._branch(node.orelse + rest)
        then_ret, else_ret = (
            self._poison_like(then_block, then_ret, else_ret),
            self._poison_like(else_block, else_ret, then_ret),
        )
        then_ret, else_ret = _returned_value(then_ret), _returned_value(else_ret)
        then_ret, else_ret = vals.without_maps(then_ret), vals.without_maps(else_ret)
        with self.builder.at_end(then_block):
            decayed = vals.decay_against(then_ret, else_ret, self.semantic.to_tensor)
        with self.builder.at_end(else_block):
            else_ret = vals.decay_against(else_ret, then_ret, self.semantic.to_tensor)
        then_ret = decayed
        if not vals.same_structure(then_ret, else_ret):
            # "Return type mismatch" is the phrase Triton's error has (its tests look for it).
            raise TypeError(
                f"Return type mismatch: {vals.describe(then_ret)} and "
                f"{vals.describe(else_ret)} (a function must return one type on every path)"
            )
        then_leaves, else_leaves = vals.leaves(then_ret), vals.leaves(else_ret)
        results = self._create_if(cond, then_block, else_block, then_leaves, else_leaves)
        self.returned = vals.rebuild(then_ret, iter(results))

    def _poison_like(self, block, returned, other):
        """A path that falls off the end of the function where the other returns values:
        it returns undefined values of theirs (`ub.poison`), as Triton's code generator."""
        if returned is not NOT_RETURNED or other is NOT_RETURNED or other is None:
            return returned
        with self.builder.at_end(block):
            return vals.map_leaves(
                other,
                lambda x: core.tensor(self.builder.create(ub.PoisonOp, types_of(x)).result, x.type),
            )

    def conditional_expression(self, node, cond):
        """`a if c else b` on a runtime `c`: an `scf.if` yielding the chosen value. A Python
        number chosen is a scalar tensor, as Triton makes it (`1.0 if x > 0 else 0.0`)."""
        cond = self.scalar_condition(cond, "if")
        blocks, chosen = [], []
        for branch in (node.body, node.orelse):
            block = ir.Block()
            with self.builder.at_end(block):
                value = self.visit(branch)
                if isinstance(core._unwrap_if_constexpr(value), bool | int | float):
                    value = self.semantic.to_tensor(core._unwrap_if_constexpr(value))
                chosen.append(vals.without_maps(value))
            blocks.append(block)
        if not vals.same_structure(*chosen):
            # Triton's error has this phrase (its tests look for it).
            raise TypeError(
                "Ternary expression with dynamic condition has inconsistent type: the two "
                f"values of a conditional expression must have one type, got "
                f"{vals.describe(chosen[0])} and {vals.describe(chosen[1])}"
            )
        leaves = [vals.leaves(v) for v in chosen]
        results = self._create_if(cond, blocks[0], blocks[1], leaves[0], leaves[1])
        return vals.rebuild(chosen[0], iter(results))

    def visit_Return(self, node):
        if self._loop_depth:
            raise NotImplementedError(
                "Cannot have `return` statements inside `while` or `for` statements"
            )
        self.returned = None if node.value is None else self.visit(node.value)

    # -- for ------------------------------------------------------------------------------------
    def visit_For(self, node):
        if node.orelse:
            raise NotImplementedError("`for ... else` is not supported in kernels")
        iterable = self._iterable(node)
        if isinstance(iterable, lang_range):
            loops.generate_for(self, node, iterable)
            return
        for value in core._unwrap_if_constexpr(iterable):
            self.assign(node.target, value, node)
            self._loop_body(node.body)

    def _iterable(self, node):
        """What a `for` iterates: in a user's kernel, Python's `range(...)` is `tl.range(...)`
        (the interpreter's rewrite); in the language's library it unrolls."""
        call = node.iter
        if self.rewritten and isinstance(call, ast.Call) and self.is_python_range(call.func):
            args = [self.visit(a) for a in call.args]
            kwargs = {k.arg: self.visit(k.value) for k in call.keywords}
            return lang_range(*args, **kwargs)
        return self.visit(call)

    def is_python_range(self, func_node) -> bool:
        return isinstance(func_node, ast.Name) and self.lookup(func_node.id) is builtins.range

    def _loop_body(self, body):
        """Visit a loop's body where a `return` is refused."""
        saved_rest, self._rest = self._rest, None
        self._loop_depth += 1
        try:
            self.visit_body(body)
        finally:
            self._loop_depth -= 1
            self._rest = saved_rest

    # -- while ----------------------------------------------------------------------------------
    def visit_While(self, node):
        if node.orelse:
            raise NotImplementedError("`while ... else` is not supported in kernels")
        loops.generate_while(self, node)

    def while_condition(self, node):
        """The condition of a `while` as an i1 scalar, and the `tl.condition` hints."""
        cond = self.visit(node.test)
        hints = {}
        if isinstance(cond, lang_condition):
            hints["disable_licm"] = cond.disable_licm
            cond = cond.condition
        if not isinstance(cond, core.tensor):
            cond = self.semantic.to_tensor(bool(core._unwrap_if_constexpr(cond)))
        return self.scalar_condition(cond, "while"), hints

    def loop_index(self, rng):
        """(lower, upper, step, induction type, constexpr step or None) of a `tl.range`."""
        bounds = [self.semantic.to_tensor(b) for b in (rng.start, rng.end, rng.step)]
        iv_type = loop_index_type(*(b.type for b in bounds))
        step = core._unwrap_if_constexpr(rng.step)
        static_step = step if isinstance(step, int) else None
        if static_step == 0:
            raise ValueError("range() step must not be zero")
        lower, upper, step = (self.semantic.cast(b, iv_type) for b in bounds)
        return lower, upper, step, iv_type, static_step


def types_of(value) -> ir.Type:
    return value.handle.type


def _returned_value(returned):
    return None if returned is NOT_RETURNED else returned
