"""A launch bound to the fixed part of a call: what a library that keeps a launch plan per kind
of call runs at each call of the kind, instead of `kernel[grid](...)`.

A library that decides a launch once per kind of call (naiad.ops keeps one per dtypes, shapes
and strides) passes the same grid, sizes, strides, constexprs and options at every call of
that kind; only a few arguments change: its tensors, a scalar factor. The launch entry
(binder.py) still keys every argument at every call (a matrix product's 28: 6-7 us of host
time). `kernel.bind_launch(varying, grid, *args, **kwargs)` takes one whole sample call and the
names of the parameters that change, and returns a function of those arguments alone, in the
order of `varying`. Per call it

- keys the varying arguments exactly as the launch entry keys them (a tensor's dtype, 16-byte
  alignment and device; an integer's ==1, %16 and width; a float's kind; ...), and finds the
  prepared launch kept for those facts (the latest one, else one kept by its facts: a plan's
  views at two alignments take turns); a tensor the caller names `typed` (its plan fixes its
  dtype and device) is keyed by its alignment alone,
- checks that the launch settings (knobs.launch_settings) are the ones it was registered under
  and that the kernel has not dropped its prepared launches since
  (`JITFunction.launch_generation`: `forget_compiled`, a new `debug` or `interpret`),
- and runs that prepared launch with the fixed arguments' launch values kept from the sample
  (each run of them one tuple, which the call concatenates with the varying values); a
  prepared launch may offer `bind`, which packs the fixed parameters once for this bound
  launch (CUDA: cuda_bound_params.py; CPU: cpu_bound_params.py), and then each call passes
  the varying values alone, with the varying arguments they come from (whose arrays' extents
  the CPU's bounds checks read).

Anything else - a fact that differs, an argument the entry does not key inline, a prepared
launch that declines (the CPU's bounds checks) - runs the whole call through `kernel[dims]`,
the normal path, which prepares a launch for it; the bound launch then keeps that one too. The
fixed arguments and the grid are the sample's at every call: a callable grid is evaluated
once, and a fixed argument may only be a constexpr, None, a bool, an int or a float (an array's
data could move between calls), which `bind_launch` checks.

A varying host tensor descriptor named in `described` is passed per call as its tensor alone:
the sample's descriptor fixes its shape, strides, block and padding (and, as `typed`, its
tensor's dtype and device), so a call makes no descriptor and keys only the tensor's alignment;
its launch value is the tensor's address followed by the kept sizes and strides. A library
whose plan fixes a descriptor's geometry (naiad.ops attention's rows of q, k, v and of its
results: 15 descriptors a forward and backward, each ~2.5 us of host time to make and key on
the H200's host) passes its tensors; the normal path gets the descriptor made again.
"""

from __future__ import annotations

from ..knobs import launch_settings
from .binder import Unbound, argument_lines, binding, clashes, define, grid_dims, tupled
from .tensor_descriptor import TensorDescriptor

# Kinds of fixed argument a bound launch keeps as they are (anything else is refused).
_FIXED_KINDS = (type(None), bool, int, float)


def bind_launch(owner, varying, grid, args, kwargs, typed=(), described=()):
    """The bound launch of the JIT function `owner` (see the module doc): `launch(*values)`
    with the values of the parameters named in `varying`, in that order, and every other
    argument, the launch options and the grid those of the sample call `(grid, *args,
    **kwargs)`; it returns what `kernel[grid](...)` returns. `typed` names varying parameters
    whose tensors have the sample's dtype and device at every call, which the caller's own
    plan guarantees (naiad.ops keys its plans by them): only their alignment is keyed;
    `described` names varying descriptors each call passes as their tensors (the module doc)."""
    params = owner.params
    by_name = owner.params_by_name
    unknown = [name for name in varying if name not in by_name]
    if unknown:
        raise TypeError(f"{owner.__name__}() has no parameter {unknown[0]!r} to vary")
    if not set(typed) <= set(varying):
        raise TypeError(f"{owner.__name__}(): a typed parameter must be a varying one")
    if not set(described) <= set(varying):
        raise TypeError(f"{owner.__name__}(): a described parameter must be a varying one")
    if len(args) > len(params):
        raise TypeError(f"{owner.__name__}() takes {len(params)} arguments but {len(args)} given")
    named = dict(zip((p.name for p in params), args))
    options = {k: v for k, v in kwargs.items() if k not in by_name}
    named.update({k: v for k, v in kwargs.items() if k in by_name})
    for param in params:
        value = named.get(param.name, param.default if param.has_default else None)
        fixed = param.name not in varying and not param.is_constexpr
        if fixed and type(value) not in _FIXED_KINDS:
            raise TypeError(
                f"{owner.__name__}(): the fixed argument {param.name!r} is a "
                f"{type(value).__name__}; pass it as a varying one"
            )
    if callable(grid) and not isinstance(grid, (tuple, list)):
        grid = grid(dict(named))
    dims = grid_dims(grid)
    geometry = {}  # a described descriptor's name -> (its fields but the tensor, its parts)
    for name in described:
        desc = named.get(name)
        if type(desc) is not TensorDescriptor:
            raise TypeError(f"{owner.__name__}(): the described argument {name!r} is not a "
                            "tensor descriptor")  # fmt: skip
        shape, strides, block = list(desc.shape), list(desc.strides), list(desc.block_shape)
        fields = (shape, strides, block, desc.padding, desc.round_f32_to_tf32)  # copies: kept
        geometry[name] = (fields, (*shape, *strides))
    typed = frozenset(typed)
    return _BoundLaunch(owner, tuple(varying), named, options, dims, typed, geometry).function


