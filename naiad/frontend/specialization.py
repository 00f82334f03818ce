"""The kernel's signature for one specialization: its `tt.func` arguments and their values.

A specialization says, per parameter, either a type (Triton's signature strings: `*fp16`,
`*kfp32` for a read-only pointer, `i32`, `u64`, `fp32`, `u1`, `tensordesc<fp16[64, 64]>`) or
`constexpr` with its value. Runtime parameters become arguments of the public `tt.func`, with
the attributes the launcher proved (`tt.divisibility = 16` for pointers aligned to 16 bytes and
integers divisible by 16); a constexpr is baked in (an integer equal to 1 arrives as a constexpr,
as Triton specializes it). A host tensor descriptor is its base pointer, its shape and its
strides (i64), named `desc`, `desc.shape.0`, ..., `desc.stride.0`, ...; its attributes come
under those names too (`attrs["desc.shape.0"]`), and its last stride is the constant 1. On a
target with the tensor memory accelerator a qualifying descriptor has its tensor map ahead of
those, `desc.tensor_map` (tensor_maps.py). A tuple argument's signature is the tuple of its
elements' (runtime/tuple_arguments.py): each element is a parameter of its own at its path
(`t.0`, `t.1.2`), and the kernel sees a `tl.tuple` of their values (with a NamedTuple's fields).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

from .. import ir
from ..language import core
from ..language import dtypes as t
from ..language.tensor_descriptors import tensor_descriptor, tensor_descriptor_type
from . import tensor_maps
from .types import ir_type

_DESCRIPTOR = re.compile(r"tensordesc<\s*(\w+)\s*\[([\d,\s]+)\]\s*(?:,\s*(\w+))?\s*>")


@dataclass(frozen=True)
class Parameter:
    """One kernel parameter in this specialization."""

    name: str
    kind: str  # "constexpr", "value", "descriptor" or "tuple"
    type: t.dtype | None = None  # a value's type; a descriptor's block type
    value: object = None  # a constexpr's value; a descriptor's padding; a tuple's field names
    attributes: dict = field(default_factory=dict)  # a descriptor's: its base pointer's
    parts: dict = field(default_factory=dict)  # a descriptor's "shape.i"/"stride.i" -> attributes
    tensor_map: bool = False  # a descriptor's: passed as a tensor map too (tensor_maps.py)
    items: tuple = ()  # a tuple's: its elements' parameters


def parameters(source, signature: dict, constexprs: dict, attrs: dict, target) -> list[Parameter]:
    """Each parameter of the kernel's Python signature, as this specialization gives it on
    `target`."""
    found = []
    for name, param in source.signature.parameters.items():
        spec = signature.get(name, "constexpr" if name in constexprs else None)
        if (spec is None or spec == "constexpr") and name not in constexprs:
            if param.default is param.empty:
                raise TypeError(f"no type in the signature and no constexpr value for `{name}`")
            found.append(Parameter(name, "constexpr", value=param.default))
            continue
        found.append(_parameter(name, spec, constexprs, attrs, target))
    return found


def _parameter(name: str, spec, constexprs: dict, attrs: dict, target) -> Parameter:
    """The parameter (or tuple element, at path `name`) of signature `spec`."""
    if spec is None or spec == "constexpr":
        return Parameter(name, "constexpr", value=constexprs[name])
    if isinstance(spec, (tuple, list)):  # a tuple argument (lists: read back from JSON)
        items = tuple(
            _parameter(f"{name}.{i}", s, constexprs, attrs, target) for i, s in enumerate(spec)
        )
        return Parameter(name, "tuple", value=getattr(spec, "_fields", None), items=items)
    parameter = _runtime_parameter(name, spec, _attributes(attrs.get(name)))
    if parameter.kind == "descriptor":
        prefix = f"{name}."
        parts = {k[len(prefix) :]: _attributes(v) for k, v in attrs.items() if k.startswith(prefix)}
        tensor_map = tensor_maps.qualifies(
            target, parameter.type, parameter.value, parameter.attributes, parts
        )
        parameter = dataclasses.replace(parameter, parts=parts, tensor_map=tensor_map)
    return parameter


def _runtime_parameter(name: str, spec, attributes: dict) -> Parameter:
    if isinstance(spec, t.dtype):
        return Parameter(name, "value", spec, attributes=attributes)
    match = _DESCRIPTOR.fullmatch(spec.strip())
    if match:
        element = t.str_to_ty(match.group(1))
        shape = [int(s) for s in match.group(2).split(",")]
        padding = match.group(3) or "zero"
        return Parameter(name, "descriptor", t.block_type(element, shape), padding, attributes)
    return Parameter(name, "value", t.str_to_ty(spec), attributes=attributes)


def _attributes(spec) -> dict:
    """`[["tt.divisibility", 16]]` (Triton's `attrs`) or `{"tt.divisibility": 16}` as IR
    argument attributes."""
    if not spec:
        return {}
    pairs = spec.items() if isinstance(spec, dict) else spec
    return {name: ir.IntegerAttr(int(value), ir.i32) for name, value in pairs}


def arguments(params: list[Parameter]) -> list[tuple[str, ir.Type, dict]]:
    """The `tt.func` arguments: (name, IR type, attributes) per runtime value."""
    found = []
    for p in params:
        if p.kind == "tuple":
            found += arguments(p.items)
        elif p.kind == "value":
            found.append((p.name, ir_type(p.type), p.attributes))
        elif p.kind == "descriptor":
            if p.tensor_map:
                found.append((f"{p.name}.tensor_map", tensor_maps.argument_type(p.type), {}))
            found.append((p.name, ir_type(t.pointer_type(p.type.element_ty)), p.attributes))
            rank = len(p.type.shape)
            for part in ("shape", "stride"):
                found += [
                    (f"{p.name}.{part}.{i}", ir.i64, p.parts.get(f"{part}.{i}", {}))
                    for i in range(rank)
                ]
    return found


def values(params: list[Parameter], block_arguments) -> dict:
    """Each parameter's kernel value: tensors over the function's arguments, constexprs,
    descriptors (with their tensor maps)."""
    handles = iter(block_arguments)
    return {p.name: _value(p, handles) for p in params}


def _value(p: Parameter, handles):
    if p.kind == "constexpr":
        return core.constexpr(p.value)
    if p.kind == "value":
        return core.tensor(next(handles), p.type)
    if p.kind == "tuple":
        items = [_value(item, handles) for item in p.items]
        types = [getattr(v, "type", None) for v in items]
        return core.tuple(items, t.tuple_type(types, p.value))
    return _descriptor(p, handles)


def _descriptor(p: Parameter, handles) -> tensor_descriptor:
    """The descriptor over its arguments; its last stride is the constant 1 the host
    `TensorDescriptor` guarantees (its argument stays in the ABI), so that accesses along the
    last dimension are known contiguous and vectorize as an in-kernel descriptor's do."""
    desc_type = tensor_descriptor_type(p.type, p.value)
    tensor_map = core.tensor(next(handles), desc_type) if p.tensor_map else None
    base = core.tensor(next(handles), t.pointer_type(p.type.element_ty))
    rank = len(p.type.shape)
    shape = [core.tensor(next(handles), t.int64) for _ in range(rank)]
    strides = [core.tensor(next(handles), t.int64) for _ in range(rank)]
    strides = strides[:-1] + [core.constexpr(1)]
    return tensor_descriptor(base, shape, strides, p.type, p.value, tensor_map)
