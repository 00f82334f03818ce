"""The launch hot path: a function generated per kernel that binds, keys and launches a call.

A `@naiad.jit` function gets one launch entry (`make_entry`), generated as Python source from
its parameter list and compiled once: `kernel[grid](*args, **kwargs)` calls it with the call's
own arguments, so Python binds them (defaults included) without `inspect.Signature.bind`, and in
the same frame it computes

- the *key*: every fact the slow path would specialize or decide on, for each argument - a
  tensor's dtype, 16-byte alignment and device; an integer's ==1 / %16 and 32- or 64-bit class;
  a constexpr's value; the kind of every other argument - plus the launch options passed as
  keywords and the launch settings (knobs.launch_settings: interpreter, back end, debug);
- the grid as three positive sizes (a callable grid is called with the arguments by name);
- the launch values of the non-constexpr parameters, in order: a tensor's data pointer, an
  integer, float or bool as it is, a host tensor descriptor's parts as one tuple (its tensor's
  data pointer, its shape, its strides: what the frontend makes of it), keyed by its tensor's
  dtype and device, its block shape and its padding; a tuple's leaves as one flat tuple of
  their launch values (constants as None), keyed by its class and its leaves' keys, nested;

and runs the launch prepared under the key. One frame from the call to the prepared launch: a
launch's host time is mostly this Python (bench/gpu/launch_overhead.py).

The key is only looked up: the slow path registers a prepared launch under it after a launch
succeeded with those very facts, so a key that was never registered (a new dtype, a misaligned
tensor, an unknown keyword) just takes the slow path. What the entry does not handle takes the
slow path too (`Unbound` inside): NumPy scalars, `naiad.reinterpret` wrappers, grids with an
empty dimension, missing or extra arguments (whose errors the slow path raises).
`JITFunction.run` keys its calls with `make_binder`, the same keying on its own.
"""

from __future__ import annotations

import operator

from ..errors import CompilationError, without_naiad_frames
from ..knobs import launch_settings
from ..language import core
from .argument_keys import (
    INT32_MAX,
    INT32_MIN,
    Unbound,
    constexpr_key,
    descriptor_key,
    other_key,
    tensor_type,
    wide_int_key,
)
from .tensor_descriptor import TensorDescriptor

# The largest grid CUDA launches (x < 2**31, y and z < 65536), refused beyond on every back end
# and in the interpreter: program ids are int32, and the CPU would wrap them (or run a grid of
# 2**20 x 2**20 programs for hours) where CUDA refuses at once.
GRID_LIMITS = (2**31 - 1, 65535, 65535)
_AXES = "xyz"


def grid_dims(grid) -> tuple[int, int, int]:
    """A grid (1 to 3 sizes, evaluated) as three non-negative ints within `GRID_LIMITS`; the
    launch errors of a bad grid. Shared by the slow path and the binder."""
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
    for axis, (size, limit) in enumerate(zip(dims, GRID_LIMITS)):
        if size > limit:
            raise ValueError(
                f"grid dimension {axis} is {size} ({_AXES[axis]}): at most {limit}, as CUDA "
                "allows (x < 2**31, y and z < 65536), on every back end"
            )
    return tuple(dims + [1] * (3 - len(dims)))


def _launch_dims(grid) -> tuple[int, int, int]:
    """`grid_dims` for the binder: an empty grid launches nothing, which the slow path says."""
    dims = grid_dims(grid)
    if 0 in dims:
        raise Unbound
    return dims


