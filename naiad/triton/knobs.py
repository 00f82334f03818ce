"""`triton.knobs` while Naiad stands in for Triton: Triton's groups of settings (`runtime`,
`compilation`, `autotuning`, `cache`, ...), each knob read and set as Triton's are.

    triton.knobs.runtime.interpret = True      # is NAIAD_INTERPRET: the interpreter runs kernels
    triton.knobs.autotuning.print              # NAIAD_PRINT_AUTOTUNING (or TRITON_PRINT_AUTOTUNING)
    with triton.knobs.runtime.scope():         # what the block sets is undone after it
        ...

A knob that Naiad has is Naiad's setting itself (naiad/knobs.py): reading it gives Naiad's
value, setting it sets Naiad's (`knobs.set_override`), and its environment variable is its
`TRITON_*` twin. A knob Naiad has no use for keeps a value that nothing reads, from its
environment variable or as set. The hooks and listeners are Naiad's settings
(runtime/jit_hooks.py, launch_hooks.py, compile_listener.py, autotune_report.py).
"""

from __future__ import annotations

import contextlib
import copy as _copy
import sys
import types

from .. import knobs as naiad_knobs
from ..runtime.compile_listener import CompileTimes  # noqa: F401  (Triton's knobs has it)
from ..runtime.launch_hooks import HookChain

_TRUE = {"1", "true", "yes", "on"}


class env_knob:
    """One knob: Triton's environment variable `key`, and Naiad's setting where it maps."""

    def __init__(self, key: str, default=None, kind=str, naiad=None, refuses_functions=""):
        self.key, self.default, self.kind, self.naiad = key, default, kind, naiad
        self.refuses_functions = refuses_functions  # the feature, when Naiad would not call it
        self.name = key

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, group, owner=None):
        if group is None:
            return self
        if self.naiad is not None:
            return self.naiad.get()
        if self.name in group._values:
            return group._values[self.name]
        return self._from_environment()

    def __set__(self, group, value) -> None:
        if self.refuses_functions and value is not None:
            raise NotImplementedError(
                f"triton.knobs: {self.refuses_functions} are not supported by Naiad "
                "(see docs/compat.md)"
            )
        if self.naiad is not None:
            naiad_knobs.set_override(self.naiad.env, value)
        else:
            group._values[self.name] = value

    def reset(self, group) -> None:
        if self.naiad is not None:
            naiad_knobs.set_override(self.naiad.env, None)
        group._values.pop(self.name, None)

    def _from_environment(self):
        text = naiad_knobs.read_environment(self.key)
        if text is None or text == "":
            return self.default
        if self.kind is bool:
            return text.strip().lower() in _TRUE
        return self.kind(text)


class hook_chain_knob(env_knob):
    """A launch hook: Naiad's setting, a HookChain when read unset (so that `.add(f)` works,
    as in Triton's main), or one function as set (as in Triton 3.3)."""

    def __init__(self, naiad, reversed: bool = False):
        super().__init__("", None, naiad=naiad)
        self.reversed = reversed

    def __get__(self, group, owner=None):
        if group is None:
            return self
        value = self.naiad.get()
        if value is None:
            value = HookChain(reversed=self.reversed)
            naiad_knobs.set_override(self.naiad.env, value)
        return value


class listener_knob(env_knob):
    """The compilation listener: Naiad's setting holds an adapter that hands the listener
    Triton's ASTSource for Naiad's CompiledSource; reading the knob gives the listener."""

    def __init__(self):
        super().__init__("", None, naiad=naiad_knobs.compilation_listener)

    def __get__(self, group, owner=None):
        if group is None:
            return self
        adapter = self.naiad.get()
        return getattr(adapter, "listener", adapter)

    def __set__(self, group, value) -> None:
        adapter = None if value is None else _TritonListener(value)
        naiad_knobs.set_override(self.naiad.env, adapter)


class _TritonListener:
    """Calls `listener` with Triton's ASTSource in place of Naiad's CompiledSource."""

    def __init__(self, listener):
        self.listener = listener

    def __call__(self, *, src, **rest):
        from .compiler.compiler import ASTSource

        source = ASTSource(src.fn, src.signature, src.constants, src.attrs)
        return self.listener(src=source, **rest)


class base_knobs:
    """A group of knobs (Triton's name): `copy()`, `reset()`, `scope()`, `knob_descriptors`."""

    def __init__(self):
        self._values: dict = {}
        self._naiad_settings: dict = {}  # the Naiad settings to restore when put back (copy)

    @property
    def knob_descriptors(self) -> dict[str, env_knob]:
        found = {}
        for cls in reversed(type(self).__mro__):
            found.update({k: v for k, v in vars(cls).items() if isinstance(v, env_knob)})
        return found

    @property
    def knobs(self) -> dict:
        return {name: getattr(self, name) for name in self.knob_descriptors}

    def copy(self):
        """A twin with this group's values. Triton's test fixture (`fresh_knobs`) puts the
        twin in this group's place (`triton.knobs.runtime = twin.reset()`) and this group back
        after the test. The knobs that are Naiad's settings live in Naiad, not in the group, so
        the group notes their values now, and putting it back restores them (_KnobsModule):
        an `override_arch` a test set does not outlive the test."""
        twin = _copy.copy(self)
        twin._values = dict(self._values)
        twin._naiad_settings = {}
        self._naiad_settings = {
            knob.naiad.env: naiad_knobs.current_override(knob.naiad.env)
            for knob in self.knob_descriptors.values()
            if knob.naiad is not None
        }
        return twin

    def _put_back(self) -> None:
        for env, value in self._naiad_settings.items():
            naiad_knobs.set_override(env, value)

    def reset(self):
        for knob in self.knob_descriptors.values():
            knob.reset(self)
        return self

    @contextlib.contextmanager
    def scope(self):
        """Undo, after the block, what it set on this group (Naiad's settings included)."""
        saved_values = dict(self._values)
        try:
            with naiad_knobs.override():  # restores every Naiad setting set since
                yield self
        finally:
            self._values = saved_values


