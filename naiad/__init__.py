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
from .passes.extensions import add_pass, added_pass, remove_pass  # noqa: F401
from .runtime.allocator import set_allocator  # noqa: F401
from .runtime.autotuner import Autotuner, Config, autotune  # noqa: F401
from .runtime.heuristics import Heuristics, heuristics  # noqa: F401
from .runtime.host_arrays import TensorWrapper, reinterpret  # noqa: F401
from .runtime.jit import JITFunction, jit  # noqa: F401
from .runtime.kernel_interface import KernelInterface  # noqa: F401
from .utils import cdiv, next_power_of_2  # noqa: F401

__version__ = versions.NAIAD

# NAIAD_AS_TRITON=1 (which `python -m naiad.run` exports): switch on as naiad is imported.
install_from_environment()
