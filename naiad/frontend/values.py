"""Kernel values as trees whose leaves are tensors: how tuples, block pointers and tensor
descriptors cross IR boundaries.

A function's arguments and results, a loop's carried values and an `scf.if`'s results are flat
lists of IR values. A kernel value may be a tensor, a compile-time value (a constexpr, a dtype, a
string, None, ...), or a structure holding both: a Python tuple or list, a `tl.tuple`, or one of
the language's aggregates (`block_ptr`, `tensor_descriptor`: objects of `naiad.language` whose
attributes hold tensors), or a user's `@naiad.aggregate` (language/aggregates.py). Flattening
takes the tensors in a fixed order (elements in order, attributes in definition order, an
aggregate's fields in declaration order); rebuilding puts new tensors back into a copy of the
structure, keeping its compile-time parts. Two values can merge (at an `if`, around a loop) when
their structures match: the same compile-time parts and tensors of the same types.

A descriptor's tensor map (its `tensor_map` tensor, frontend/tensor_maps.py) crosses calls with
it, and nothing else: values that merge (loop-carried, an `if`'s) and the arguments of a
`noinline` callee drop it first (`without_maps`), so that every map a block access reads is one
made in the function or passed to it, whose base, shapes and strides the back end can find.
"""

from __future__ import annotations

import copy
import types as pytypes

from ..language import aggregates, core
from ..language import dtypes as t
from ..language.tensor_descriptors import tensor_descriptor, tensor_descriptor_type


class Leaf:
    """A tensor's place in a structure kept without its IR value (a function's result type)."""

    __slots__ = ("type",)

    def __init__(self, type):
        self.type = type

    def __repr__(self):
        return f"Leaf({self.type})"


def _is_aggregate(value) -> bool:
    """An object of the language whose attributes may hold tensors (block pointers,
    descriptors); dtypes, modules, functions and classes are compile-time values."""
    cls = type(value)
    return (
        cls.__module__.startswith("naiad.language")
        and hasattr(value, "__dict__")
        and not isinstance(value, (t.dtype, core.constexpr, pytypes.ModuleType, type))
        and not callable(value)
    )


def _children(value):
    """(kind, [(key, child), ...]) for a structure, or (None, None) for a leaf or a constant."""
    if isinstance(value, core.tuple):
        return "tl.tuple", list(enumerate(value.values))
    if isinstance(value, (tuple, list)):
        return "seq", list(enumerate(value))
    if aggregates.is_aggregate(value):
        return "object", aggregates.fields(value)
    if _is_aggregate(value):
        return "object", list(vars(value).items())
    return None, None


def _rebuild_node(value, kind, children):
    if kind == "tl.tuple":
        fields = value.type.fields if isinstance(value.type, t.tuple_type) else None
        return core.tuple(children, t.tuple_type([_type_of(c) for c in children], fields))
    if kind == "seq":
        if isinstance(value, list):
            return list(children)
        if hasattr(type(value), "_fields"):  # a NamedTuple
            return type(value)(*children)
        return type(value)(children)
    if aggregates.is_aggregate(value):
        return aggregates.rebuilt(value, children)
    clone = copy.copy(value)
    for (key, _), child in zip(vars(value).items(), children):
        setattr(clone, key, child)
    return clone


def _type_of(value):
    return getattr(value, "type", None) or core.constexpr_type(value)


def map_leaves(value, fn, leaf_class=core.tensor):
    """`value` with every leaf (an instance of `leaf_class`) replaced by `fn(leaf)`."""
    if isinstance(value, leaf_class):
        return fn(value)
    kind, children = _children(value)
    if kind is None:
        return value
    mapped = [map_leaves(child, fn, leaf_class) for _, child in children]
    if all(m is c for m, (_, c) in zip(mapped, children)):
        return value
    return _rebuild_node(value, kind, mapped)


def without_maps(value):
    """`value` with each descriptor in it reading through pointers (the module doc)."""

    def drop(desc):
        if desc.tensor_map is None:
            return desc
        plain = copy.copy(desc)
        plain.tensor_map = None
        return plain

    return map_leaves(value, drop, tensor_descriptor)


def leaves(value) -> list:
    """The tensors of `value`, in order."""
    found = []
    map_leaves(value, found.append)
    return found


def leaf_paths(value, prefix: str) -> list[str]:
    """A name per tensor of `value` (`state.0`, `a_ptr.base`, `a_ptr.offsets.1`): the names
    Triton gives the block arguments of loops and functions."""
    if isinstance(value, core.tensor):
        return [prefix]
    kind, children = _children(value)
    if kind is None:
        return []
    paths = []
    for key, child in children:
        paths += leaf_paths(child, f"{prefix}.{key}")
    return paths


