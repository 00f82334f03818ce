"""Naiad: a Python-native, Triton-compatible compiler for block-level kernels.

import naiad
import naiad.language as tl

@naiad.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)
"""

from . import (  # noqa: F401
    language,
    testing,
    tools,
    versions,
)
from .as_triton import install_as_triton, install_from_environment, uninstall_as_triton  # noqa: F401
from .errors import (  # noqa: F401
    CompilationError,
    CompileTimeAssertionFailure,
    InterpreterError,
    NaiadError,
    OutOfResources,
    UnsupportedLanguageConstruct,
)
from .language.aggregates import aggregate  # noqa: F401
from .language.core import constexpr_function, must_use_result  # noqa: F401
from .runtime.allocator import set_allocator  # noqa: F401
from .runtime.autotuner import Autotuner, Config, autotune  # noqa: F401
from .runtime.heuristics import Heuristics, heuristics  # noqa: F401
from .runtime.host_arrays import TensorWrapper, reinterpret  # noqa: F401
from .runtime.jit import JITFunction, jit  # noqa: F401
from .runtime.kernel_interface import KernelInterface  # noqa: F401
from .utils import cdiv, next_power_of_2  # noqa: F401

__version__ = versions.NAIAD

# Names whose modules load on first use: the passes (and the dialects they import) are the
# compiler's, which a program the interpreter runs first need not wait for at `import naiad`.
_LATER = {name: "naiad.passes.extensions" for name in ("add_pass", "added_pass", "remove_pass")}


def __getattr__(name: str):
    if name in _LATER:
        import importlib

        value = getattr(importlib.import_module(_LATER[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'naiad' has no attribute {name!r}")


# NAIAD_AS_TRITON=1 (which `python -m naiad.run` exports): switch on as naiad is imported.
install_from_environment()
