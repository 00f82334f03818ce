"""The named structured ops the middle layer emits (LinalgNamedStructuredOps.yaml,
LinalgStructuredOps.td): `linalg.fill`, `linalg.matmul`, `linalg.batch_matmul`, `linalg.copy`.

Each is a `linalg.generic` with fixed maps, iterators and body, printed as upstream prints
named ops (`custom_syntax`, linalg/syntax.py):

    %0 = linalg.fill ins(%cst : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
    %1 = linalg.matmul ins(%a, %b : tensor<16x8xf32>, tensor<8x32xf32>)
           outs(%0 : tensor<16x32xf32>) -> tensor<16x32xf32>
    linalg.copy ins(%src : memref<16xf32>) outs(%dst : memref<16xf32>)

Upstream builds their body (a multiply-add, a copy) when it reads them; here the body stays
implicit, as in the text: `maps()` and `iterators` say what the op computes. Operands of
another element type than the output's are cast to it, as upstream's `cast_signed` does.
"""

from __future__ import annotations

from typing import ClassVar

from ...ir import Operation, irdl_op, var_operand, var_result
from ...ir.affine import AffineMap, dim
from ..base import conditional_traits, fail
from .base import (
    AnyRankedTensor,
    LinalgOp,
    TensorOrMemRef,
    buffer_effects,
    is_shaped,
    iterator_types_attr,
    tensor_types,
    verify_destination_style,
    verify_indexing,
)


class NamedStructuredOp(Operation):
    """A named op: `ins(...)`, `outs(...)`, results the tensor outputs' new values."""

    traits = frozenset({LinalgOp})
    inputs = var_operand()
    outputs = var_operand(TensorOrMemRef)
    result_tensors = var_result(AnyRankedTensor)
    custom_syntax = True
    iterators: ClassVar[tuple[str, ...]] = ()

    def __init__(self, inputs, outputs, result_types=None, **fields):
        outputs = list(outputs)
        if result_types is None:
            result_types = tensor_types(outputs)
        super().__init__(list(inputs), outputs, result_tensors=list(result_types), **fields)

    @property
    def inits(self) -> tuple:
        return self.outputs

    @property
    def num_loops(self) -> int:
        return len(self.iterators)

    @property
    def iterator_types(self):
        """The loops, as `linalg.generic` would spell them."""
        return iterator_types_attr(self.iterators)

    def maps(self) -> list[AffineMap]:
        raise NotImplementedError

    def verify_(self) -> None:
        verify_destination_style(self, self.outputs)
        verify_indexing(self, self.maps(), self.num_loops)


def _maps(rank: int, *results) -> list[AffineMap]:
    return [AffineMap(rank, 0, [dim(d) for d in r]) for r in results]


@conditional_traits(buffer_effects)
@irdl_op
class MatmulOp(NamedStructuredOp):
    """`C[m, n] += A[m, k] * B[k, n]`."""

    name = "linalg.matmul"
    iterators = ("parallel", "parallel", "reduction")

    def maps(self) -> list[AffineMap]:
        return _maps(3, (0, 2), (2, 1), (0, 1))


@conditional_traits(buffer_effects)
@irdl_op
class BatchMatmulOp(NamedStructuredOp):
    """`C[b, m, n] += A[b, m, k] * B[b, k, n]`."""

    name = "linalg.batch_matmul"
    iterators = ("parallel", "parallel", "parallel", "reduction")

    def maps(self) -> list[AffineMap]:
        return _maps(4, (0, 1, 3), (0, 3, 2), (0, 1, 2))


class _Elementwise(NamedStructuredOp):
    """A named op with one parallel loop per output dimension."""

    @property
    def num_loops(self) -> int:
        outputs = self.outputs
        return outputs[0].type.rank if outputs and is_shaped(outputs[0].type) else 0

    @property
    def iterator_types(self):
        return iterator_types_attr(["parallel"] * self.num_loops)


@conditional_traits(buffer_effects)
@irdl_op
class FillOp(_Elementwise):
    """Every element of the output set to the scalar input."""

    name = "linalg.fill"

    def maps(self) -> list[AffineMap]:
        rank = self.num_loops
        return [AffineMap(rank, 0, []), AffineMap.identity(rank)]

    def verify_(self) -> None:
        for value in self.inputs:
            if is_shaped(value.type):
                fail(self, f"expected a scalar fill value, got {value.type}")
        super().verify_()


@conditional_traits(buffer_effects)
@irdl_op
class CopyOp(_Elementwise):
    """The output element by element from the input."""

    name = "linalg.copy"

    def maps(self) -> list[AffineMap]:
        return [AffineMap.identity(self.num_loops)] * 2