def argument_lines(
    param, index: int, align_free: bool, typed: bool = False
) -> tuple[list[str], list[str]]:
    """The source that keys argument `param.name` (and puts its launch value in `__v{index}`
    unless it is a constexpr), and the names of its key items. A constexpr has one item; every
    other argument three, so that the key is one flat tuple (cheaper to build, hash and
    compare than nested ones) whose layout is fixed: a tensor's dtype, alignment and device;
    an integer's code or another argument's key, then two Nones. `typed` (a bound launch's
    tensor whose dtype and device its caller fixes): a tensor's dtype and device are not read,
    both items are the marker `__typed`, and a tensor subclass (an nn.Parameter: a module's
    weight) is keyed so too. Elsewhere a subclass and a float are keyed inline as `other_key`
    keys them (a norm's weight, a scalar factor: 0.5 * x, masked_fill's value), which a call
    of that function and its checks for other kinds cost each such argument about 0.5 us."""
    name, key, value = param.name, f"__k{index}", f"__v{index}"
    if param.is_constexpr:
        line = f"    {key} = {name} if __type({name}) is __int else __constexpr_key({name})"
        return [line], [key]
    # An integer: ==1 and %16 unless do_not_specialize, and its width class unless declared.
    small = (
        "0" if param.do_not_specialize else f"1 if {name} == 1 else 16 if {name} % 16 == 0 else 0"
    )
    if param.annotation is not None and param.annotation.is_int():
        int_key = small
    else:
        in_range = f"{INT32_MIN} <= {name} <= {INT32_MAX}"
        int_key = f"({small}) if {in_range} else __wide_int_key({name})"
    aligned, device = f"__a{index}", f"__e{index}"
    tensor, subclass = _tensor_lines(name, index, align_free, typed)
    lines = [
        f"    if __type({name}) is __Tensor:",
        *tensor,
        f"    elif __type({name}) is __int:",
        f"        {value} = {name}",
        f"        {key} = {int_key}",
        f"        {aligned} = {device} = None",
        f"    elif __type({name}) is __float:",
        f"        {value} = {name}",
        f"        {key} = 'fp32'",
        f"        {aligned} = {device} = None",
        *subclass,
        f"    elif __type({name}) is __TensorDescriptor:",
        f"        {key}, {value} = __descriptor_key({name}, {align_free}, __Tensor)",
        f"        {aligned} = {device} = None",
        "    else:",
        f"        {key}, {value} = __other_key({name}, {align_free}, {param.do_not_specialize})",
        f"        {aligned} = {device} = None",
    ]
    return lines, [key, aligned, device]


def _tensor_lines(name: str, index: int, align_free: bool, typed: bool):
    """argument_lines' branches for a torch tensor and for a tensor subclass: the lines under
    the tensor's test, and the subclass's test with its lines. A subclass is keyed inline as
    other_key keys it (its kind, dtype, alignment and device), or as a tensor where typed."""
    key, value, aligned, device = f"__k{index}", f"__v{index}", f"__a{index}", f"__e{index}"
    is_aligned = "True" if align_free else f"{value} % 16 == 0"
    kinds = [f"        {key} = {device} = __typed"] if typed else [
        f"        {key} = {name}.dtype",
        f"        {device} = {name}.device",
    ]  # fmt: skip
    tensor = [f"        {value} = {name}.data_ptr()", f"        {aligned} = {is_aligned}", *kinds]
    subclass = tensor if typed else [
        f"        {value} = {name}.data_ptr()",
        f"        {key} = (__type({name}), {name}.dtype, {is_aligned}, {name}.device)",
        f"        {aligned} = {device} = None",
    ]  # fmt: skip
    return tensor, [f"    elif __isinstance({name}, __Tensor):", *subclass]


class _Missing:
    """The default the generated functions give a required parameter: a call that leaves it
    out reaches the slow path, whose error names the kernel and the argument (`_bind` in
    jit.py), where Python's own would name the generated function."""

    def __repr__(self):
        return "<missing argument>"


MISSING = _Missing()


