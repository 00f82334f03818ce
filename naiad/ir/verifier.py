"""Verification: every op checked recursively against its declaration, its traits and its own
`verify_()`; blocks end in terminators; every operand is defined where it is used.

SSA scoping is checked by walking each region in dominator-tree order with the set of values
visible at that point: a block sees its own definitions above the use, those of the blocks that
dominate it, and those of enclosing regions, except across an IsolatedFromAbove op.
"""

from __future__ import annotations

from .dominance import dominator_tree
from .errors import VerificationError
from .operation import Operation, UnregisteredOp
from .traits import IsolatedFromAbove, NoTerminator, Terminator
from .values import OpResult, Value

__all__ = ["VerificationError", "verify", "verify_op_only"]

_TRAIT_CHECKS: dict[type, tuple] = {}


def verify(op: Operation) -> None:
    """Check `op` and everything nested in it; raise VerificationError at the first problem.
    The operands of `op` itself are not checked (their scope is outside it)."""
    _Verifier(op).check(op, operands=False)


def verify_op_only(op: Operation) -> None:
    """The checks of `op` alone: declaration, traits, `verify_()` and successors."""
    op_def = op._op_def
    if op_def is not None:
        _check_declared(op, op_def)
    for trait in _trait_checks(type(op)):
        message = trait.verify(op)
        if message:
            raise VerificationError(message, op)
    op.verify_()
    _check_successors(op)


def _trait_checks(cls: type) -> tuple:
    """The traits of `cls` in name order, so the first error reported never varies."""
    checks = _TRAIT_CHECKS.get(cls)
    if checks is None:
        checks = _TRAIT_CHECKS[cls] = tuple(sorted(cls.traits, key=lambda t: t.name))
    return checks


class _Verifier:
    __slots__ = ("isolated", "root", "visible")

    def __init__(self, root: Operation):
        self.root = root
        self.visible: set[Value] = set()
        self.isolated: list[tuple[Operation, set[Value]]] = []  # (op, values visible outside)

    def check(self, op: Operation, operands: bool = True) -> None:
        if operands:
            for i, value in enumerate(op.operands):
                if value not in self.visible and not self._outside_root(value):
                    raise VerificationError(self._scope_error(i, value), op)
        verify_op_only(op)
        if op.regions:
            self._check_regions(op)

    def _outside_root(self, value: Value) -> bool:
        """A value defined above the op being verified is in scope, unless an isolated op
        lies between."""
        if self.isolated:
            return False
        owner = value.owner if isinstance(value, OpResult) else value.owner.parent_op()
        return owner is not None and not self.root.is_ancestor(owner)

    def _scope_error(self, index: int, value: Value) -> str:
        for isolated_op, outside in reversed(self.isolated):
            if value in outside:
                return (
                    f"operand #{index} uses a value defined outside the region of "
                    f"'{isolated_op.name}', which is isolated from above"
                )
        if isinstance(value, OpResult) and value.owner.parent is None:
            return f"operand #{index} is a result of '{value.owner.name}', which is in no block"
        return f"operand #{index} does not dominate this use"

    def _check_regions(self, op: Operation) -> None:
        isolated = IsolatedFromAbove in op.traits
        if isolated:
            self.isolated.append((op, self.visible))
            self.visible = set()
        # An unregistered op may hold blocks without terminators, as MLIR allows.
        needs_terminator = NoTerminator not in op.traits and not isinstance(op, UnregisteredOp)
        for r, region in enumerate(op.regions):
            if needs_terminator:
                for b, block in enumerate(region.blocks):
                    _check_terminator(op, r, b, block)
            if len(region.blocks) == 1:
                self._check_block(region.blocks[0], None)
            elif region.blocks:
                tree = dominator_tree(region)
                self._check_block(region.blocks[0], tree)
                for block in region.blocks:
                    if block not in tree:  # unreachable: sees only its own definitions
                        self._check_block(block, None)
        if isolated:
            self.visible = self.isolated.pop()[1]

    def _check_block(self, block, tree: dict | None) -> None:
        visible = self.visible
        defined: list[Value] = list(block.arguments)
        visible.update(defined)
        for op in block:
            self.check(op)
            if op._next is not None and Terminator in op.traits:
                raise VerificationError("must be the last operation in its block", op)
            visible.update(op.results)
            defined.extend(op.results)
        if tree:
            for child in tree[block]:
                self._check_block(child, tree)
        visible.difference_update(defined)


def _check_terminator(op: Operation, r: int, b: int, block) -> None:
    last = block.last_op
    if last is None:
        raise VerificationError(f"empty block #{b} in region #{r}: expects a terminator", op)
    # An unregistered op might be a terminator: MLIR gives it the benefit of the doubt.
    if Terminator not in last.traits and not isinstance(last, UnregisteredOp):
        raise VerificationError(
            f"block #{b} in region #{r} must end with a terminator, found '{last.name}'", op
        )


def _check_declared(op: Operation, op_def) -> None:
    """The generic verifier: counts and constraints of what the op class declares."""
    _check_groups(op, op_def.operand_segments, op.operands, "operand")
    _check_groups(op, op_def.result_segments, op.results, "result")
    for d in op_def.attributes:
        value = op.attributes.get(d.name)
        if value is None:
            if not d.optional:
                raise VerificationError(f"requires attribute '{d.name}'", op)
        elif not d.constraint(value):
            raise VerificationError(
                f"attribute '{d.name}' failed to satisfy constraint: {d.constraint.description}",
                op,
            )
    declared = op_def.regions
    variadic = bool(declared) and declared[-1].variadic
    fixed = len(declared) - variadic
    if len(op.regions) != fixed and not (variadic and len(op.regions) > fixed):
        expected = f"at least {fixed}" if variadic else str(fixed)
        raise VerificationError(f"expected {expected} regions, but found {len(op.regions)}", op)
    for i, region in enumerate(op.regions):
        d = declared[min(i, len(declared) - 1)]
        if d.single_block and len(region.blocks) > 1:
            raise VerificationError(f"region #{i} ('{d.name}') must have at most 1 block", op)
    if len(op.successors) != len(op_def.successors):
        raise VerificationError(
            f"expected {len(op_def.successors)} successors, but found {len(op.successors)}", op
        )


def _check_groups(op: Operation, segments, values: tuple, noun: str) -> None:
    try:
        groups = segments.split(values, op.attributes)
    except ValueError as error:
        raise VerificationError(str(error), op) from None
    index = 0
    for d, group in zip(segments.defs, groups):
        for value in group:
            if not d.constraint(value.type):
                raise VerificationError(
                    f"{noun} #{index} ('{d.name}') must be {d.constraint.description}, "
                    f"but got '{value.type}'",
                    op,
                )
            index += 1


def _check_successors(op: Operation) -> None:
    if not op.successors:
        return
    block = op.parent
    if block is None or op._next is not None:
        raise VerificationError("operation with block successors must terminate its block", op)
    for i, successor in enumerate(op.successors):
        if successor.parent is not block.parent:
            raise VerificationError(f"successor #{i} is a block of another region", op)
        forwarded = op.successor_operands(i)
        if forwarded is None:
            continue
        if len(forwarded) != len(successor.arguments):
            raise VerificationError(
                f"branch has {len(forwarded)} operands for successor #{i}, but target block "
                f"has {len(successor.arguments)}",
                op,
            )
        for j, (value, arg) in enumerate(zip(forwarded, successor.arguments)):
            if value.type is not arg.type:
                raise VerificationError(
                    f"type mismatch for successor #{i} operand #{j}: '{value.type}' passed to "
                    f"an argument of type '{arg.type}'",
                    op,
                )