class _Typed:
    """The key items of a typed tensor (`bind_launch`'s `typed`) in place of its dtype and
    device, which are not read."""

    def __repr__(self):
        return "<typed>"


_TYPED = _Typed()
# The state of a bound launch without a prepared launch: the varying facts, the launch
# settings, the launch generation, the prepared launch, and that launch with the fixed
# parameters packed (None where the back end has none).
_NO_STATE = (None, None, None, None, None)
# States a bound launch keeps by their facts before it forgets them all (alignments rarely
# take more than two).
_STATES_KEPT = 8


class _BoundLaunch:
    """The state of one bound launch: the generated per-call function (`function`) and what it
    compares against, kept in that function's globals (`env["__state"]`: the varying
    arguments' facts, the launch settings, the kernel's launch generation, the prepared
    launch and, where its back end makes one (CUDA: cuda_bound_params.py), that launch with
    the fixed parameters packed once, which then takes the varying values alone), which
    `_full` renews after each call that took the normal path, and every state by its facts
    (`env["__states"]`, up to _STATES_KEPT)."""

    def __init__(self, owner, varying: tuple, named: dict, options: dict, dims, typed, geometry):
        self.owner = owner
        self.varying = varying  # the names of the parameters each call passes, in order
        self.typed = typed  # those whose tensors' dtype and device the caller fixes
        self.geometry = geometry  # the described descriptors' (bind_launch)
        sample = [named[name] if name in named else self._default(name) for name in varying]
        sample = [named[name].base if name in geometry else value
                  for name, value in zip(varying, sample)]  # fmt: skip
        # The sample call's other arguments, by parameter name (not its varying ones: a bound
        # launch must not keep the sample's tensors alive).
        self.named = {name: value for name, value in named.items() if name not in varying}
        self.options = options  # its launch options (num_warps, ...)
        self.dims = dims  # its grid, evaluated
        params = owner.params
        # the latest state, and each state kept by its facts (a plan's views at two alignments
        # take turns: each call of one would otherwise take the normal path and renew)
        self.env = {"__state": _NO_STATE, "__states": {}, "__full": self._full}
        # Generated unless the entry has no keying of its own or the grid runs nothing.
        self.generated = not clashes(params) and 0 not in dims
        if not self.generated:
            self.function = self._full
            return
        self.function = self._generate(params)
        self._renew(sample)

    def _generate(self, params):
        """The per-call function (see the module doc), generated as the launch entry is."""
        _, _, env, keys, _ = binding(params, self.owner.do_not_specialize_on_alignment)
        env = self.env | env
        env.update(__Unbound=Unbound, __launch_settings=launch_settings, __owner=self.owner,
                   __typed=_TYPED, __dims=self.dims)  # fmt: skip
        free = self.owner.do_not_specialize_on_alignment
        lines, facts, values, arguments, varying = [], [], [], [], []
        self._fixed = {}  # the fixed runtime values, by position among the runtime values
        # a typed tensor's positions in the facts -> its in `varying`; a described one's
        self._typed_facts, self._described_facts = {}, []
        for index, param in enumerate(params):
            if param.name in self.varying:
                typed = param.name in self.typed and param.name not in self.geometry
                if param.name in self.geometry:
                    self._described_facts.append(len(facts))
                    argument, names = _described_lines(param.name, self.geometry, index, free)
                else:
                    argument, names = argument_lines(param, index, param.name in free, typed)
                lines += argument
                if typed:
                    where = self.varying.index(param.name)
                    self._typed_facts.update({len(facts): where, len(facts) + 2: where})
                facts += names
                if not param.is_constexpr:
                    varying.append(len(values))
                    values.append(f"__v{index}")
                    arguments.append(param.name)
            elif not param.is_constexpr:
                given = self._given(param.name)
                self._fixed[len(values)] = float(given) if type(given) is float else given
                values.append((self._fixed[len(values)],))
                arguments.append((given,))
        self._varying_runtime = tuple(varying)
        self._positions = [keys.index(name) for name in facts]
        source = [
            f"def __bound({', '.join(self.varying)}):",
            "    try:",
            *("    " + line for line in lines),
            "    except (__Unbound, TypeError):",
            "        pass",
            "    else:",
            f"        __now = {tupled(facts)}",
            "        __found = __state if __now == __state[0] else __states.get(__now, __state)",
            "        __facts, __settings, __generation, __launch, __fixed_packed = __found",
            "        if (__now == __facts and __launch_settings() == __settings"
            " and __owner.launch_generation == __generation):",
            "            if __fixed_packed is not None:",
            f"                __ran = __fixed_packed({tupled([values[i] for i in varying])},"
            f" {tupled([arguments[i] for i in varying])})",
            "            else:",
            f"                __ran = __launch(__dims, {_joined(values, 'values', env)},"
            f" {_joined(arguments, 'given', env)})",
            "            if __ran:  # the CompiledKernel it ran",
            "                return __ran",
            f"    return __full({', '.join(self.varying)})",
        ]
        self.env = env
        return define("__bound", "\n".join(source) + "\n", env, "<naiad bound launch>",
                      self.owner.__name__)  # fmt: skip

    def _given(self, name: str):
        """The sample call's argument `name`, or the parameter's default where it left it out."""
        return self.named[name] if name in self.named else self._default(name)

    def _default(self, name: str):
        """The default of parameter `name`, which the sample call left out."""
        param = self.owner.params_by_name[name]
        if not param.has_default:
            raise TypeError(f"{self.owner.__name__}() missing required argument {name!r}")
        return param.default

    def _call(self, values) -> dict:
        """The whole call's arguments by name, with `values` for the varying ones (a described
        descriptor made again around its tensor)."""
        call = dict(self.named)
        call.update(zip(self.varying, values))
        for name, (fields, _) in self.geometry.items():
            call[name] = TensorDescriptor(call[name], *fields)
        return call

    def _full(self, *values):
        """The whole call through the launch entry, the normal path; then the launch it
        prepared for these values' facts is the one the bound launch runs."""
        ran = self.owner[self.dims](**self._call(values), **self.options)
        if self.generated:
            self._renew(values)
        return ran

    def _renew(self, values) -> None:
        """Keep the prepared launch registered for the call with `values` and its facts (the
        latest state, and by its facts), or none as the latest (the next call with other facts
        takes the normal path)."""
        binder = self.owner._get_binder()
        generation = self.owner.launch_generation
        settings = launch_settings()
        call = self._call(values)
        try:
            key = binder(settings, self.dims, **call, **self.options)[0]
            launch = self.owner._launches.get(key)
        except (Unbound, TypeError):
            launch = None
        if launch is None:
            self.env["__state"] = _NO_STATE
            return
        facts = [key[position] for position in self._positions]
        for fact, where in self._typed_facts.items():
            if isinstance(values[where], self.env["__Tensor"]):
                if type(facts[fact]) is tuple:  # a subclass's key: (kind, dtype, aligned, device)
                    facts[fact + 1] = facts[fact][2]  # keyed as a tensor (argument_lines)
                facts[fact] = _TYPED
        for fact in self._described_facts:  # its tensor's alignment (descriptor_key's)
            facts[fact] = facts[fact][1][2]
        bind = getattr(launch, "bind", None)  # a CUDA launch's (cuda_bound_params.py)
        fixed_packed = bind and bind(self._fixed, self._varying_runtime, self.dims)
        state = (tuple(facts), settings, generation, launch, fixed_packed)
        states = self.env["__states"]
        if len(states) >= _STATES_KEPT:
            states.clear()
        self.env["__state"] = states[state[0]] = state


