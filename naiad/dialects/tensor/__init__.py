"""The `tensor` dialect: values that are whole tensors, read and built element by element or
slice by slice; what the middle layer's tensor form of a kernel is made of. One namespace over
its modules:

- tensor/ops.py: empty, extract, insert, from_elements, splat, dim, cast, bitcast, generate
  (and its yield), concat;
- tensor/slicing.py: extract_slice, insert_slice (mixed static and dynamic offsets, sizes and
  strides; rank-reducing slices);
- tensor/reshape.py: collapse_shape, expand_shape, reshape.

    from . import tensor
    tensor.EmptyOp([16, n], f32)                      # tensor<16x?xf32>, n an index value
    tensor.ExtractSliceOp(t, [0, i], [4, n], [1, 1])  # result type inferred
"""

from .ops import (  # noqa: F401
    BitcastOp,
    CastOp,
    ConcatOp,
    DimOp,
    EmptyOp,
    ExtractOp,
    FromElementsOp,
    GenerateOp,
    InsertOp,
    SplatOp,
    YieldOp,
    concat_type,
)
from .reshape import CollapseShapeOp, ExpandShapeOp, ReshapeOp  # noqa: F401
from .slicing import ExtractSliceOp, InsertSliceOp, rank_reduction_mask, slice_type  # noqa: F401
