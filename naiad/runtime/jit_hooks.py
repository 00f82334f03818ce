"""Triton's JIT hooks: functions a program sets (`triton.knobs.runtime.jit_cache_hook`,
`jit_post_compile_hook`; Naiad's settings NAIAD_JIT_CACHE_HOOK, NAIAD_JIT_POST_COMPILE_HOOK)
that a JIT function calls when it compiles a specialization it has not loaded: at a launch
or a `warmup`, not when the kernel is found in memory. Libraries use them to record what a
program compiles (its `specialization_data`, which `JITFunction.preload` compiles again in a
later run) and to compile ahead of time without launching: a cache hook that returns a true
value skips the compile, and the launch or warmup returns None.

Each hook is called with Triton's keyword arguments: `key` (the specialization's), `repr`
(the kernel's name, options and argument types), `fn` (a JitFunctionInfo), `compile` (the
signature, device, constexprs, the options by name, `configs`, `specialization_data`,
`is_warmup`), `is_manual_warmup` and `already_compiled`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .. import knobs
from . import specialization_data
from .launchers import backend_for_launch


class CompileSkipped(Exception):
    """The JIT cache hook asked to skip this compile: the launch or warmup returns None."""


@dataclass(frozen=True)
class CompileSite:
    """Who compiles: a launch or a warmup, for `device` ('cpu', or a GPU's index)."""

    device: object
    warmup: bool = False


@dataclass(frozen=True)
class JitFunctionInfo:
    """The `fn` a hook is given: the kernel's module, its qualified name and the JIT function."""

    module: str
    name: str
    jit_function: object


def before_compile(jit_function, spec, target: str, options, site: CompileSite) -> dict | None:
    """Call the cache hook, if one is set, before `jit_function` compiles `spec`; return the
    arguments the post-compile hook is to get (None: no hook is set).

    Raises:
        CompileSkipped: the cache hook returned a true value.
    """
    cache_hook = knobs.jit_cache_hook.get()
    if cache_hook is None and knobs.jit_post_compile_hook.get() is None:
        return None
    arguments = _arguments(jit_function, spec, target, options, site)
    if cache_hook is not None and cache_hook(**arguments):
        raise CompileSkipped(jit_function.__name__)
    return arguments


def after_compile(arguments: dict | None) -> None:
    """Call the post-compile hook, if one is set, with what `before_compile` gave."""
    hook = knobs.jit_post_compile_hook.get()
    if arguments is not None and hook is not None:
        hook(**arguments)


def warmup_site(bound: dict, target) -> tuple[str, CompileSite]:
    """The target `warmup()` compiles for (`target`, else the one a launch with `bound`
    would use: jit.py's `warmup`), and the warmup's site: its device 'cpu' or a GPU's index."""
    backend, index = backend_for_launch(bound)
    if target is None:
        if backend is None:
            raise ValueError("no back end runs on the device of these arguments")
        target = backend.device_target(index)
    return target, CompileSite("cpu" if str(target).startswith("cpu") else index, warmup=True)


def _arguments(jit_function, spec, target: str, options, site: CompileSite) -> dict:
    fn = jit_function.fn
    named_options = dataclasses.asdict(options)
    named_options["extern_libs"] = options.extern_libs
    types = ", ".join(f"{name}: {value}" for name, value in spec.signature.items())
    shown = ", ".join(f"{name}={named_options[name]}" for name in _SHOWN_OPTIONS)
    compile_arguments = {
        "signature": dict(spec.signature),
        "device": site.device,
        "constants": dict(spec.constexprs),
        **named_options,
        "configs": [dict(spec.attrs)],
        "specialization_data": specialization_data.dumps(jit_function, spec, target, options),
        "is_warmup": site.warmup,
    }
    return {
        "key": spec.key,
        "repr": f"{fn.__qualname__}[{shown}]({types})",
        "fn": JitFunctionInfo(fn.__module__, fn.__qualname__, jit_function),
        "compile": compile_arguments,
        "is_manual_warmup": site.warmup,
        "already_compiled": False,
    }


_SHOWN_OPTIONS = ("num_warps", "num_ctas", "num_stages", "enable_fp_fusion")
