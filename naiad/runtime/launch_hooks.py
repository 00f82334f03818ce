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
launches take the full path (jit.py, through `knobs.launch_hooks_set()`), not the prepared hot
path, which calls none.
"""

from __future__ import annotations

from .. import knobs


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


def around(jit_function, bound: dict, grid: tuple, launch):
    """`launch()` (a launch of `jit_function` with `bound` arguments over the 3-D `grid`,
    which returns its prepared launch and CompiledKernel: jit.py's `_launch`) between the
    enter and exit hooks, where any is set; what it returns."""
    enter, leave = knobs.launch_enter_hook.get(), knobs.launch_exit_hook.get()
    if not enter and not leave:
        return launch()
    metadata = LazyDict(lambda: _metadata(jit_function, bound, grid, ran))
    ran = None
    if enter:
        enter(metadata)
    result = ran = launch()
    if leave:
        leave(metadata)
    return result


def _metadata(jit_function, bound: dict, grid: tuple, ran) -> dict:
    """The kernel's name and grid, and what `launch_metadata(grid, metadata, args)` adds (its
    `metadata` the compiled kernel's, None before the compile or in the interpreter)."""
    made = {"name": jit_function.__name__, "grid": grid}
    user = jit_function.launch_metadata
    if user is not None:
        kernel = ran[1] if ran is not None else None
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
