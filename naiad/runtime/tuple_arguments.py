"""Tuples as kernel arguments: a tuple passed for a parameter that is not `tl.constexpr` is its
leaves, each specialized and passed as an argument of its own would be.

    kernel[grid](out, (x, y, 3), ((n, None), tl.constexpr(4)))

As Triton does, a tuple argument (a NamedTuple, a `torch.Size`, nested tuples; lists too, as the
interpreter takes them) keeps its structure in the specialization: its signature is the tuple of
its leaves' signatures (`("*fp32", "*fp32", "i32")`, the NamedTuple's own class for a
NamedTuple), and the facts of each leaf (a constexpr's value, an alignment) are named by the
leaf's path, `name.i.j`, as the compiled function's arguments are (frontend/specialization.py).
A leaf that specializes to a constant (None, a `tl.constexpr`, a dtype, a jit function, an
integer equal to 1) is no argument of the compiled function; the others are passed in order.

The slow path reaches the leaves through `spread`; the hot path's binder keys a tuple by its
class and its leaves' keys, nested, and gives its leaves' launch values as one flat tuple, which
the prepared launches spread (binder.py, cpu_fast_launch.py, cuda_parameters.flattener).
"""

from __future__ import annotations

from collections.abc import Iterator


def is_tuple(value) -> bool:
    """Whether `value` is a structure of arguments rather than one (a NumPy array is one)."""
    return isinstance(value, (tuple, list))


def is_named(value) -> bool:
    """Whether `value` is a NamedTuple, whose class a kernel reads its fields through."""
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def rebuilt(like, items: list):
    """A tuple of `items` shaped as `like`: its NamedTuple class, else a plain tuple."""
    return type(like)(*items) if is_named(like) else tuple(items)


def spread(values: dict, params) -> dict:
    """`values` (a launch's bound arguments, or a specialization's signature, by parameter name)
    in the parameters' order, with each tuple of a parameter that is not constexpr replaced by
    its leaves, under their paths, in order. Constexpr parameters keep their values, tuples or
    not. The order is the parameters' whatever the order of `values`: a compiled kernel's
    metadata read back from the disk cache lists its signature sorted by name."""
    spread_out = {}
    for p in params:
        if p.name not in values:
            continue
        value = values[p.name]
        if p.is_constexpr or not is_tuple(value):
            spread_out[p.name] = value
        else:
            for path, leaf in leaves(p.name, value):
                spread_out[path] = leaf
    return spread_out


def leaves(path: str, value) -> Iterator[tuple[str, object]]:
    """(path, leaf) for every leaf of `value` (itself, named `path`, when not a tuple)."""
    if not is_tuple(value):
        yield path, value
        return
    for i, item in enumerate(value):
        yield from leaves(f"{path}.{i}", item)


def all_leaves(values) -> Iterator:
    """Every leaf of `values`, tuples opened: where a launch looks for the arrays it runs on."""
    for value in values:
        if is_tuple(value):
            yield from all_leaves(value)
        else:
            yield value
