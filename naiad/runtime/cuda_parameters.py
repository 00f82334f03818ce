"""A launch's arguments as a CUDA kernel's parameters: which parameters each runtime argument
becomes (a host descriptor its base pointer, shape and strides, after its tensor map where the
kernel takes one: the frontend's expansion, frontend/specialization.py), the checks of a
descriptor's block shape before anything compiles, and the selector that turns the runtime
values of a launch into the kernel's arguments (the slow path's and the hot path's alike)."""

from __future__ import annotations

import operator
import re

from .host_arrays import describe
from .tensor_descriptor import TensorDescriptor

# A host descriptor's signature string (specialization.py): element type, block shape, padding.
DESCRIPTOR_SPEC = re.compile(r"tensordesc<\s*(\w+)\s*\[([\d,\s]+)\]\s*(?:,\s*(\w+))?")


def kernel_parameters(name: str, spec: str, tensor_map: bool) -> tuple[list[str], list[str]]:
    """The kernel parameters (signature kinds) that the runtime argument `name` of signature
    `spec` becomes, and how errors name each: one, or a host descriptor's base pointer, shape
    and strides, as the frontend declares them, after its tensor map where it has one."""
    match = DESCRIPTOR_SPEC.match(spec)
    if match is None:
        return [spec], [f"argument `{name}`"]
    rank = len(match.group(2).split(","))
    kinds = ["tensormap"] if tensor_map else []
    names = [f"the tensor map of descriptor `{name}`"] if tensor_map else []
    names += [f"the tensor of descriptor `{name}`"]
    names += [f"the shape of descriptor `{name}`"] * rank
    names += [f"the strides of descriptor `{name}`"] * rank
    return kinds + [f"*{match.group(1)}"] + ["i64"] * (2 * rank), names


def tensor_map_maker(name: str, spec: str):
    """The `TensorMaps` of descriptor argument `name` of signature `spec`."""
    from .tensor_maps import TensorMaps  # the NVIDIA lowering's box rules: loaded when needed

    element, block, padding = DESCRIPTOR_SPEC.match(spec).groups()
    return TensorMaps(name, element, [int(b) for b in block.split(",")], padding or "zero")


def selector(indexes: list[int], count: int, descriptors: dict):
    """`runtime values -> kernel arguments`: the values at `indexes` (the others became
    constants), those in `descriptors` (each a sequence: base, shape..., strides...) spread
    into their parts, after their tensor map where `descriptors` gives its `TensorMaps`;
    None when that is every value as it is."""
    if not descriptors:
        if indexes == list(range(count)):
            return None
        return (lambda r: ()) if not indexes else tuple_getter(indexes)
    # Generated: one tuple display of the values, spread where they are descriptors (a loop
    # over the plan cost each of attention's launches 0.1-0.3 us more on the development CPU);
    # a map is looked up by the descriptor's value in its dict first (tensor_maps.py).
    env, parts = {}, []
    for i in indexes:
        if i in descriptors and descriptors[i] is not None:
            env[f"_found{i}"] = descriptors[i].by_parts.get
            env[f"_maps{i}"] = descriptors[i].encode
            parts.append(f"(_found{i}(values[{i}]) or _maps{i}(values[{i}]))")
        parts.append(f"*values[{i}]" if i in descriptors else f"values[{i}]")
    source = f"def select(values):\n    return ({', '.join(parts)},)\n"
    exec(compile(source, "<naiad selector>", "exec"), env)
    return env["select"]


def launch_value(name: str, value):
    """A bound argument as the slow path passes it: a host descriptor as its parts (the shape
    the binder gives the hot path), anything else as it is."""
    return descriptor_parts(name, value) if isinstance(value, TensorDescriptor) else value


def descriptor_parts(name: str, desc: TensorDescriptor) -> tuple:
    """(base, *shape, *strides) of a host descriptor, after the checks of its block shape: one
    size per dimension of its shape, powers of 2 (as every block of a kernel), at least 16
    bytes along the last dimension (the interpreter's rule). They come before compiling, so a
    bad block is named here rather than at a load of the kernel."""
    block = [int(b) for b in desc.block_shape]
    rank = len(block)
    if len(desc.shape) != rank or len(desc.strides) != rank:
        raise ValueError(
            f"descriptor `{name}`: block shape {block} does not match its shape "
            f"{list(desc.shape)} and strides {list(desc.strides)} (one block size, size and "
            "stride per dimension)"
        )
    if any(b < 1 or b & (b - 1) for b in block):
        raise ValueError(f"descriptor `{name}`: block sizes must be powers of 2, got {block}")
    itemsize = describe(desc.base).itemsize
    if block[-1] * itemsize < 16:
        raise ValueError(
            f"argument `{name}`: descriptor blocks need at least 16 bytes in the last "
            f"dimension, got {block[-1]} x {itemsize} bytes"
        )
    return (desc.base, *desc.shape, *desc.strides)


def tuple_getter(indexes: list[int]):
    """`values -> tuple(values[i] for i in indexes)`, always a tuple."""
    getter = operator.itemgetter(*indexes)
    return getter if len(indexes) > 1 else (lambda values: (getter(values),))


def flattener(tuples: list[bool]):
    """`binder values -> runtime values`: the hot path's launch values, where a tuple argument
    is one flat tuple of its leaves' values (`tuples` says which), with those leaves spread in
    place, as the slow path's runtime values have them (tuple_arguments.py)."""

    def flatten(values):
        flat = []
        for value, spreads in zip(values, tuples):
            if spreads:
                flat.extend(value)
            else:
                flat.append(value)
        return flat

    return flatten
