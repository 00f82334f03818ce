"""`@naiad.jit`: a kernel function that can be launched as `kernel[grid](*args, **meta)`.

A launch binds the arguments (constexpr parameters included, with their defaults), separates the
launch options (`num_warps`, `num_stages`, ...), evaluates the grid and runs the kernel. Until a
compiled back end is present for the arguments' device, kernels run in the interpreter; with
`NAIAD_INTERPRET=1` or `@naiad.jit(interpret=True)` they always do.
"""

from __future__ import annotations

import functools
import inspect
import operator
from dataclasses import dataclass

from .. import knobs
from ..language import core
from .compiler import compile_kernel
from .cpu_launcher import launch_cpu
from .interpreter import kernel_runtime
from .interpreter.launch import run_grid
from .interpreter.rewrite import rewrite
from .kernel_interface import KernelInterface
from .params import kernel_params


@dataclass(frozen=True)
class LaunchOptions:
    """Options a launch may pass besides the kernel's own arguments (Triton's names)."""

    num_warps: int = 4
    num_stages: int = 3
    num_ctas: int = 1
    maxnreg: int | None = None
    debug: bool | None = None
    enable_fp_fusion: bool = True
    sanitize_overflow: bool = True
    launch_cooperative_grid: bool = False
    launch_pdl: bool = False
    extern_libs: dict | None = None

    def __post_init__(self):
        warps = self.num_warps
        if not isinstance(warps, int) or warps < 1 or warps & (warps - 1):
            raise ValueError(f"num_warps must be a power of 2, got {warps!r}")
        if not isinstance(self.num_stages, int) or self.num_stages < 0:
            raise ValueError(f"num_stages must be a non-negative int, got {self.num_stages!r}")
        if self.maxnreg is not None and (not isinstance(self.maxnreg, int) or self.maxnreg <= 0):
            raise ValueError(f"maxnreg must be a positive int or None, got {self.maxnreg!r}")


_OPTION_NAMES = frozenset(LaunchOptions.__dataclass_fields__)


class JITFunction(KernelInterface):
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
        self.fn = fn
        functools.update_wrapper(self, fn)
        self.signature = inspect.signature(fn)
        self.params = kernel_params(fn, tuple(do_not_specialize or ()))
        self.arg_names = [p.name for p in self.params]
        self.params_by_name = {p.name: p for p in self.params}
        self.debug = debug
        self.noinline = noinline
        self.interpret = interpret
        self.version = version
        self.do_not_specialize_on_alignment = tuple(do_not_specialize_on_alignment or ())
        self._repr = repr
        self.launch_metadata = launch_metadata
        self._interpreted = None
        self.__naiad_jit__ = True

    def __repr__(self):
        return f"JITFunction({self.fn.__module__}:{self.fn.__qualname__})"

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
            if p.is_constexpr and not isinstance(values[p.name], core.constexpr):
                # As in Triton, a callee's tl.constexpr annotation does not reject a tensor: the
                # tensor is passed as a value (the fused-attention tutorial passes `offs_m` so).
                if isinstance(values[p.name], core.tensor):
                    continue
                values[p.name] = core.constexpr(values[p.name])
        return self.interpreted()(**values)

    # -- launches --------------------------------------------------------------------------------
    def _bind(self, args, kwargs) -> dict:
        if len(args) > len(self.params):
            raise TypeError(
                f"{self.__name__}() takes {len(self.params)} arguments but {len(args)} were given"
            )
        bound = dict(zip(self.arg_names, args))
        for name, value in kwargs.items():
            if name not in self.arg_names:
                raise TypeError(f"{self.__name__}() got an unexpected keyword argument '{name}'")
            if name in bound:
                raise TypeError(f"{self.__name__}() got multiple values for argument '{name}'")
            bound[name] = value
        for p in self.params:
            if p.name not in bound:
                if not p.has_default:
                    raise TypeError(f"{self.__name__}() missing required argument '{p.name}'")
                bound[p.name] = p.default
        return {p.name: bound[p.name] for p in self.params}

    @staticmethod
    def _grid(grid, bound) -> tuple[int, int, int]:
        if callable(grid):
            grid = grid(dict(bound))
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

    def run(self, *args, grid, warmup=False, target=None, **kwargs):
        """Launch over `grid`; with `warmup=True`, compile for `target` and return the
        CompiledKernel instead (the device of `target` need not be present)."""
        # A kernel parameter wins over a launch option of the same name (e.g. `num_stages`).
        options = LaunchOptions(
            **{
                k: kwargs.pop(k)
                for k in list(kwargs)
                if k in _OPTION_NAMES and k not in self.params_by_name
            }
        )
        bound = self._bind(args, kwargs)
        dims = self._grid(grid, bound)
        debug = (
            options.debug
            if options.debug is not None
            else (self.debug if self.debug is not None else knobs.debug.get())
        )
        if warmup:
            return compile_kernel(self, bound, target, bool(debug))
        if 0 in dims:
            return None
        backend = _cpu_backend(self)
        if backend is None or not launch_cpu(self, bound, dims, bool(debug), backend == "cpu"):
            run_grid(self, bound, dims, bool(debug))
        return None

    def warmup(self, *args, grid, target=None, **kwargs):
        """Compile the kernel for these arguments (arrays, torch dtypes or signature strings
        such as `'*fp16'`) and `target` ('cuda:sm_90a' by default) without running it."""
        return self.run(*args, grid=grid, warmup=True, target=target, **kwargs)


def _cpu_backend(jit_function) -> str | None:
    """How a launch on host arrays runs: "cpu" (compiled, `NAIAD_BACKEND=cpu`: what the CPU
    back end cannot compile is an error), "auto" (the default: compiled, and in the interpreter
    with a warning when the kernel uses what the CPU back end does not compile yet), or None
    (the interpreter: `NAIAD_BACKEND=interpreter`, `NAIAD_INTERPRET=1`, `interpret=True`).
    Debug mode compiles too: asserts on and every access bounds-checked (docs/cpu.md). Arrays in
    GPU memory run in the interpreter until the GPU back end lands."""
    backend = knobs.backend.get().strip().lower() or "auto"
    if backend == "interpreter" or jit_function.interpret or knobs.interpret.get():
        return None
    if backend not in ("cpu", "auto"):
        raise ValueError(f"NAIAD_BACKEND={backend!r}: expected 'cpu', 'interpreter' or unset")
    return backend


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