def _described_lines(name: str, geometry: dict, index: int, align_free):
    """The source that keys a described descriptor's tensor `name` (bind_launch) by its
    alignment alone (unless `name` is in `align_free`) and puts the descriptor's launch value
    in `__v{index}` (its address, then its kept sizes and strides from `geometry`, written as
    constants), and the names of its key items, laid out as binder.argument_lines'. Anything
    but a torch tensor takes the normal path."""
    parts = geometry[name][1]
    aligned = "True" if name in align_free else f"__v{index}[0] % 16 == 0"
    lines = [
        f"    if __type({name}) is not __Tensor:",
        "        raise __Unbound",
        f"    __v{index} = ({name}.data_ptr(), {', '.join(map(str, parts))})",
        f"    __k{index} = {aligned}",
        f"    __a{index} = __e{index} = None",
    ]
    return lines, [f"__k{index}", f"__a{index}", f"__e{index}"]


def _joined(items: list, name: str, env: dict) -> str:
    """The source of one tuple of `items`: the names of per-call values (str) and fixed values
    (one-tuples), each run of fixed ones kept in `env` as one tuple that the call concatenates
    (a matrix product's 17 fixed sizes and strides: one global read, not 17)."""
    parts, names, fixed = [], [], []

    def close():
        if names:
            parts.append(tupled(names))
            names.clear()
        if fixed:
            env[f"__{name}{len(parts)}"] = tuple(fixed)
            parts.append(f"__{name}{len(parts)}")
            fixed.clear()

    for item in items:
        if isinstance(item, str):
            if fixed:
                close()
            names.append(item)
        else:
            fixed.append(item[0])
    close()
    return " + ".join(parts) if parts else "()"
