"""`triton.runtime` while Naiad stands in for Triton: the runtime's names Triton re-exports here,
each Naiad's own; `triton.runtime.jit`, `.autotuner`, `.driver` and `.errors` are Naiad's
runtime/jit.py, runtime/autotuner.py, runtime/driver.py and errors.py themselves."""

from ... import errors  # noqa: F401  (`triton.runtime.errors` as an attribute, as Triton's)
from ...errors import InterpreterError, OutOfResources  # noqa: F401
from ...runtime import autotuner, driver, jit  # noqa: F401  (attributes after `import triton`)
from ...runtime.autotuner import Autotuner, Config, Heuristics, autotune, heuristics  # noqa: F401
from ...runtime.host_arrays import TensorWrapper, reinterpret  # noqa: F401
from ...runtime.jit import JITFunction  # noqa: F401
from ...runtime.kernel_interface import KernelInterface  # noqa: F401
from ...runtime.mock_tensor import MockTensor  # noqa: F401
from ..missing import missing_names

__getattr__ = missing_names(
    "triton.runtime",
    {
        "RemoteCacheBackend": "a remote compile cache",
        "RedisRemoteCacheBackend": "a remote compile cache",
    },
)