def binding(params, align_free) -> tuple[str, list[str], dict, list[str], list[str]]:
    """What the binder and the launch entry share: their parameter list (a required parameter
    defaults to MISSING), the lines that key the arguments and evaluate the grid into
    `__dims` (at one level of indentation, reading `__settings` and `__options`), the
    environment those lines read, the names of the key's items and of the launch values."""
    env = {
        "__Tensor": tensor_type(),
        "__constexpr_key": constexpr_key,
        "__wide_int_key": wide_int_key,
        "__other_key": other_key,
        "__TensorDescriptor": TensorDescriptor,
        "__descriptor_key": descriptor_key,
        "__launch_dims": _launch_dims,
        # Builtins under names of the generated code's own: a parameter may be named `type`.
        "__callable": callable,
        "__type": type,
        "__int": int,
        "__float": float,
        "__isinstance": isinstance,
        "__len": len,
        "__tuple": tuple,
    }
    signature, lines, keys = [], [], ["__settings"]
    for index, param in enumerate(params):
        env[f"__d{index}"] = param.default if param.has_default else MISSING
        signature.append(f"{param.name}=__d{index}")
        free = param.name in align_free  # by name only, as compiler.specialize reads it
        own_lines, argument_keys = argument_lines(param, index, free)
        lines += own_lines
        keys += argument_keys
    values = [f"__v{i}" for i, p in enumerate(params) if not p.is_constexpr]
    lines += [
        "    __g = __grid",
        "    if __type(__g) is not __tuple and __callable(__g):",
        f"        __g = __g({_by_name(params)})",
        "    __n = __len(__g) if __type(__g) is __tuple else 0",
        f"    if __n == 1 and __type(__g[0]) is __int and 0 < __g[0] <= {GRID_LIMITS[0]}:",
        "        __dims = (__g[0], 1, 1)",
        # a batch of tiles (products, attention): grid_dims costs a launch several microseconds
        "    elif __n == 2 and __type(__g[0]) is __int and __type(__g[1]) is __int"
        f" and 0 < __g[0] <= {GRID_LIMITS[0]} and 0 < __g[1] <= {GRID_LIMITS[1]}:",
        "        __dims = (__g[0], __g[1], 1)",
        # three sizes, as libraries that launch compiled kernels pass them (Inductor)
        "    elif __n == 3 and __type(__g[0]) is __int and __type(__g[1]) is __int"
        f" and __type(__g[2]) is __int and 0 < __g[0] <= {GRID_LIMITS[0]}"
        f" and 0 < __g[1] <= {GRID_LIMITS[1]} and 0 < __g[2] <= {GRID_LIMITS[2]}:",
        "        __dims = __g",
        "    else:",
        "        __dims = __launch_dims(__g)",
        "    if __options:",
        "        __settings = (__settings, __tuple(__options.items()))",
    ]
    return ", ".join(signature), lines, env, keys, values


def _by_name(params) -> str:
    """The source of a dict of the arguments by parameter name."""
    return "{" + ", ".join(f"{p.name!r}: {p.name}" for p in params) + "}"


def tupled(names: list[str]) -> str:
    """The source of a tuple of `names` (generated code)."""
    return "(" + "".join(f"{name}, " for name in names) + ")"


# Compiled generated sources by (source, filename): kernels with the same parameters and
# specialization get the same source (a test suite defines hundreds such kernels, and Python's
# `compile` of one costs a few tenths of a millisecond). Forgotten past _COMPILED_MAX.
_COMPILED: dict = {}
_COMPILED_MAX = 4096


def define(name: str, source: str, env: dict, filename: str, shown_as: str | None = None):
    """The function `name` that `source` defines, compiled under `filename`; named `shown_as`
    in tracebacks and Python's argument errors, a name its own code never looks up."""
    code = _COMPILED.get((source, filename))
    if code is None:
        if len(_COMPILED) >= _COMPILED_MAX:
            _COMPILED.clear()
        code = _COMPILED[source, filename] = compile(source, filename, "exec")
    exec(code, env)
    function = env[name]
    if shown_as is not None:
        function.__code__ = function.__code__.replace(co_name=shown_as, co_qualname=shown_as)
        function.__name__ = function.__qualname__ = shown_as
    return function


def clashes(params) -> bool:
    """Whether a parameter name would clash with the generated code's own (`__...`)."""
    return any(p.name.startswith("__") for p in params)


def make_binder(params, align_free=(), with_arguments=False):
    """`binder(settings, grid, *args, **kwargs) -> (key, dims, values)`: the launch entry's
    keying (`make_entry`) on its own, for `JITFunction.run`, which the autotuner, heuristics
    and the entry's misses call; `with_arguments` adds a fourth item, the arguments a prepared
    launch takes after the values (see `make_entry`). None when a parameter name would clash
    with the generated code's (names starting with `__`).
    `align_free` names the parameters whose alignment is not specialized
    (`do_not_specialize_on_alignment`). What the entry would leave to the slow path raises
    Unbound (a missing argument too)."""
    if clashes(params):
        return None
    signature, lines, env, keys, values = binding(params, align_free)
    env.update(__Unbound=Unbound, __missing=MISSING)
    required = [p.name for p in params if not p.has_default]
    source = "\n".join(
        [
            f"def binder(__settings, __grid, {_then(signature)}**__options):",
            *(f"    if {name} is __missing: raise __Unbound" for name in required),
            *lines,
            f"    return {tupled(keys)}, __dims, {tupled(values)}"
            + (f", {tupled(runtime_names(params))}" if with_arguments else ""),
        ]
    )
    return define("binder", source + "\n", env, "<naiad binder>")