def rebuild(value, handles) -> object:
    """`value` with its tensors replaced, in order, by tensors of the same types over the IR
    values of the iterator `handles` (an op's results, a block's arguments)."""
    return map_leaves(value, lambda x: core.tensor(next(handles), x.type))


def skeleton(value):
    """`value` with its tensors replaced by `Leaf`s of their types: a structure to rebuild
    later from other IR values (a call's results)."""
    return map_leaves(value, lambda x: Leaf(x.type))


def from_skeleton(template, handles) -> object:
    """Tensors of the template's types over the IR values of the iterator `handles`."""
    return map_leaves(template, lambda leaf: core.tensor(next(handles), leaf.type), Leaf)


def describe(value) -> str:
    """How a value reads in an error message: its type, or its compile-time value."""
    if isinstance(value, core.tensor):
        return str(value.type)
    kind, children = _children(value)
    if kind is None:
        return repr(core._unwrap_if_constexpr(value))
    inner = ", ".join(describe(c) for _, c in children)
    if kind == "object":
        return f"{type(value).__name__}({inner})"
    return f"({inner})"


def same_structure(a, b) -> bool:
    """Whether two values can merge: the same compile-time parts, tensors of the same types."""
    if isinstance(a, core.tensor) or isinstance(b, core.tensor):
        return isinstance(a, core.tensor) and isinstance(b, core.tensor) and a.type == b.type
    kind_a, children_a = _children(a)
    kind_b, children_b = _children(b)
    if kind_a is None or kind_b is None:
        return kind_a is kind_b and _same_constant(a, b)
    if kind_a != kind_b or len(children_a) != len(children_b):
        return False
    if kind_a == "object" and type(a) is not type(b):
        return False
    return all(
        ka == kb and same_structure(ca, cb) for (ka, ca), (kb, cb) in zip(children_a, children_b)
    )


def decay_against(value, other, to_tensor):
    """`value` with each Python number that differs from `other`'s part at its place made a
    tensor by `to_tensor`: two returns of a function that differ only so merge as tensors, as
    Triton's (`return -1` on one path, `return 1` on another returns an int32)."""
    if isinstance(value, core.tensor) or same_structure(value, other):
        return value
    kind, children = _children(value)
    if kind is None:
        plain = core._unwrap_if_constexpr(value)
        return to_tensor(plain) if isinstance(plain, bool | int | float) else value
    other_kind, other_children = _children(other)
    if kind != other_kind or len(children) != len(other_children):
        return value
    mapped = [decay_against(c, o, to_tensor) for (_, c), (_, o) in zip(children, other_children)]
    return _rebuild_node(value, kind, mapped)


def _same_constant(a, b) -> bool:
    if a is b:
        return True
    a, b = core._unwrap_if_constexpr(a), core._unwrap_if_constexpr(b)
    if type(a) is not type(b):
        return False
    try:
        return bool(a == b)
    except Exception:  # values without a usable `==` are the same only when identical
        return a is b


# -- mangling: Triton's names for specialized functions ----------------------------------------
def mangle_type(ty) -> str:
    """Triton's `mangle` of a type: `fp32`, `i32`/`u32` (`u1` for int1), `Pfp16`, `fp32S64_32S`."""
    if isinstance(ty, tensor_descriptor_type):  # a descriptor's tensor map
        return ty.mangle()
    if isinstance(ty, t.block_type):
        return f"{mangle_type(ty.element_ty)}S{'_'.join(map(str, ty.shape))}S"
    if isinstance(ty, t.pointer_type):
        return "P" + mangle_type(ty.element_ty)
    if ty.is_int():
        return ("i" if ty.is_int_signed() else "u") + str(ty.int_bitwidth)
    return ty.name


def mangle(value) -> str:
    """The part of a specialized function's name one argument contributes: its type for a
    tensor, `c<value>` for a compile-time value, `T...T` around a tuple's parts."""
    if isinstance(value, core.tensor):
        return mangle_type(value.type)
    kind, children = _children(value)
    if kind == "object":
        cls = type(value)
        inner = ", ".join(mangle(c) for _, c in children)
        return f"{cls.__module__}.{cls.__qualname__}<{inner}>"
    if kind is not None:
        return "T" + "_".join(mangle(c) for _, c in children) + "T"
    constant = core._unwrap_if_constexpr(value)
    if callable(constant) and hasattr(constant, "__qualname__"):
        fn = getattr(constant, "fn", constant)
        return f"c{fn.__module__}.{fn.__qualname__}"
    return f"c{constant}"
