"""`@naiad.jit`: a kernel function that can be launched as `kernel[grid](*args, **meta)`.

A launch binds the arguments (constexpr parameters included, with their defaults), separates the
launch options (`num_warps`, `num_stages`, ...), evaluates the grid and runs the kernel. Until a
compiled back end is present for the arguments' device, kernels run in the interpreter; with
`NAIAD_INTERPRET=1` or `@naiad.jit(interpret=True)` they always do. The back end is the one of
the arguments' device (launchers.py): host arrays run on the CPU, torch CUDA tensors on their
GPU. A JIT function keeps one launcher per back end (`_launchers`) and the launches prepared for
the hot path (`_launches`); `forget_compiled()` drops both.
"""

from __future__ import annotations

import functools
import inspect
import weakref

from .. import knobs
from ..ir.passes import pipeline_listeners
from ..knobs import launch_settings
from ..language import core
from ..language.core import ConstexprFunction  # noqa: F401  (Triton's runtime.jit has it)
from . import launch_hooks
from .binder import Unbound, grid_dims, make_binder, make_entry, tensor_type
from .bound_launch import bind_launch
from .compiler import compile_kernel
from .interpreter import kernel_runtime
from .interpreter.launch import interpreter_rules, run_grid
from .interpreter.rewrite import rewrite
from .ir_override import forget_all as forget_ir_overrides
from .ir_override import launch_from_file
from .jit_hooks import CompileSkipped, warmup_site
from .jit_preload import Preloading
from .kernel_interface import KernelInterface
from .kernel_source import JITSource, readable
from .launch_checks import check_arguments
from .launch_mode import compile_mode
from .launch_options import OPTION_NAMES, OTHER_VENDORS_OPTIONS, LaunchOptions, arch_target
from .launchers import INTERPRET, backend_for_launch, make_launcher
from .mock_tensor import MockTensor  # noqa: F401  (Triton's runtime.jit has it)
from .params import bind_arguments, kernel_params, var_positional
from .pickling import KernelReference, PicklesByReference
from .specialization import mangle_type, native_specialize_impl  # noqa: F401  (Triton's have them)
from .young_gc import young_collections_only


