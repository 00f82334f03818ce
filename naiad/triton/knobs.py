"""`triton.knobs` while Naiad stands in for Triton: Triton's groups of settings (`runtime`,
`compilation`, `autotuning`, `cache`, ...), each knob read and set as Triton's are, and the
kinds of knob programs declare their own groups with (knob_kinds.py: `env_str`, `env_bool`,
`base_knobs`, `propagate_env`, `env`).

    triton.knobs.runtime.interpret = True      # is NAIAD_INTERPRET: the interpreter runs kernels
    triton.knobs.autotuning.print              # NAIAD_PRINT_AUTOTUNING (or TRITON_PRINT_AUTOTUNING)
    with triton.knobs.runtime.scope():         # what the block sets is undone after it
        ...

A knob that Naiad has is Naiad's setting itself (`naiad_knob`; naiad/knobs.py): reading it
gives Naiad's value, setting it sets Naiad's (`knobs.set_override`) and, as in Triton, its
environment variable, the `TRITON_*` twin. The other knobs keep a value that nothing in Naiad
reads, from their variable or as set; docs/compat.md lists them. The hooks and listeners are
Naiad's settings (runtime/jit_hooks.py, launch_hooks.py, compile_listener.py,
autotune_report.py).
"""

from __future__ import annotations

import os
import sys
import types

from .. import knobs as naiad_knobs
from ..runtime.compile_listener import CompileTimes  # noqa: F401  (Triton's knobs has it)
from ..runtime.launch_hooks import HookChain
from .knob_kinds import (  # noqa: F401  (Triton's knobs has them all)
    PROPAGATE,
    Env,
    base_knobs,
    env,
    env_base,
    env_bool,
    env_class,
    env_int,
    env_opt_bool,
    env_opt_str,
    env_str,
    env_str_callable_default,
    propagate,
)
from .nvidia_tools import NvidiaTool, env_nvidia_tool  # noqa: F401

propagate_env = True  # _KnobsModule keeps knob_kinds.PROPAGATE in step


class naiad_knob(env_base):
    """A knob that is Naiad's `setting`; `unset()` gives its value where the setting is empty
    (Triton's default: None for a path, a folder under TRITON_HOME)."""

    def __init__(self, key: str, setting, unset=None):
        super().__init__(key)
        self.setting, self.unset = setting, unset

    def __get__(self, group, owner=None):
        if group is None:
            return self
        value = self.setting.get()
        if value == "" and self.unset is not None:
            return self.unset()
        return value

    def __set__(self, group, value) -> None:
        if isinstance(value, Env):
            value = None  # back to the environment: the variable stays as it is
        else:
            propagate(self.key, value)
        naiad_knobs.set_override(self.setting.env, value)

    def __delete__(self, group) -> None:
        naiad_knobs.set_override(self.setting.env, None)


class hook_chain_knob(naiad_knob):
    """A launch hook: Naiad's setting, a HookChain when read unset (so that `.add(f)` works,
    as in Triton's main), or one function as set (as in Triton 3.3)."""

    def __init__(self, setting, reversed: bool = False):
        super().__init__("", setting)
        self.reversed = reversed

    def __get__(self, group, owner=None):
        if group is None:
            return self
        value = self.setting.get()
        if value is None:
            value = HookChain(reversed=self.reversed)
            naiad_knobs.set_override(self.setting.env, value)
        return value


class listener_knob(naiad_knob):
    """The compilation listener: Naiad's setting holds an adapter that hands the listener
    Triton's ASTSource for Naiad's CompiledSource; reading the knob gives the listener."""

    def __init__(self):
        super().__init__("", naiad_knobs.compilation_listener)

    def __get__(self, group, owner=None):
        if group is None:
            return self
        adapter = self.setting.get()
        return getattr(adapter, "listener", adapter)

    def __set__(self, group, value) -> None:
        adapter = None if value is None or isinstance(value, Env) else _TritonListener(value)
        naiad_knobs.set_override(self.setting.env, adapter)


class unsupported_hook(env_base):
    """A hook Naiad would never call: None is its only value (setting a function raises)."""

    def __init__(self, feature: str):
        super().__init__("")
        self.feature = feature

    def get(self):
        return None

    def __set__(self, group, value) -> None:
        if value is not None and not isinstance(value, Env):
            raise NotImplementedError(
                f"triton.knobs: {self.feature} are not supported by Naiad (see docs/compat.md)"
            )


