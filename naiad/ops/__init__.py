"""naiad.ops: PyTorch's ATen operators written in Naiad, for the CPU and CUDA.

    import naiad.ops
    naiad.ops.enable()                 # every op below, process-wide
    with naiad.ops.use(include=["softmax"]):
        ...                            # only these, for the block
    naiad.ops.softmax(x, dim=-1)       # or call one directly

Elementwise ops come from one facility (`pointwise/`: a scalar function written in the language
becomes a kernel for any arity, broadcast, strides and dtype); reductions see their operand as
rows (`reduce/`); normalizations are row kernels or composed of both (`normalization/`);
attention is flash kernels (`attention/`); random ops draw from Philox (`random.py`); matmul,
linear and cross_entropy are composed of the others (`composed.py`).
Importing this package imports torch; `import naiad` alone never does.
"""

from . import (
    activations,
    arith,
    attention,
    compare,
    convert,
    indexing,
    linalg,
    nn,
    normalization,
    random,
    reduce,
    select,
    unary,
)
from .activations import *  # noqa: F403
from .arith import *  # noqa: F403
from .attention import *  # noqa: F403
from .compare import *  # noqa: F403
from .convert import *  # noqa: F403
from .dtypes import Unsupported
from .graph_entries import install
from .indexing import *  # noqa: F403
from .linalg import *  # noqa: F403
from .multinomial import multinomial
from .nn import *  # noqa: F403
from .normalization import *  # noqa: F403
from .pointwise import user_pointwise as pointwise
from .random import *  # noqa: F403
from .reduce import *  # noqa: F403
from .select import *  # noqa: F403
from .switch import disable, enable, registered, use
from .unary import *  # noqa: F403

__all__ = [
    "Unsupported",
    "disable",
    "enable",
    "multinomial",
    "pointwise",
    "registered",
    "use",
    *activations.__all__,
    *arith.__all__,
    *attention.__all__,
    *compare.__all__,
    *convert.__all__,
    *indexing.__all__,
    *linalg.__all__,
    *nn.__all__,
    *normalization.__all__,
    *random.__all__,
    *reduce.__all__,
    *select.__all__,
    *unary.__all__,
]

# Each op's entry point: a custom-op call while compiling, the plain function in eager calls
# (graph_breaks.py, graph_entries.py); the switch's controls stay plain functions.
install(
    globals(),
    [
        name
        for name in __all__
        if name not in ("Unsupported", "disable", "enable", "registered", "use", "pointwise")
    ],
)

# Ops composed of the entry points just installed (composed.py): dynamo traces them through.
from . import composed  # noqa: E402
from .composed import *  # noqa: E402, F403

__all__ += composed.__all__