class JITFunction(JITSource, KernelInterface, Preloading, PicklesByReference):
    """A kernel in `naiad.language`: launchable on a grid, callable from other kernels."""

    def __init__(
        self,
        fn,
        *,
        version=None,
        repr=None,
        launch_metadata=None,
        do_not_specialize=None,
        do_not_specialize_on_alignment=None,
        debug=None,
        noinline=None,
        interpret=None,
    ):
        if not inspect.isfunction(fn):
            raise TypeError(f"@naiad.jit needs a Python function, got {type(fn).__name__}")
        fn = readable(fn)  # made by `exec`: its source found again (kernel_source.py)
        self.fn = fn
        self._reference = KernelReference.of(fn)
        self.__globals__ = fn.__globals__  # Triton's attribute: torch strips and restores it
        # Triton's record of the globals its compiles read, which libraries save and restore
        # (torch's Inductor, before pickling); Naiad keeps that record per compiled kernel
        # (`CompiledKernel.globals_used`) and checks it there.
        self.used_global_vals = {}
        functools.update_wrapper(self, fn)
        self.signature = inspect.signature(fn)
        self.params = kernel_params(
            fn, tuple(do_not_specialize or ()), tuple(do_not_specialize_on_alignment or ())
        )
        self.arg_names = [p.name for p in self.params]
        self._var_positional = var_positional(fn)
        self.params_by_name = {p.name: p for p in self.params}
        self._binder = None  # made at the first launch (binder.py); False: none possible
        self._launches: dict = {}  # launch key -> prepared launch (the hot path, binder.py)
        # Counts the times `_launches` was emptied: bound launches (bound_launch.py) keep one
        # prepared launch each and run it only while this is what it was when they kept it.
        self.launch_generation = 0
        self.debug = debug
        self.noinline = noinline
        self.interpret = interpret
        self.version = version
        self.do_not_specialize_on_alignment = tuple(do_not_specialize_on_alignment or ())
        self._repr = repr
        self.launch_metadata = launch_metadata
        self._interpreted = None
        self._entry = None  # what `kernel[grid]` calls (binder.make_entry), made at first use
        self._keyed_tensor = tensor_type()  # the torch.Tensor the binder and entry key inline
        self._launchers: dict = {}  # back end name -> its launcher for this kernel (launchers.py)
        self.pre_run_hooks: list = []  # called with each launch's arguments (launch_hooks.py)
        _ALL.add(self)
        self.__naiad_jit__ = True

    def launcher(self, backend):
        """This function's launcher on `backend` (made on first use; None: the back end only
        compiles)."""
        launcher = self._launchers.get(backend.name)
        if launcher is None:  # the first of threads launching at once makes the one kept
            launcher = self._launchers.setdefault(backend.name, make_launcher(self, backend))
        return launcher

    def forget_compiled(self) -> None:
        """Drop every compiled kernel and prepared launch of this function: the next launch
        compiles again (or loads from the disk cache), as in a new process."""
        for launcher in self._launchers.values():
            if launcher is not None:
                launcher.forget()
        self._launchers = {}
        self._forget_launches()

    def _forget_launches(self) -> None:
        """Empty the prepared launches, those that bound launches keep included."""
        self._launches.clear()
        self.launch_generation += 1

    # Setting `debug` or `interpret` drops the prepared launches, which were made under the old
    # value, so the hot path need not read them at every launch.
    @property
    def debug(self):
        return self._debug

    @debug.setter
    def debug(self, value):
        self._debug = value
        self._forget_launches()

    @property
    def interpret(self):
        return self._interpret

    @interpret.setter
    def interpret(self, value):
        self._interpret = value
        self._forget_launches()

    def __repr__(self):
        return f"JITFunction({self.fn.__module__}:{self.fn.__qualname__})"

    @property
    def reference(self) -> KernelReference:
        """Where the kernel is defined: its module, file, qualified name and line."""
        return self._reference

    def repr(self, specialization) -> str:
        """The compiled kernel's name for `specialization` (a `Specialization.view()`): the
        function's name, or what `jit(repr=f)`'s f makes of it (Triton's hook for naming each
        specialization apart in profiles and dumps)."""
        return self.__name__ if self._repr is None else str(self._repr(specialization))

    def interpreted(self):
        """The kernel's Python function rewritten for interpretation (made once, on first use)."""
        if self._interpreted is None:
            self._interpreted = rewrite(self.fn, kernel_runtime)
        return self._interpreted

    # -- calls from kernels -----------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if core._ACTIVE_SEMANTIC.get() is None:
            raise RuntimeError(
                f"Cannot call @naiad.jit'd function `{self.__name__}` outside of a "
                f"kernel; launch it with `{self.__name__}[grid](...)`"
            )
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        values = bound.arguments
        for p in self.params:
            if isinstance(values[p.name], core.dtype):  # a constexpr, as in Triton (`.value`)
                values[p.name] = core.constexpr(values[p.name])
            if p.is_constexpr and not isinstance(values[p.name], core.constexpr):
                # As in Triton, a callee's tl.constexpr annotation does not reject a tensor: the
                # tensor is passed as a value (the fused-attention tutorial passes `offs_m` so).
                if isinstance(values[p.name], core.tensor):
                    continue
                values[p.name] = core.constexpr(values[p.name])
        return self.interpreted()(*bound.args, **bound.kwargs)

    # -- launches --------------------------------------------------------------------------------
    def __getitem__(self, grid):
        """`kernel[grid](*args)`, as KernelInterface's, through the kernel's launch entry
        (binder.make_entry) instead of a wrapper per launch; through `run` while a hook is
        set (launch_hooks.py), which the entry's hot path would not call."""
        if self.pre_run_hooks or knobs.launch_hooks_set():
            return functools.partial(self.run, grid=grid)
        return functools.partial(self._entry or self._make_entry(), grid)

    def add_pre_run_hook(self, hook) -> None:
        """Call `hook(*args, **kwargs)` with the arguments of each launch, before it runs."""
        self.pre_run_hooks.append(hook)

    def bind_launch(self, varying, grid, *args, typed=(), described=(), **kwargs):
        """`launch(*values)`: this kernel's launch over `grid` with the arguments and options
        of the sample call `(*args, **kwargs)`, except the parameters named in `varying`,
        which each call passes, in that order; what `kernel[grid](...)` returns. Per call it
        checks only the varying arguments' facts (and the launch settings) and runs the
        launch prepared for them, skipping the launch entry's keying of every argument; any
        change takes the normal path (bound_launch.py). For libraries that decide a launch once
        per kind of call (naiad.ops); `typed` names the varying tensors whose dtype and device
        that kind fixes, which it then does not read; `described` the varying host
        descriptors each call passes as their tensors, the sample's fixing their geometry."""
        return bind_launch(self, varying, grid, args, kwargs, typed, described)

    def _make_entry(self):
        """The launch hot path as one generated function, `entry(grid, *args, **kwargs)`,
        made once (binder.make_entry); what it does not launch goes through `run`."""
        self._entry = make_entry(
            self, self.do_not_specialize_on_alignment, self._launches, knobs.traceback.get
        )
        return self._entry

    def _get_binder(self):
        """This kernel's binder (binder.py), made at its first launch through `run`; False
        when the kernel has none (every such launch takes the slow path)."""
        if self._binder is None:
            free = self.do_not_specialize_on_alignment
            self._binder = make_binder(self.params, free, with_arguments=True) or False
        return self._binder

    def _bind(self, args, kwargs) -> dict:
        """The launch's arguments by parameter name, defaults filled in (params.py)."""
        return bind_arguments(self.__name__, self.params, self._var_positional, args, kwargs)

    @staticmethod
    def _grid(grid, bound) -> tuple[int, int, int]:
        if callable(grid):
            grid = grid(dict(bound))
        return grid_dims(grid)

    def run(self, *args, grid, warmup=False, **kwargs):
        """Launch over `grid` and return the CompiledKernel that ran (None in the
        interpreter), as Triton's launch does; with `warmup=True`, compile for `target` (a
        keyword, unless the kernel has a parameter of that name, which then takes it) and
        return the CompiledKernel without running (the device of `target` need not be present).

        `kernel[grid](...)` keys its call in its own generated entry and comes here only when
        no prepared launch ran it; the autotuner and heuristics call `run` directly. Here
        too, the binder (binder.py) keys the call and a launch prepared under that key runs
        it. Anything else - a first launch, a new specialization, changed settings, the
        interpreter, debug mode, what the binder does not handle - takes the slow path below,
        which prepares the launch for the next call with the same key."""
        key = None
        target = None if "target" in self.params_by_name else kwargs.pop("target", None)
        arch = None if "arch" in self.params_by_name else kwargs.pop("arch", None)
        target = target or (arch and arch_target(arch))  # Triton's option, as a target
        if tensor_type() is not self._keyed_tensor:  # torch was imported since: key it inline
            self._keyed_tensor = tensor_type()
            self._binder = self._entry = None
            self._forget_launches()
        if self.pre_run_hooks and not warmup:
            launch_hooks.run_pre_run_hooks(self, args, kwargs)
        entered = None  # a hooked launch whose prepared launch declined (launch_hooks.py)
        if not warmup:
            binder = self._get_binder()
            if binder:
                try:
                    key, dims, values, arguments = binder(launch_settings(), grid, *args, **kwargs)
                    launch = self._launches.get(key)
                except (Unbound, TypeError):  # the slow path raises what is wrong, if anything
                    key = launch = None  # (TypeError: also an unhashable constexpr or option)
                if launch is not None:
                    if knobs.launch_hooks_set():
                        call = (launch, dims, values, arguments)
                        ran, entered = launch_hooks.around_prepared(self, call, args, kwargs)
                    else:
                        ran = launch(dims, values, arguments)
                    if ran:  # the CompiledKernel it ran (a prepared launch returns it)
                        return ran
                if key is not None:
                    grid = dims  # a callable grid is called once per launch
        return self._run_slow(args, kwargs, grid, warmup, target, key, entered)

    def _run_slow(self, args, kwargs, grid, warmup, target, key, entered=None):
        """Bind, choose the options, the back end and the specialization, and launch; prepare
        the launch under the binder's `key` for the hot path. The old generation's collections
        wait for its end (young_gc.py): its imports, compiles and loads would trigger them;
        `entered`: a hooked launch whose enter hook ran already (launch_hooks.py)."""
        with young_collections_only():
            for name in OTHER_VENDORS_OPTIONS & kwargs.keys() - self.params_by_name.keys():
                del kwargs[name]
            overridden = "ir_override" in kwargs and "ir_override" not in self.params_by_name
            override = kwargs.pop("ir_override") if overridden else None  # (ir_override.py)
            # A kernel parameter wins over a launch option of the same name (e.g. `num_stages`).
            options = LaunchOptions(
                **{
                    k: kwargs.pop(k)
                    for k in list(kwargs)
                    if k in OPTION_NAMES and k not in self.params_by_name
                }
            )
            bound = self._bind(args, kwargs)
            dims = self._grid(grid, bound)
            # The launch's `debug`, else the kernel's; NAIAD_DEBUG=1 turns it on either way,
            # as TRITON_DEBUG=1 does in Triton.
            asked = options.debug if options.debug is not None else self.debug
            debug = bool(asked) or knobs.debug.get()
            try:
                if warmup:
                    target, site = warmup_site(bound, target)
                    return compile_kernel(self, bound, target, bool(debug), options, site)
                check_arguments(self.__name__, self.params, bound)
                if 0 in dims:
                    return None
                prepared, kernel = launch_hooks.around(
                    self,
                    bound,
                    dims,
                    lambda: self._launch(bound, dims, options, bool(debug), override),
                    entered,
                )
            except CompileSkipped:  # the JIT cache hook's choice (jit_hooks.py)
                return None
            if prepared is not None and key is not None and not debug:
                self._launches[key] = prepared
            return kernel

    def _launch(self, bound: dict, dims, options, debug: bool, override=None):
        """Run on the back end of the arguments' device (launchers.py) unless the settings
        choose the interpreter; return the launch prepared for the hot path and the
        CompiledKernel that ran (None and None in the interpreter). With `override`, the
        kernel of that IR file runs instead (ir_override.py), never prepared."""
        if override is not None:
            return None, launch_from_file(self, override, bound, dims, options, debug)
        mode = compile_mode(self)
        backend, _ = backend_for_launch(bound)
        if mode is not None and backend is not None:
            launcher = self.launcher(backend)
            if launcher is not None:
                prepared = launcher.launch(bound, dims, options, debug, mode == "cpu")
                if prepared is not INTERPRET:
                    return prepared, launcher.compiled(bound, options, debug)
        rules = interpreter_rules(
            debug=debug or options.asserts,
            sanitize_overflow=options.sanitize_overflow,
            num_warps=options.num_warps,  # what `tl.extra.cuda.num_warps()` reads
        )
        run_grid(self, bound, dims, debug, rules)
        return None, None

    def warmup(self, *args, grid, **kwargs):
        """Compile the kernel for these arguments (arrays, torch dtypes or signature strings
        such as `'*fp16'`) and `target=` (or Triton's `arch='sm80'`) without running it.
        Without either, the target a launch with these arguments would use: their GPU's for
        CUDA tensors, 'cpu' for host arrays, the active driver's (the GPU where one is
        present, else 'cpu') for types alone. A kernel parameter named `target` (or `arch`)
        takes the keyword, as it does at a launch."""
        return self.run(*args, grid=grid, warmup=True, **kwargs)


# Every JIT function, so that adding a pass to the pipelines (passes/extensions.py) makes each
# compile again.
_ALL: weakref.WeakSet = weakref.WeakSet()


def _forget_all_compiled() -> None:
    for function in list(_ALL):
        function.forget_compiled()
    forget_ir_overrides()  # their files compile through the pipelines too


pipeline_listeners.append(_forget_all_compiled)


def jit(
    fn=None,
    *,
    version=None,
    repr=None,
    launch_metadata=None,
    do_not_specialize=None,
    do_not_specialize_on_alignment=None,
    debug=None,
    noinline=None,
    interpret=None,
):
    """Decorate a kernel: `@naiad.jit` or `@naiad.jit(debug=True, ...)`."""

    def decorator(f):
        return JITFunction(
            f,
            version=version,
            repr=repr,
            launch_metadata=launch_metadata,
            do_not_specialize=do_not_specialize,
            do_not_specialize_on_alignment=do_not_specialize_on_alignment,
            debug=debug,
            noinline=noinline,
            interpret=interpret,
        )

    return decorator if fn is None else decorator(fn)