class _TritonListener:
    """Calls `listener` with Triton's ASTSource in place of Naiad's CompiledSource."""

    def __init__(self, listener):
        self.listener = listener

    def __call__(self, *, src, **rest):
        from .compiler.compiler import ASTSource

        source = ASTSource(src.fn, src.signature, src.constants, src.attrs)
        return self.listener(src=source, **rest)


def _home() -> str:
    return os.path.expanduser("~/")


def _under_home(folder: str):
    """The default of a folder knob: `<cache.home_dir>/.triton/<folder>`, read when asked."""
    return lambda: os.path.join(sys.modules[__name__].cache.home_dir, ".triton", folder)


def _cache_directory() -> str:
    from ..runtime.cache import default_directory

    return default_directory()


class runtime_knobs(base_knobs):
    interpret = naiad_knob("TRITON_INTERPRET", naiad_knobs.interpret)
    debug = naiad_knob("TRITON_DEBUG", naiad_knobs.debug)
    override_arch = naiad_knob("TRITON_OVERRIDE_ARCH", naiad_knobs.cuda_arch, lambda: None)
    launch_enter_hook = hook_chain_knob(naiad_knobs.launch_enter_hook)
    launch_exit_hook = hook_chain_knob(naiad_knobs.launch_exit_hook, reversed=True)
    kernel_load_start_hook = hook_chain_knob(naiad_knobs.kernel_load_start_hook)
    kernel_load_end_hook = hook_chain_knob(naiad_knobs.kernel_load_end_hook)
    jit_cache_hook = naiad_knob("", naiad_knobs.jit_cache_hook)
    jit_post_compile_hook = naiad_knob("", naiad_knobs.jit_post_compile_hook)
    add_stages_inspection_hook = unsupported_hook("stage hooks")


class compilation_knobs(base_knobs):
    always_compile = naiad_knob("TRITON_ALWAYS_COMPILE", naiad_knobs.always_compile)
    dump_ir = naiad_knob("TRITON_KERNEL_DUMP", naiad_knobs.kernel_dump)
    front_end_debugging = naiad_knob("TRITON_FRONT_END_DEBUGGING", naiad_knobs.traceback)
    disable_line_info = naiad_knob("TRITON_DISABLE_LINE_INFO", naiad_knobs.disable_line_info)
    dump_ir_extract_di_local_variables = naiad_knob(
        "LLVM_EXTRACT_DI_LOCAL_VARIABLES", naiad_knobs.extract_di_local_variables
    )
    listener = listener_knob()
    # Kept, read by nothing in Naiad (docs/compat.md).
    override = env_bool("TRITON_KERNEL_OVERRIDE")
    store_binary_only = env_bool("TRITON_STORE_BINARY_ONLY")
    use_ir_loc = env_opt_str("USE_IR_LOC")
    enable_asan = env_bool("TRITON_ENABLE_ASAN")
    allow_non_constexpr_globals = env_bool("TRITON_ALLOW_NON_CONSTEXPR_GLOBALS")
    fpsan_homomorphic_casts = env_bool("TRITON_FPSAN_HOMOMORPHIC_CASTS")
    instrumentation_mode = ""


class autotuning_knobs(base_knobs):
    print = naiad_knob("TRITON_PRINT_AUTOTUNING", naiad_knobs.print_autotuning)
    cache = naiad_knob("TRITON_CACHE_AUTOTUNING", naiad_knobs.cache_autotuning)
    listener = naiad_knob("", naiad_knobs.autotuning_listener)


class cache_knobs(base_knobs):
    home_dir = naiad_knob("TRITON_HOME", naiad_knobs.triton_home, _home)
    dir = naiad_knob("TRITON_CACHE_DIR", naiad_knobs.cache_dir, _cache_directory)
    dump_dir = naiad_knob("TRITON_DUMP_DIR", naiad_knobs.triton_dump_dir, _under_home("dump"))
    # Kept, read by nothing in Naiad: its cache is its own (docs/cache.md).
    override_dir = env_str_callable_default("TRITON_OVERRIDE_DIR", _under_home("override"))
    manager_class = env_class("TRITON_CACHE_MANAGER", "CacheManager")
    remote_manager_class = env_class("TRITON_REMOTE_CACHE_BACKEND", "RemoteCacheBackend")