class runtime_knobs(base_knobs):
    interpret = env_knob("TRITON_INTERPRET", False, bool, naiad_knobs.interpret)
    debug = env_knob("TRITON_DEBUG", False, bool, naiad_knobs.debug)
    override_arch = env_knob("TRITON_OVERRIDE_ARCH", None, str, naiad_knobs.cuda_arch)
    launch_enter_hook = hook_chain_knob(naiad_knobs.launch_enter_hook)
    launch_exit_hook = hook_chain_knob(naiad_knobs.launch_exit_hook, reversed=True)
    kernel_load_start_hook = hook_chain_knob(naiad_knobs.kernel_load_start_hook)
    kernel_load_end_hook = hook_chain_knob(naiad_knobs.kernel_load_end_hook)
    jit_cache_hook = env_knob("", None, naiad=naiad_knobs.jit_cache_hook)
    jit_post_compile_hook = env_knob("", None, naiad=naiad_knobs.jit_post_compile_hook)
    add_stages_inspection_hook = env_knob("", refuses_functions="stage hooks")


class compilation_knobs(base_knobs):
    always_compile = env_knob("TRITON_ALWAYS_COMPILE", False, bool, naiad_knobs.always_compile)
    dump_ir = env_knob("TRITON_KERNEL_DUMP", False, bool)
    override = env_knob("TRITON_KERNEL_OVERRIDE", False, bool)
    store_binary_only = env_knob("TRITON_STORE_BINARY_ONLY", False, bool)
    front_end_debugging = env_knob("TRITON_FRONT_END_DEBUGGING", False, bool)
    disable_line_info = env_knob(
        "TRITON_DISABLE_LINE_INFO", False, bool, naiad_knobs.disable_line_info
    )
    dump_ir_extract_di_local_variables = env_knob(
        "LLVM_EXTRACT_DI_LOCAL_VARIABLES", False, bool, naiad_knobs.extract_di_local_variables
    )
    listener = listener_knob()


class autotuning_knobs(base_knobs):
    print = env_knob("TRITON_PRINT_AUTOTUNING", False, bool, naiad_knobs.print_autotuning)
    cache = env_knob("TRITON_CACHE_AUTOTUNING", False, bool)
    listener = env_knob("", None, naiad=naiad_knobs.autotuning_listener)


class cache_knobs(base_knobs):
    dir = env_knob("TRITON_CACHE_DIR", "", str, naiad_knobs.cache_dir)
    dump_dir = env_knob("TRITON_DUMP_DIR", "")  # Triton's dumps; NAIAD_DUMP_DIR is not the same
    override_dir = env_knob("TRITON_OVERRIDE_DIR", "")
    home_dir = env_knob("TRITON_HOME", "")


class language_knobs(base_knobs):
    fp32_default = env_knob("TRITON_F32_DEFAULT")
    default_fp_fusion = env_knob(
        "TRITON_DEFAULT_FP_FUSION", True, bool, naiad_knobs.default_fp_fusion
    )


class nvidia_knobs(base_knobs):
    libdevice_path = env_knob("TRITON_LIBDEVICE_PATH")
    mock_ptx_version = env_knob("TRITON_MOCK_PTX_VERSION")
    dump_ptxas_log = env_knob("TRITON_DUMP_PTXAS_LOG", False, bool)


class amd_knobs(base_knobs):
    pass


class build_knobs(base_knobs):
    backend_dirs = env_knob("")


class proton_knobs(base_knobs):
    disable = env_knob("TRITON_PROTON_DISABLE", False, bool)


runtime = runtime_knobs()
compilation = compilation_knobs()
autotuning = autotuning_knobs()
cache = cache_knobs()
language = language_knobs()
nvidia = nvidia_knobs()
amd = amd_knobs()
build = build_knobs()
proton = proton_knobs()


def refresh_knobs() -> None:
    """Read `runtime.debug` and `runtime.override_arch` from the environment again (Triton's
    helper, for a test that changes TRITON_DEBUG in its process): what a program set for
    them is dropped."""
    runtime.debug = None
    runtime.override_arch = None


class _KnobsModule(types.ModuleType):
    """This module, whose groups restore their Naiad settings when set back in place."""

    def __setattr__(self, name: str, value) -> None:
        if isinstance(value, base_knobs) and self.__dict__.get(name) is not value:
            value._put_back()
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _KnobsModule
