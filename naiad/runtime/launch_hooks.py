"""Triton's launch hooks: `triton.knobs.runtime.launch_enter_hook` and `launch_exit_hook`
(Naiad's settings NAIAD_LAUNCH_ENTER_HOOK, NAIAD_LAUNCH_EXIT_HOOK, set from Python), called
around every launch of every JIT function, and a JIT function's own `add_pre_run_hook(f)`,
called with a launch's arguments before it runs. Profilers and tracers set them.

    def enter(metadata):                  # metadata.get(): {"name", "grid", ...}
        ...
    triton.knobs.runtime.launch_enter_hook.add(enter)    # a HookChain, as in Triton's main
    triton.knobs.runtime.launch_enter_hook = enter       # or one function, as in Triton 3.3

A hook's argument is a LazyDict: `get()` makes the launch's metadata only when asked (the
kernel's name, the grid, and what the JIT function's `launch_metadata(grid, metadata, args)`
adds). The enter hook is called before the launch, which compiles the kernel first when it is
new; the exit hook after it (exit hooks of a chain in reverse order). While any hook is set,
`kernel[grid]` goes through `JITFunction.run` (jit.py, through `knobs.launch_hooks_set()`),
not the generated entry, which calls none; `run` still takes a launch prepared for the call's
key (`around_prepared`), so a hooked launch costs the hooks and the keying, not the full path:
a profiler's hooks (triton.profiler) must not starve the GPU between its kernels.
"""

from __future__ import annotations

from .. import knobs
from .launch_options import OPTION_NAMES, OTHER_VENDORS_OPTIONS


class HookChain:
    """Functions called in turn with the same arguments (Triton's `knobs.HookChain`)."""

    def __init__(self, reversed: bool = False):
        self.calls: list = []
        self.reversed = reversed

    def add(self, function) -> None:
        if function not in self.calls:
            self.calls.append(function)

    def remove(self, function) -> None:
        if function in self.calls:
            self.calls.remove(function)

    def __bool__(self) -> bool:
        return bool(self.calls)

    def __call__(self, *args, **kwargs) -> None:
        for function in reversed(self.calls) if self.reversed else list(self.calls):
            function(*args, **kwargs)


class LazyDict:
    """A launch's metadata, made when a hook asks for it (`get()`)."""

    def __init__(self, make):
        self._make, self._made = make, None

    def get(self) -> dict:
        if self._made is None:
            self._made = self._make()
        return self._made


class _Launch:
    """One launch's metadata as the hooks see it, and the CompiledKernel once it ran."""

    def __init__(self, jit_function, bind, grid: tuple):
        self.kernel = None
        self.metadata = LazyDict(lambda: _metadata(jit_function, bind(), grid, self.kernel))


def around(jit_function, bound: dict, grid: tuple, launch, entered=None):
    """`launch()` (a launch of `jit_function` with `bound` arguments over the 3-D `grid`,
    which returns its prepared launch and CompiledKernel: jit.py's `_launch`) between the
    enter and exit hooks, where any is set; what it returns. `entered`: the launch whose
    enter hook `around_prepared` called already (its prepared launch declined)."""
    enter, leave = knobs.launch_enter_hook.get(), knobs.launch_exit_hook.get()
    if not enter and not leave:
        return launch()
    this = entered or _Launch(jit_function, lambda: bound, grid)
    if enter and entered is None:
        enter(this.metadata)
    result = launch()
    this.kernel = result[1]
    if leave:
        leave(this.metadata)
    return result


def around_prepared(jit_function, call: tuple, args: tuple, kwargs: dict):
    """`launch(dims, values, arguments)` (`call`: a launch prepared for the call's key, which
    returns the CompiledKernel it ran, or False where it declines) between the hooks; `args`
    and `kwargs` are the launch's, bound by name only when a hook reads the metadata. Returns
    (what the launch returned, the launch entered, for `around` to finish where it declined,
    else None)."""
    enter, leave = knobs.launch_enter_hook.get(), knobs.launch_exit_hook.get()
    launch, dims, values, arguments = call
    this = _Launch(jit_function, lambda: _bound(jit_function, args, kwargs), dims)
    if enter:
        enter(this.metadata)
    ran = launch(dims, values, arguments)
    if not ran:
        return ran, this
    this.kernel = ran
    if leave:
        leave(this.metadata)
    return ran, None


def _bound(jit_function, args: tuple, kwargs: dict) -> dict:
    """A launch's arguments by parameter name, its launch options left out (as the slow path
    takes them out before it binds; a kernel parameter of an option's name stays)."""
    options = OPTION_NAMES | OTHER_VENDORS_OPTIONS | {"ir_override"}
    params = jit_function.params_by_name
    kept = {k: v for k, v in kwargs.items() if k not in options or k in params}
    return jit_function._bind(args, kept)


def _metadata(jit_function, bound: dict, grid: tuple, kernel) -> dict:
    """The kernel's name and grid, and what `launch_metadata(grid, metadata, args)` adds (its
    `metadata` the compiled kernel's, None before the launch or in the interpreter)."""
    made = {"name": jit_function.__name__, "grid": grid}
    user = jit_function.launch_metadata
    if user is not None:
        made.update(user(grid, getattr(kernel, "metadata", None), dict(bound)))
    return made


def loading(kernel, load):
    """`load()` (which links compiled `kernel` into the process or loads it on a GPU, and
    returns (module, function): the loaded object and its entry) between the kernel load
    hooks, where any is set (`triton.knobs.runtime.kernel_load_start_hook`, `..._end_hook`;
    NAIAD_KERNEL_LOAD_START_HOOK, NAIAD_KERNEL_LOAD_END_HOOK): each is called with Triton's
    (module, function, name, metadata_group, hash), module and function None before the
    load, and metadata_group empty (Naiad's cache keeps a kernel's files in one entry)."""
    start, end = knobs.kernel_load_start_hook.get(), knobs.kernel_load_end_hook.get()
    if not start and not end:
        return load()
    if start:
        start(None, None, kernel.name, {}, kernel.hash)
    module, function = loaded = load()
    if end:
        end(module, function, kernel.name, {}, kernel.hash)
    return loaded


def run_pre_run_hooks(jit_function, args: tuple, kwargs: dict) -> None:
    """Call the JIT function's pre-run hooks with a launch's arguments, in the order added."""
    for hook in jit_function.pre_run_hooks:
        hook(*args, **kwargs)