def runtime_names(params) -> list[str]:
    """The non-constexpr parameters, whose arguments a prepared launch takes as they were
    given: the CPU's reads the storage of its arrays there (bounds checks, cpu_launcher.py)."""
    return [p.name for p in params if not p.is_constexpr]


def as_given(named: dict, extra: tuple, options: dict) -> tuple[tuple, dict]:
    """The positional and keyword arguments of a call the entry received as `named` (every
    parameter, MISSING where not given), `extra` (positional arguments beyond the parameters)
    and `options` (the other keywords): positionally when there were extra ones (then every
    parameter was given so), else by name."""
    if extra:
        return (*named.values(), *extra), options
    kwargs = {name: value for name, value in named.items() if value is not MISSING}
    kwargs.update(options)
    return (), kwargs


def make_entry(owner, align_free, launches: dict, show_traceback):
    """The launch hot path of the JIT function `owner` as one generated function, what
    `kernel[grid]` calls: `entry(grid, *args, **kwargs)`, which returns the CompiledKernel run.

    It keys the call as the binder does, in the same frame, and runs the launch prepared in
    `launches` under that key (`launch(dims, values, arguments)`, `arguments` those of the
    non-constexpr parameters as given), which returns that kernel. Anything else - no prepared
    launch, one that declines (False), an argument the binder does not handle, a missing or
    extra argument - goes to `owner.run` with the arguments as given (`as_given`) and the
    grid, evaluated when the key is known (a callable grid is called once per launch).
    `run` is looked up at that call, so that what wraps it (tools, tests) sees every launch
    the hot path does not take. A CompilationError leaves without Naiad's frames unless
    `show_traceback()`; the code is compiled in the `<naiad launch>` pseudo-file, which
    tracebacks show as such. A kernel whose parameter names clash with the generated code's
    gets an entry that always calls `run`. The function is named after the kernel."""
    params, name = owner.params, owner.__name__
    env = {
        "__owner": owner,
        "__as_given": as_given,
        "__launches": launches,
        "__show_traceback": show_traceback,
        "__launch_settings": launch_settings,
        "__Unbound": Unbound,
        "__CompilationError": CompilationError,
        "__hide": without_naiad_frames,
    }
    tail = [
        "    try:",
        "        return __owner.run(*__args, grid=__grid, **__kwargs)",
        "    except __CompilationError as __error:",
        "        if __show_traceback():",
        "            raise",
        "        raise __hide(__error)",
    ]
    if clashes(params):
        source = ["def __entry(__grid, *__args, **__kwargs):", *tail]
        return define("__entry", "\n".join(source) + "\n", env, "<naiad launch>", name)
    signature, lines, binding_env, keys, values = binding(params, align_free)
    env.update(binding_env)
    source = [
        f"def __entry(__grid, {_then(signature)}*__extra, **__options):",
        "    try:",
        "        if __extra:",
        "            raise __Unbound",
        "        __settings = __launch_settings()",
        *("    " + line for line in lines),
        f"        __key = {tupled(keys)}",
        "        __launch = __launches.get(__key)",
        "    except (__Unbound, TypeError):  # TypeError: an unhashable constexpr or option",
        "        pass",
        "    else:",
        "        if __launch is not None:",
        f"            __ran = __launch(__dims, {tupled(values)}, {tupled(runtime_names(params))})",
        "            if __ran:  # the CompiledKernel it ran",
        "                return __ran",
        "        __grid = __dims",
        f"    __args, __kwargs = __as_given({_by_name(params)}, __extra, __options)",
        *tail,
    ]
    return define("__entry", "\n".join(source) + "\n", env, "<naiad launch>", name)


def _then(signature: str) -> str:
    """A parameter list followed by more parameters (empty for a kernel without any)."""
    return f"{signature}, " if signature else ""
