"""The launch hot path's binder: call arguments to (key, grid, launch values) in one pass.

A `@naiad.jit` function gets one binder, generated as Python source from its parameter list and
compiled once. A launch calls it with the call's own positional and keyword arguments, so Python
binds them (defaults included) without `inspect.Signature.bind`; it returns

- the *key*: every fact the slow path would specialize or decide on, for each argument - a
  tensor's dtype, 16-byte alignment and device; an integer's ==1 / %16 and 32- or 64-bit class;
  a constexpr's value; the kind of every other argument - plus the launch options passed as
  keywords and the settings token the caller gives (knobs, debug);
- the grid as three positive sizes (a callable grid is called with the arguments by name);
- the launch values of the non-constexpr parameters, in order: a tensor's data pointer, an
  integer, float or bool as it is, a host tensor descriptor's parts as one tuple (its tensor's
  data pointer, its shape, its strides: what the frontend makes of it), keyed by its tensor's
  dtype and device, its block shape and its padding.

The key is only looked up: the launch path registers a prepared launch under it after a slow
launch succeeded with those very facts, so a key that was never registered (a new dtype, a
misaligned tensor, an unknown keyword) just takes the slow path. What the binder does not handle
raises `Unbound`, and the slow path takes the launch: NumPy scalars, `naiad.reinterpret`
wrappers, grids with an empty dimension.
"""

from __future__ import annotations

import operator

import numpy as np

from ..language import core
from ..tools.tensor_descriptor import TensorDescriptor

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


class Unbound(Exception):
    """This launch is not one the binder handles: the slow path takes it."""


def grid_dims(grid) -> tuple[int, int, int]:
    """A grid (1 to 3 sizes, evaluated) as three non-negative ints; the launch errors of a bad
    grid. Shared by the slow path and the binder."""
    if not isinstance(grid, (tuple, list)):
        grid = (grid,)
    if not 1 <= len(grid) <= 3:
        raise ValueError(f"grid must have 1 to 3 dimensions, got {len(grid)}")
    try:
        dims = [operator.index(core._unwrap_if_constexpr(g)) for g in grid]
    except TypeError:
        raise TypeError(f"grid dimensions must be integers, got {tuple(grid)!r}") from None
    if any(d < 0 for d in dims):
        raise ValueError(f"grid dimensions must be non-negative, got {tuple(dims)}")
    return tuple(dims + [1] * (3 - len(dims)))


def _launch_dims(grid) -> tuple[int, int, int]:
    """`grid_dims` for the binder: an empty grid launches nothing, which the slow path says."""
    dims = grid_dims(grid)
    if 0 in dims:
        raise Unbound
    return dims


def _constexpr_key(value):
    """A constexpr that is not a plain int, keyed by its type and repr: `1`, `1.0` and `True`
    hash alike but specialize differently, and a list is not hashable."""
    return (type(value), repr(value))


def _wide_int_key(value: int):
    """The key of an integer beyond int32: int64 or uint64 by range (as Triton), and %16."""
    if -(2**63) <= value < 2**63:
        return ("i64", value % 16 == 0)
    if 2**63 <= value < 2**64:
        return ("u64", value % 16 == 0)
    raise Unbound  # the slow path says it is too large


def _other_key(value, align_free: bool = False):
    """(key, launch value) of an argument that is neither a torch.Tensor nor an int; an array's
    alignment is left out of the key when `align_free`."""
    kind = type(value)
    if value is None:
        return None, None
    if kind is bool:
        return "i1", value
    if isinstance(value, float):  # a NumPy float64 too: the slow path makes it an fp32
        return "fp32", float(value)
    if kind is TensorDescriptor:
        return _descriptor_key(value, align_free)
    if kind is np.ndarray:
        address, read_only = value.__array_interface__["data"]
        return (value.dtype, align_free or address % 16 == 0, "numpy", read_only), address
    device = getattr(value, "device", None)
    if device is not None and hasattr(value, "data_ptr") and hasattr(value, "dtype"):
        address = value.data_ptr()  # a tensor subclass (a Parameter, ...)
        return (kind, value.dtype, align_free or address % 16 == 0, device), address
    raise Unbound  # NumPy scalars, array subclasses, dtypes: the slow path


