"""The structured ops whose loops and maps follow from their operands (LinalgStructuredOps.td):
`linalg.map`, `linalg.reduce`, `linalg.broadcast`, `linalg.transpose`. Upstream prints each
with a C++ printer (`custom_syntax`, linalg/syntax.py):

    %mapped = linalg.map ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>)
      (%in: f32, %in_0: f32) { ... linalg.yield %v : f32 }
    %reduced = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%i : tensor<4xf32>) dimensions = [1]
      (%in: f32, %init: f32) { ... }
    %broadcasted = linalg.broadcast ins(%x : tensor<8xf32>) outs(%e : tensor<4x8xf32>)
      dimensions = [0]
    %transposed = linalg.transpose ins(%x : tensor<4x8xf32>) outs(%e : tensor<8x4xf32>)
      permutation = [1, 0]

Broadcast and transpose only copy elements: upstream's implicit body (`linalg.yield %in`) is
left out, as the text leaves it out.
"""

from __future__ import annotations

import itertools

from ...ir import (
    DYNAMIC,
    Block,
    Operation,
    RecursiveMemoryEffects,
    Region,
    SingleBlock,
    attribute,
    irdl_op,
    operand,
    region,
    var_operand,
    var_result,
)
from ...ir.affine import AffineMap
from ..base import conditional_traits, fail
from ..view_like import DenseI64ArrayAttr, i64_array
from .base import (
    AnyRankedTensor,
    LinalgOp,
    TensorOrMemRef,
    buffer_effects,
    tensor_types,
    verify_body,
    verify_destination_style,
)


def _check_sorted(op, name: str) -> None:
    values = op.attributes[name].values
    if any(a >= b for a, b in itertools.pairwise(values)):
        fail(
            op,
            f"attribute '{name}' failed to satisfy constraint: i64 dense array attribute should "
            "be in increasing order",
        )


@conditional_traits(buffer_effects)
@irdl_op
class MapOp(Operation):
    """`init[i] = mapper(inputs[0][i], inputs[1][i], ...)` for every index `i`."""

    name = "linalg.map"
    traits = frozenset({LinalgOp, RecursiveMemoryEffects, SingleBlock})
    inputs = var_operand(TensorOrMemRef)
    init = operand(TensorOrMemRef)
    result_tensors = var_result(AnyRankedTensor)
    mapper = region(single_block=True)
    custom_syntax = True

    def __init__(self, inputs, init, **fields):
        """The mapper block takes one argument per input, of its element type."""
        inputs = list(inputs)
        fields.setdefault("result_tensors", tensor_types([init]))
        fields.setdefault("mapper", Region([Block([v.type.element_type for v in inputs])]))
        super().__init__(inputs, init, **fields)

    @property
    def body(self) -> Block:
        return self.mapper.blocks[0]

    @property
    def inits(self) -> tuple:
        return (self.init,)

    @property
    def num_loops(self) -> int:
        return self.init.type.rank

    def maps(self) -> list:
        return [AffineMap.identity(self.num_loops)] * len(self.operands)

    def yield_types(self) -> list:
        return [self.init.type.element_type]

    def verify_(self) -> None:
        verify_destination_style(self, self.inits)
        block = self.mapper.entry_block
        if block is None:
            fail(self, "expects a mapper block")
        arity = len(block.arguments)
        if len(self.inputs) != arity:
            fail(
                self,
                "expects number of operands to match the arity of mapper, but got: "
                f"{len(self.inputs)} and {arity}",
            )
        for arg, value in zip(block.arguments, self.inputs):
            if arg.type is not value.type.element_type:
                fail(
                    self,
                    f"expected element type of input '{value.type.element_type}' to match "
                    f"bbArg type '{arg.type}'",
                )
        shape = self.init.type.shape
        for value in self.inputs:
            if value.type.shape != shape:
                fail(
                    self,
                    f"expected shape of input ({_dims(value.type.shape)}) to match shape of "
                    f"output ({_dims(shape)})",
                )
        verify_body(self, block, [v.type for v in self.inputs], "input")