class language_knobs(base_knobs):
    default_fp_fusion = naiad_knob("TRITON_DEFAULT_FP_FUSION", naiad_knobs.default_fp_fusion)
    fp32_default = env_opt_str("TRITON_F32_DEFAULT")  # kept, read by nothing in Naiad


class nvidia_knobs(base_knobs):
    """Kept, read by nothing in Naiad: its PTX is linked by the driver or nvJitLink, libdevice
    comes from the nvidia-nvvm wheel (docs/compat.md). The tools are found where installed
    (nvidia_tools.py), for programs that run them."""

    ptxas = env_nvidia_tool("ptxas")
    ptxas_blackwell = env_nvidia_tool("ptxas-blackwell", installed="ptxas")
    nvdisasm = env_nvidia_tool("nvdisasm")
    cuobjdump = env_nvidia_tool("cuobjdump")
    dump_nvptx = env_bool("NVPTX_ENABLE_DUMP")
    disable_ptxas_opt = env_bool("DISABLE_PTXAS_OPT")
    ptxas_options = env_opt_str("PTXAS_OPTIONS")
    mock_ptx_version = env_opt_str("TRITON_MOCK_PTX_VERSION")
    dump_ptxas_log = env_bool("TRITON_DUMP_PTXAS_LOG")
    libdevice_path = env_opt_str("TRITON_LIBDEVICE_PATH")
    libcuda_path = env_opt_str("TRITON_LIBCUDA_PATH")


class amd_knobs(base_knobs):
    """AMD's back end's knobs: kept, read by nothing (Naiad has no AMD back end)."""

    use_buffer_ops = env_bool("AMDGCN_USE_BUFFER_OPS", True)
    use_buffer_atomics = env_bool("AMDGCN_USE_BUFFER_ATOMICS", True)
    buffer_ops_analyze_small_tensor_range = env_bool("AMDGCN_ANALYZE_SMALL_TENSOR_RANGE")
    dump_amdgcn = env_bool("AMDGCN_ENABLE_DUMP")
    libhip_path = env_opt_str("TRITON_LIBHIP_PATH")
    use_block_pingpong = env_opt_bool("TRITON_HIP_USE_BLOCK_PINGPONG")
    use_in_thread_transpose = env_opt_bool("TRITON_HIP_USE_IN_THREAD_TRANSPOSE")
    use_async_copy = env_opt_bool("TRITON_HIP_USE_ASYNC_COPY")
    scalarize_packed_fops = env_bool("AMDGCN_SCALARIZE_PACKED_FOPS")


class build_knobs(base_knobs):
    """Triton's C build of its launchers: kept, read by nothing (Naiad builds no C)."""

    cc = env_opt_str("CC")
    cudacrt_path = env_opt_str("TRITON_CUDACRT_PATH")
    cudart_path = env_opt_str("TRITON_CUDART_PATH")
    impl = None

    @property
    def backend_dirs(self) -> set[str]:
        return {path for path in (self.cudacrt_path, self.cudart_path) if path is not None}


class redis_knobs(base_knobs):
    """A remote cache's address: kept, read by nothing (Naiad's cache is on disk)."""

    key_format = env_str("TRITON_REDIS_KEY_FORMAT", "triton:{key}:{filename}")
    host = env_str("TRITON_REDIS_HOST", "localhost")
    port = env_int("TRITON_REDIS_PORT", 6379)


class proton_knobs(base_knobs):
    disable = env_bool("TRITON_PROTON_DISABLE")


runtime = runtime_knobs()
compilation = compilation_knobs()
autotuning = autotuning_knobs()
cache = cache_knobs()
language = language_knobs()
nvidia = nvidia_knobs()
amd = amd_knobs()
build = build_knobs()
redis = redis_knobs()
proton = proton_knobs()


def refresh_knobs() -> None:
    """Read `runtime.debug` and `runtime.override_arch` from the environment again (Triton's
    helper, for a test that changes TRITON_DEBUG in its process): what a program set for
    them is dropped."""
    del runtime.debug
    del runtime.override_arch


class _KnobsModule(types.ModuleType):
    """This module: its groups restore their Naiad settings when set back in place, and
    `propagate_env` is what the knobs read."""

    def __setattr__(self, name: str, value) -> None:
        if isinstance(value, base_knobs) and self.__dict__.get(name) is not value:
            value.put_back()
        if name == "propagate_env":
            PROPAGATE[0] = bool(value)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _KnobsModule