def _descriptor_key(desc: TensorDescriptor, align_free: bool = False):
    """(key, launch value) of a host tensor descriptor: what compiler.specialize reads of it
    (its tensor's dtype and alignment, which sizes and strides are divisible by 16, its block
    shape, its padding) and where it lives, and its parts (base address, shape..., strides...)
    as one tuple."""
    base_key, address = _other_key(desc.base, align_free)
    if not isinstance(base_key, tuple):
        raise Unbound  # not a tensor: the slow path says so
    block = tuple(operator.index(b) for b in desc.block_shape)
    divisible = () if align_free else tuple(s % 16 == 0 for s in (*desc.shape, *desc.strides))
    key = (TensorDescriptor, base_key, block, desc.padding, divisible)
    return key, (address, *desc.shape, *desc.strides)


def _tensor_type():
    """torch.Tensor when torch is importable (arguments of exactly that type take the inline
    branch); else a type no argument has."""
    try:
        import torch
    except ImportError:
        return type("NoTensor", (), {})
    return torch.Tensor


def _argument_lines(param, index: int, align_free: bool) -> tuple[list[str], list[str]]:
    """The source that keys argument `param.name` (and puts its launch value in `__v{index}`
    unless it is a constexpr), and the names of its key items. A constexpr has one item; every
    other argument three, so that the key is one flat tuple (cheaper to build, hash and
    compare than nested ones) whose layout is fixed: a tensor's dtype, alignment and device;
    an integer's code or another argument's key, then two Nones."""
    name, key, value = param.name, f"__k{index}", f"__v{index}"
    if param.is_constexpr:
        return [f"    {key} = {name} if type({name}) is int else __constexpr_key({name})"], [key]
    # An integer: ==1 and %16 unless do_not_specialize, and its width class unless declared.
    small = (
        "0" if param.do_not_specialize else f"1 if {name} == 1 else 16 if {name} % 16 == 0 else 0"
    )
    if param.annotation is not None and param.annotation.is_int():
        int_key = small
    else:
        in_range = f"{_INT32_MIN} <= {name} <= {_INT32_MAX}"
        int_key = f"({small}) if {in_range} else __wide_int_key({name})"
    aligned, device = f"__a{index}", f"__e{index}"
    lines = [
        f"    if type({name}) is __Tensor:",
        f"        {value} = {name}.data_ptr()",
        f"        {key} = {name}.dtype",
        f"        {aligned} = {'True' if align_free else f'{value} % 16 == 0'}",
        f"        {device} = {name}.device",
        f"    elif type({name}) is int:",
        f"        {value} = {name}",
        f"        {key} = {int_key}",
        f"        {aligned} = {device} = None",
        "    else:",
        f"        {key}, {value} = __other_key({name}{', True' if align_free else ''})",
        f"        {aligned} = {device} = None",
    ]
    return lines, [key, aligned, device]


def make_binder(params, align_free=()):
    """`binder(settings, grid, *args, **kwargs) -> (key, dims, values)` for a kernel with
    `params` (runtime/params.py), or None when a parameter name would clash with the binder's
    own (names starting with `__`). `align_free` names the parameters whose alignment is not
    specialized (`do_not_specialize_on_alignment`)."""
    names = [p.name for p in params]
    if any(name.startswith("__") for name in names):
        return None
    env = {
        "__Tensor": _tensor_type(),
        "__constexpr_key": _constexpr_key,
        "__wide_int_key": _wide_int_key,
        "__other_key": _other_key,
        "__launch_dims": _launch_dims,
        "__callable": callable,
    }
    signature, lines, keys = [], [], ["__settings"]
    for index, param in enumerate(params):
        if param.has_default:
            env[f"__d{index}"] = param.default
            signature.append(f"{param.name}=__d{index}")
        else:
            signature.append(param.name)
        free = param.name in align_free  # by name only, as compiler.specialize reads it
        argument_lines, argument_keys = _argument_lines(param, index, free)
        lines += argument_lines
        keys += argument_keys
    values = [f"__v{i}" for i, p in enumerate(params) if not p.is_constexpr]
    by_name = ", ".join(f"{name!r}: {name}" for name in names)
    lines += [
        "    __g = __grid",
        "    if type(__g) is not tuple and __callable(__g):",
        f"        __g = __g({{{by_name}}})",
        "    if type(__g) is tuple and len(__g) == 1 and type(__g[0]) is int and __g[0] > 0:",
        "        __dims = (__g[0], 1, 1)",
        "    else:",
        "        __dims = __launch_dims(__g)",
        "    if __options:",
        "        __settings = (__settings, tuple(__options.items()))",
        f"    return ({', '.join(keys)},), __dims, ({''.join(v + ', ' for v in values)})",
    ]
    head = ", ".join(["__settings", "__grid", *signature, "**__options"])
    source = f"def binder({head}):\n" + "\n".join(lines) + "\n"
    exec(compile(source, "<naiad binder>", "exec"), env)
    return env["binder"]
