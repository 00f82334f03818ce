"""The fields of a declarative op definition (`operand`, `result`, `attribute`, ...) and the
bookkeeping of optional and variadic operand and result groups. opdef.py reads them.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter

from .attributes import DenseArrayAttr
from .constraints import AnyAttr, AnyType, as_constraint

SINGLE, OPTIONAL, VARIADIC = "single", "optional", "variadic"
OPERAND_SEGMENTS = "operandSegmentSizes"
RESULT_SEGMENTS = "resultSegmentSizes"


class Field:
    """A declared part of an op; `name` is the class attribute it was assigned to."""

    __slots__ = ("name",)

    def __set_name__(self, owner, name: str) -> None:
        self.name = name


class OperandDef(Field):
    __slots__ = ("constraint", "kind")

    def __init__(self, kind: str, constraint):
        self.kind = kind
        self.constraint = as_constraint(constraint)


class ResultDef(Field):
    __slots__ = ("constraint", "kind", "like")

    def __init__(self, kind: str, constraint, like: str | None = None):
        self.kind = kind
        self.constraint = as_constraint(constraint)
        self.like = like


class AttributeDef(Field):
    __slots__ = ("constraint", "optional")

    def __init__(self, constraint, optional: bool):
        self.constraint = as_constraint(constraint)
        self.optional = optional


class RegionDef(Field):
    __slots__ = ("single_block", "variadic")

    def __init__(self, single_block: bool, variadic: bool = False):
        self.single_block = single_block
        self.variadic = variadic  # any number of regions; only the last declared (opdef.py)


class SuccessorDef(Field):
    __slots__ = ()


def operand(constraint=AnyType) -> OperandDef:
    return OperandDef(SINGLE, constraint)


def opt_operand(constraint=AnyType) -> OperandDef:
    return OperandDef(OPTIONAL, constraint)


def var_operand(constraint=AnyType) -> OperandDef:
    return OperandDef(VARIADIC, constraint)


def result(constraint=AnyType, like: str | None = None) -> ResultDef:
    """A result; `like="lhs"` lets the constructor take its type from operand `lhs`."""
    return ResultDef(SINGLE, constraint, like)


def var_result(constraint=AnyType, like: str | None = None) -> ResultDef:
    """Results; `like="inputs"` gives them the types of variadic operand `inputs`, one for one."""
    return ResultDef(VARIADIC, constraint, like)


def attribute(constraint=AnyAttr) -> AttributeDef:
    return AttributeDef(constraint, optional=False)


def opt_attribute(constraint=AnyAttr) -> AttributeDef:
    return AttributeDef(constraint, optional=True)


def region(single_block: bool = False) -> RegionDef:
    return RegionDef(single_block)


def var_region(single_block: bool = False) -> RegionDef:
    """Any number of regions (MLIR's VariadicRegion): the op's last declared region field."""
    return RegionDef(single_block, variadic=True)


def successor() -> SuccessorDef:
    return SuccessorDef()


class Segments:
    """Where each declared group of operands (or results) sits in the flat tuple.

    With at most one optional/variadic group, positions follow from the total count; with
    more, a `DenseArrayAttr` of sizes (`operandSegmentSizes`, as MLIR's
    AttrSizedOperandSegments) is kept in the op's attributes.
    """

    __slots__ = ("attr_name", "defs", "fixed", "noun", "sized", "variable_index")

    def __init__(self, defs: tuple, attr_name: str, noun: str):
        self.defs = defs
        self.attr_name = attr_name
        self.noun = noun
        variable = [i for i, d in enumerate(defs) if d.kind != SINGLE]
        self.sized = len(variable) > 1
        self.fixed = len(defs) - len(variable)
        self.variable_index = variable[0] if len(variable) == 1 else None

    def bounds(self, count: int, attributes: dict, k: int) -> tuple[int, int]:
        """(start, size) of group `k` in a list of `count` items."""
        if self.sized:
            sizes = attributes[self.attr_name].values
            return sum(sizes[:k]), sizes[k]
        v = self.variable_index
        if v is None or k < v:
            return k, 1
        if k > v:
            return count - (len(self.defs) - k), 1
        return v, count - self.fixed

    def split(self, items: tuple, attributes: dict) -> list[tuple]:
        """Items grouped per declared field; ValueError (with the reason) if they do not fit."""
        if self.sized:
            sizes = attributes.get(self.attr_name)
            if not isinstance(sizes, DenseArrayAttr) or len(sizes) != len(self.defs):
                raise ValueError(f"requires a {len(self.defs)}-element '{self.attr_name}'")
            if sum(sizes.values) != len(items):
                raise ValueError(f"'{self.attr_name}' does not sum to {len(items)}")
        elif self.variable_index is None and len(items) != self.fixed:
            raise ValueError(f"expected {self.fixed} {self.noun}, but found {len(items)}")
        elif len(items) < self.fixed:
            raise ValueError(f"expected at least {self.fixed} {self.noun}, but found {len(items)}")
        groups = []
        for k, d in enumerate(self.defs):
            start, size = self.bounds(len(items), attributes, k)
            if d.kind == OPTIONAL and size > 1:
                raise ValueError(f"optional group '{d.name}' has {size} values")
            groups.append(items[start : start + size])
        return groups

    def getter(self, k: int, attribute: str) -> Callable:
        """A property getter for group `k` of `op.<attribute>` (operands or results)."""
        kind = self.defs[k].kind
        items_of = attrgetter(attribute)
        if not self.sized and (self.variable_index is None or k < self.variable_index):
            if attribute == "_operands":  # the hot case, spelled out: one frame, no lookups
                return lambda op: op._operands[k]
            return lambda op: op.results[k]
        if not self.sized and k > self.variable_index:
            back = len(self.defs) - k
            return lambda op: items_of(op)[-back]

        def get(op):
            items = items_of(op)
            start, size = self.bounds(len(items), op.attributes, k)
            if kind == SINGLE:
                return items[start]
            if kind == OPTIONAL:
                return items[start] if size else None
            return items[start : start + size]

        return get
