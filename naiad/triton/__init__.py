"""What `import triton` gives while Naiad stands in for Triton (naiad.install_as_triton): Triton's
top-level names, each Naiad's own object (`triton.jit is naiad.jit`), and the submodules
`triton.language`, `triton.runtime`, `triton.compiler`, ... (as_triton.py says which Naiad
module each one is).

`triton.__version__` is the Triton release whose API Naiad follows (libraries gate features on
it); Naiad's own version is `naiad.__version__`. Triton's names Naiad does not have raise an
AttributeError that names them.
"""

from .. import errors, language, testing, tools  # noqa: F401
from ..errors import (  # noqa: F401
    CompilationError,
    InterpreterError,
    OutOfResources,
    TritonError,
)
from ..language.aggregates import aggregate  # noqa: F401
from ..language.core import constexpr_function, must_use_result  # noqa: F401
from ..runtime.allocator import set_allocator  # noqa: F401
from ..runtime.autotuner import Config, autotune, heuristics  # noqa: F401
from ..runtime.host_arrays import TensorWrapper, reinterpret  # noqa: F401
from ..runtime.jit import JITFunction, jit  # noqa: F401
from ..runtime.kernel_interface import KernelInterface  # noqa: F401
from ..runtime.mock_tensor import MockTensor  # noqa: F401
from ..utils import cdiv, next_power_of_2  # noqa: F401
from ..versions import TRITON
from . import _C, _utils, backends, compiler, knobs, runtime  # noqa: F401
from .compiler import compile  # noqa: F401
from .missing import missing_names

# The Triton release whose public API this module follows.
__version__ = TRITON

__getattr__ = missing_names(
    "triton",
    {
        "AsyncCompileMode": "asynchronous compilation",
        "FutureKernel": "asynchronous compilation",
    },
)
