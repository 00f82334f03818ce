"""The `linalg` dialect: structured ops on tensors and memrefs, what the middle layer lowers
TTIR to and the CPU back end turns into loops. One namespace over its modules:

- linalg/base.py: iterator types (`#linalg.iterator_type<parallel>`) and the rules every
  structured op follows (destination-passing style, one affine map per operand);
- linalg/generic.py: `linalg.generic`, `linalg.yield`, `linalg.index`;
- linalg/structured.py: `linalg.map`, `linalg.reduce`, `linalg.broadcast`, `linalg.transpose`;
- linalg/named.py: `linalg.fill`, `linalg.matmul`, `linalg.batch_matmul`, `linalg.copy`.

    from . import linalg
    linalg.GenericOp([x], [init], [AffineMap.identity(1)] * 2, ["parallel"])
    linalg.ReduceOp([x], [acc], dimensions=[1])
"""

from .base import (  # noqa: F401
    PARALLEL,
    REDUCTION,
    IteratorTypeAttr,
    LinalgOp,
    indexing_maps_attr,
    iterator_types_attr,
)
from .generic import GenericOp, IndexOp, YieldOp  # noqa: F401
from .named import BatchMatmulOp, CopyOp, FillOp, MatmulOp  # noqa: F401
from .structured import BroadcastOp, MapOp, ReduceOp, TransposeOp  # noqa: F401