@conditional_traits(buffer_effects)
@irdl_op
class ReduceOp(Operation):
    """Reduce `inputs` along `dimensions` into `inits` with the combiner, whose block takes
    the input elements then the accumulated init elements."""

    name = "linalg.reduce"
    traits = frozenset({LinalgOp, RecursiveMemoryEffects, SingleBlock})
    # Upstream's `inputs` and `inits` groups are always the same size (SameVariadicOperandSize,
    # no segment attribute): one group here, split in halves.
    inputs_and_inits = var_operand(TensorOrMemRef)
    dimensions = attribute(DenseI64ArrayAttr)
    result_tensors = var_result(AnyRankedTensor)
    combiner = region(single_block=True)
    custom_syntax = True

    def __init__(self, inputs, inits, dimensions, **fields):
        inputs, inits = list(inputs), list(inits)
        fields.setdefault("result_tensors", tensor_types(inits))
        elements = [v.type.element_type for v in inputs + inits]
        fields.setdefault("combiner", Region([Block(elements)]))
        super().__init__(inputs + inits, dimensions=i64_array(dimensions), **fields)

    @property
    def body(self) -> Block:
        return self.combiner.blocks[0]

    @property
    def inputs(self) -> tuple:
        values = self.inputs_and_inits
        return values[: len(values) // 2]

    @property
    def inits(self) -> tuple:
        values = self.inputs_and_inits
        return values[len(values) // 2 :]

    @property
    def num_loops(self) -> int:
        return self.inputs[0].type.rank

    def maps(self) -> list:
        identity = AffineMap.identity(self.num_loops)
        reduced = identity.drop_results(self.dimensions.values)
        return [identity] * len(self.inputs) + [reduced] * len(self.inits)

    def yield_types(self) -> list:
        return [v.type.element_type for v in self.inits]

    def verify_(self) -> None:
        if not self.inputs_and_inits or len(self.inputs_and_inits) % 2:
            fail(self, "expects as many inputs as inits, and at least one of each")
        _check_sorted(self, "dimensions")
        verify_destination_style(self, self.inits)
        for what, group in (("inputs", self.inputs), ("outputs", self.inits)):
            for i, value in enumerate(group[1:], 1):
                if value.type.shape != group[0].type.shape:
                    noun = what[:-1]
                    fail(
                        self,
                        f"expects all {what} to have the same shapes. Shape at {noun}-index "
                        f"{i} is not equal to the shape at {noun}-index 0.",
                    )
        input_shape = self.inputs[0].type.shape
        init_shape = self.inits[0].type.shape
        rank = len(input_shape)
        dims = self.dimensions.values
        if any(d < 0 or d >= rank for d in dims):
            fail(self, f"dimensions for reduction should be in the range [0, {rank - 1}].")
        kept = [size for d, size in enumerate(input_shape) if d not in dims]
        if len(kept) != len(init_shape):
            fail(
                self,
                f"number of dimensions after reduction {len(kept)} doesn't match the init rank "
                f"{len(init_shape)}",
            )
        if tuple(kept) != init_shape:
            fail(
                self,
                f"init dimensions [{_dims(init_shape)}] doesn't match input dimensions "
                f"after reduction [{_dims(kept)}]",
            )
        block = self.combiner.entry_block
        if block is None or len(block.arguments) != len(self.operands):
            fail(self, "mismatching number of operands and block arguments")
        for kind, group, args in (
            ("input", self.inputs, block.arguments[: len(self.inputs)]),
            ("output", self.inits, block.arguments[len(self.inputs) :]),
        ):
            for value, arg in zip(group, args):
                if arg.type is not value.type.element_type:
                    fail(
                        self,
                        f"{kind} element type '{value.type.element_type}' does not match "
                        f"corresponding block argument type '{arg.type}'",
                    )
        verify_body(self, block, [v.type for v in self.operands])


@conditional_traits(buffer_effects)
@irdl_op
class BroadcastOp(Operation):
    """Copy `input` into `init`, repeating it along the init `dimensions` it lacks."""

    name = "linalg.broadcast"
    traits = frozenset({LinalgOp})
    input = operand(TensorOrMemRef)
    init = operand(TensorOrMemRef)
    dimensions = attribute(DenseI64ArrayAttr)
    result_tensors = var_result(AnyRankedTensor)
    custom_syntax = True

    def __init__(self, input, init, dimensions, **fields):
        fields.setdefault("result_tensors", tensor_types([init]))
        super().__init__(input, init, dimensions=i64_array(dimensions), **fields)

    @property
    def inputs(self) -> tuple:
        return (self.input,)

    @property
    def inits(self) -> tuple:
        return (self.init,)

    @property
    def num_loops(self) -> int:
        return self.init.type.rank

    def maps(self) -> list:
        identity = AffineMap.identity(self.num_loops)
        return [identity.drop_results(self.dimensions.values), identity]

    def verify_(self) -> None:
        _check_sorted(self, "dimensions")
        verify_destination_style(self, self.inits)
        dims = self.dimensions.values
        input_shape, init_shape = self.input.type.shape, self.init.type.shape
        if len(input_shape) + len(dims) != len(init_shape):
            fail(
                self,
                "input rank plus added dimensions does not match init rank. input rank: "
                f"{len(input_shape)}, dimensions size: {len(dims)}, init rank: {len(init_shape)}",
            )
        for i, d in enumerate(dims):
            if d < 0 or d >= len(init_shape):
                fail(
                    self,
                    f"dimension {i} is out of range. expected range: [0, {len(init_shape) - 1}]"
                    f", got: {d}",
                )
        kept = [d for d in range(len(init_shape)) if d not in dims]
        for input_dim, init_dim in enumerate(kept):
            if input_shape[input_dim] != init_shape[init_dim]:
                fail(
                    self,
                    f"input dim {input_dim} should match init dim {init_dim}. input: "
                    f"{input_shape[input_dim]}, init: {init_shape[init_dim]}",
                )


@conditional_traits(buffer_effects)
@irdl_op
class TransposeOp(Operation):
    """`init` is `input` with its dimensions permuted: `init.dim(i) = input.dim(perm[i])`."""

    name = "linalg.transpose"
    traits = frozenset({LinalgOp})
    input = operand(TensorOrMemRef)
    init = operand(TensorOrMemRef)
    permutation = attribute(DenseI64ArrayAttr)
    result_tensors = var_result(AnyRankedTensor)
    custom_syntax = True

    def __init__(self, input, init, permutation, **fields):
        fields.setdefault("result_tensors", tensor_types([init]))
        super().__init__(input, init, permutation=i64_array(permutation), **fields)

    @property
    def inputs(self) -> tuple:
        return (self.input,)

    @property
    def inits(self) -> tuple:
        return (self.init,)

    @property
    def num_loops(self) -> int:
        return self.init.type.rank

    def maps(self) -> list:
        return [AffineMap.identity(self.num_loops), AffineMap.permutation(self.permutation.values)]

    def verify_(self) -> None:
        verify_destination_style(self, self.inits)
        perm = self.permutation.values
        if sorted(perm) != list(range(len(perm))):
            fail(self, "permutation is not valid")
        input_shape, init_shape = self.input.type.shape, self.init.type.shape
        rank = len(input_shape)
        if rank != len(init_shape):
            fail(self, f"input rank {rank} does not match init rank {len(init_shape)}")
        if rank != len(perm):
            fail(self, f"size of permutation {len(perm)} does not match the argument rank {rank}")
        for i, p in enumerate(perm):
            if input_shape[p] != init_shape[i]:
                fail(
                    self,
                    f"dim(result, {i}) = {init_shape[i]} doesn't match dim(input, "
                    f"permutation[{i}]) = {input_shape[p]}",
                )


def _dims(shape) -> str:
    """A shape as upstream's diagnostics print an ArrayRef (`4, 8`; dynamic as `?`)."""
    return ", ".join("?" if d == DYNAMIC else str(d) for d in shape)
