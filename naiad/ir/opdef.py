"""Declarative op definitions: `@irdl_op` turns a class's fields into accessors, a keyword
constructor and the data the generic verifier, printer and parser read; plus the op registry.

    @irdl_op
    class AddIOp(Operation):
        # Integer addition (wraps around; signless).
        name = "arith.addi"
        traits = frozenset({Pure, Commutative, SameOperandsAndResultType})
        lhs = operand(IntegerLike)
        rhs = operand(IntegerLike)
        result = result(IntegerLike, like="lhs")
        assembly_format = "$lhs `,` $rhs attr-dict `:` type($result)"

    AddIOp(a, b).result        # the result's type taken from `lhs`
    AddIOp(a, b, result=i32)   # or given

The field functions are ordinary names in the class body: once a field is called `result`, a
later line of the same body cannot call `result(...)` (declare that one first, or use a
different field name).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .attributes import DenseArrayAttr
from .block import Region
from .operation import Operation, UnregisteredOp
from .opfields import (
    OPERAND_SEGMENTS,
    OPTIONAL,
    RESULT_SEGMENTS,
    SINGLE,
    VARIADIC,
    AttributeDef,
    Field,
    OperandDef,
    RegionDef,
    ResultDef,
    Segments,
    SuccessorDef,
)
from .traits import Trait
from .types import i32


class OpDef:
    """Everything declared about an op class, in declaration order."""

    __slots__ = (
        "attributes",
        "fields",
        "inherent_attributes",
        "name",
        "operand_segments",
        "operands",
        "regions",
        "result_segments",
        "results",
        "successors",
    )

    def __init__(self, name: str, fields: dict[str, Field]):
        self.name = name
        self.fields = fields
        self.operands = tuple(f for f in fields.values() if isinstance(f, OperandDef))
        self.results = tuple(f for f in fields.values() if isinstance(f, ResultDef))
        self.attributes = tuple(f for f in fields.values() if isinstance(f, AttributeDef))
        self.regions = tuple(f for f in fields.values() if isinstance(f, RegionDef))
        if any(d.variadic for d in self.regions[:-1]):
            raise TypeError(f"{name}: only the last region field may be variadic")
        self.successors = tuple(f for f in fields.values() if isinstance(f, SuccessorDef))
        self.operand_segments = Segments(self.operands, OPERAND_SEGMENTS, "operands")
        self.result_segments = Segments(self.results, RESULT_SEGMENTS, "results")
        inherent = [a.name for a in self.attributes]
        inherent += [s.attr_name for s in (self.operand_segments, self.result_segments) if s.sized]
        # What MLIR calls properties: printed in `<{...}>` by the generic printer.
        self.inherent_attributes = frozenset(inherent)

    def build(self, op: Operation, args: tuple, fields: dict, extra: dict | None, location) -> None:
        """The keyword constructor of declared ops (`Operation.__init__`)."""
        cls_name = type(op).__name__
        if len(args) > len(self.operands):
            raise TypeError(f"{cls_name}() takes {len(self.operands)} operands, got {len(args)}")
        operands, by_name = self._collect_operands(cls_name, args, fields)
        attributes = {}
        if self.operand_segments.sized:
            sizes = [_group_size(by_name[d.name]) for d in self.operands]
            attributes[OPERAND_SEGMENTS] = DenseArrayAttr(i32, sizes)
        result_types = self._collect_result_types(cls_name, fields, by_name, attributes)
        for d in self.attributes:
            value = fields.pop(d.name, None)
            if value is not None:
                attributes[d.name] = value
            elif not d.optional:
                raise TypeError(f"{cls_name}() missing attribute {d.name!r}")
        regions = []
        for d in self.regions:
            value = fields.pop(d.name, None)
            if d.variadic:
                regions.extend(value or ())
            else:
                regions.append(value or Region())
        successors = []
        for d in self.successors:
            if d.name not in fields:
                raise TypeError(f"{cls_name}() missing successor {d.name!r}")
            successors.append(fields.pop(d.name))
        if fields:
            raise TypeError(f"{cls_name}() got unexpected arguments {sorted(fields)}")
        if extra:
            attributes.update(extra)
        op._init_parts(operands, result_types, attributes, regions, successors, location)

    def _collect_operands(self, cls_name: str, args: tuple, fields: dict):
        operands: list = []
        by_name: dict = {}
        for k, d in enumerate(self.operands):
            value = args[k] if k < len(args) else fields.pop(d.name, None)
            if d.kind == SINGLE:
                if value is None:
                    raise TypeError(f"{cls_name}() missing operand {d.name!r}")
                operands.append(value)
            elif d.kind == OPTIONAL:
                if value is not None:
                    operands.append(value)
            else:
                value = () if value is None else tuple(value)
                operands.extend(value)
            by_name[d.name] = value
        return operands, by_name

    def _collect_result_types(self, cls_name: str, fields: dict, by_name: dict, attributes):
        types: list = []
        sizes = []
        for d in self.results:
            value = fields.pop(d.name, None)
            if d.kind == SINGLE:
                if value is None and d.like is not None:
                    value = by_name[d.like].type
                if value is None:
                    raise TypeError(f"{cls_name}() missing the type of result {d.name!r}")
                types.append(value)
                sizes.append(1)
            else:
                if value is None and d.like is not None:
                    value = [v.type for v in by_name[d.like]]
                value = () if value is None else tuple(value)
                types.extend(value)
                sizes.append(len(value))
        if self.result_segments.sized:
            attributes[RESULT_SEGMENTS] = DenseArrayAttr(i32, sizes)
        return types


def _group_size(value) -> int:
    if value is None:
        return 0
    return len(value) if isinstance(value, tuple) else 1


_OPS: dict[str, type[Operation]] = {}
_MATERIALIZERS: dict[str, Callable] = {}
_RESERVED = frozenset(dir(Operation)) | {"location", "attributes", "name", "traits"}


def irdl_op(cls: type[Operation]) -> type[Operation]:
    """Declare and register an op class: read its fields, check them, install accessors."""
    if not isinstance(getattr(cls, "name", None), str) or "." not in cls.name:
        raise TypeError(
            f"{cls.__name__}.name must be 'dialect.op', got {getattr(cls, 'name', None)!r}"
        )
    fields = _collect_fields(cls)
    op_def = OpDef(cls.name, fields)
    _check_declaration(cls, op_def)
    cls._op_def = op_def
    cls.traits = frozenset(cls.traits)
    for name, getter, setter in _accessors(op_def):
        setattr(cls, name, property(getter, setter))
    _register_op(cls)
    return cls


def _collect_fields(cls) -> dict[str, Field]:
    """Fields of `cls` and its bases, base-first. A family base keeps its Field objects; a
    declared base has replaced them by accessors, so its OpDef remembers them."""
    fields: dict[str, Field] = {}
    for klass in reversed(cls.__mro__):
        declared = vars(klass).get("_op_def")
        found = vars(klass) if declared is None else declared.fields
        for name, value in found.items():
            if isinstance(value, Field):
                fields.pop(name, None)
                fields[name] = value
    return fields


def _check_declaration(cls, op_def: OpDef) -> None:
    for name in (f.name for group in _groups(op_def) for f in group):
        if name in _RESERVED or name in (OPERAND_SEGMENTS, RESULT_SEGMENTS):
            raise TypeError(f"{cls.__name__}: field name {name!r} is reserved by Operation")
    kinds = {d.name: d.kind for d in op_def.operands}
    for d in op_def.results:
        if d.like is not None and kinds.get(d.like) != (SINGLE if d.kind == SINGLE else VARIADIC):
            raise TypeError(f"{cls.__name__}.{d.name}: like={d.like!r} is not a {d.kind} operand")
    bad = [t for t in cls.traits if not isinstance(t, Trait)]
    if bad:
        raise TypeError(f"{cls.__name__}.traits holds non-traits: {bad}")
    if cls.assembly_format is not None and not isinstance(cls.assembly_format, str):
        raise TypeError(f"{cls.__name__}.assembly_format must be a string")


def _groups(op_def: OpDef) -> tuple:
    return (op_def.operands, op_def.results, op_def.attributes, op_def.regions, op_def.successors)


def _accessors(op_def: OpDef):
    """(name, getter, setter) for every field."""
    for k, d in enumerate(op_def.operands):
        getter = op_def.operand_segments.getter(k, "_operands")
        yield d.name, getter, (_operand_setter(op_def, k) if d.kind == SINGLE else None)
    for k, d in enumerate(op_def.results):
        yield d.name, op_def.result_segments.getter(k, "results"), None
    for d in op_def.attributes:
        yield d.name, *_attribute_accessors(d.name, d.optional)
    for k, d in enumerate(op_def.regions):
        if d.variadic:
            yield d.name, (lambda op, k=k: tuple(op.regions[k:])), None
        else:
            yield d.name, (lambda op, k=k: op.regions[k]), None
    for k, d in enumerate(op_def.successors):
        yield d.name, (lambda op, k=k: op.successors[k]), _successor_setter(k)


def _operand_setter(op_def: OpDef, k: int):
    def set_operand(op, value):
        start, _ = op_def.operand_segments.bounds(len(op._operands), op.attributes, k)
        op.set_operand(start, value)

    return set_operand


def _attribute_accessors(name: str, optional: bool):
    def get_optional(op):
        return op.attributes.get(name)

    def get_required(op):
        return op.attributes[name]

    def set_attribute(op, value):
        if value is None:
            op.attributes.pop(name, None)
        else:
            op.attributes[name] = value

    return (get_optional if optional else get_required), set_attribute


def _successor_setter(k: int):
    return lambda op, block: op.set_successor(k, block)


def _register_op(cls: type[Operation]) -> None:
    old = _OPS.get(cls.name)
    if old is not None and (old.__module__, old.__qualname__) != (cls.__module__, cls.__qualname__):
        raise ValueError(f"op {cls.name!r} is already registered by {old.__qualname__}")
    _OPS[cls.name] = cls


def op_class(name: str) -> type[Operation] | None:
    """The registered class of op `name`, or None."""
    return _OPS.get(name)


def registered_ops() -> tuple[type[Operation], ...]:
    return tuple(_OPS.values())


def create_operation(
    name: str,
    operands: Iterable = (),
    result_types: Iterable = (),
    attributes: dict | None = None,
    regions: Iterable[Region] = (),
    successors: Iterable = (),
    location=None,
) -> Operation:
    """Build op `name` from its parts, bypassing the field constructor: its registered class,
    or an UnregisteredOp. The parser and generic rewrites build ops this way."""
    cls = _OPS.get(name)
    if cls is None:
        return UnregisteredOp(
            name, operands, result_types, attributes, regions, successors, location
        )
    op = object.__new__(cls)
    op._init_parts(operands, result_types, attributes or {}, regions, successors, location)
    return op


def register_constant_materializer(dialect: str, materializer: Callable) -> None:
    """Declare how `dialect` turns a folded constant into an op:
    `materializer(value_attr, type, location) -> Operation | None` (the op not inserted)."""
    _MATERIALIZERS[dialect] = materializer


def constant_materializer(dialect: str) -> Callable | None:
    return _MATERIALIZERS.get(dialect)
