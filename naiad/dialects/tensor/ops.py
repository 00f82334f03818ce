"""The element and whole-tensor ops of `tensor` (TensorOps.td): empty, extract, insert,
from_elements, splat, dim, cast, bitcast, generate (and its yield), concat.

    %e = tensor.empty(%n) : tensor<?x4xf32>
    %x = tensor.extract %t[%i, %j] : tensor<4x4xf32>
    %u = tensor.insert %x into %t[%i, %j] : tensor<4x4xf32>
    %c = tensor.concat dim(0) %a, %b : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<5x4xf32>

Every format is upstream's; only `tensor.generate`'s body needs a builder: its block takes one
index per dimension and ends in `tensor.yield` of an element.
"""

from __future__ import annotations

from ...ir import (
    DYNAMIC,
    AnyType,
    Block,
    Constraint,
    FloatType,
    HasParent,
    IndexType,
    IntegerAttr,
    IntegerType,
    Operation,
    Pure,
    RankedTensorType,
    RecursiveMemoryEffects,
    Region,
    ReturnLike,
    SingleBlock,
    Terminator,
    attribute,
    i64,
    index,
    irdl_op,
    operand,
    region,
    result,
    var_operand,
)
from ..base import I64Attr, Index, check_type, fail
from ..view_like import dim_text, split_mixed

AnyRankedTensor = Constraint(
    "ranked tensor of any type values", lambda t: isinstance(t, RankedTensorType)
)
AnyNon0RankedTensor = Constraint(
    "non-0-ranked or unranked tensor",
    lambda t: isinstance(t, RankedTensorType) and t.rank > 0,
)
AnyStaticShapeTensor = Constraint(
    "statically shaped tensor of any type values",
    lambda t: isinstance(t, RankedTensorType) and t.has_static_shape,
)
IntIndexOrFloat = Constraint(
    "integer/index/float type", lambda t: isinstance(t, IntegerType | IndexType | FloatType)
)


def shape_text(shape) -> str:
    return "x".join(dim_text(d) for d in shape)


def _check_dynamic_sizes(op, values, t: RankedTensorType) -> None:
    expected = sum(1 for d in t.shape if d == DYNAMIC)
    if len(values) != expected:
        fail(op, f"incorrect number of dynamic sizes, has {len(values)}, expected {expected}")


@irdl_op
class EmptyOp(Operation):
    """A tensor of the result's shape whose contents are unspecified: a destination to
    write into. One index operand per dynamic dimension."""

    name = "tensor.empty"
    traits = frozenset({Pure})
    dynamicSizes = var_operand(Index)  # the ODS name
    result = result(AnyRankedTensor)
    assembly_format = "`(`$dynamicSizes`)` attr-dict `:` type($result)"

    def __init__(self, sizes, element_type=None, **fields):
        """`EmptyOp(tensor_type, [dynamic sizes])` or `EmptyOp([4, %n], f32)`: sizes are
        ints and index values (the dynamic dimensions)."""
        if isinstance(sizes, RankedTensorType):
            dynamic = list(element_type or ())
            fields.setdefault("result", sizes)
        else:
            static, dynamic = split_mixed(sizes)
            fields.setdefault("result", RankedTensorType(static.values, element_type))
        super().__init__(dynamic, **fields)

    def verify_(self) -> None:
        _check_dynamic_sizes(self, self.dynamicSizes, self.result.type)


@irdl_op
class ExtractOp(Operation):
    """The element of `tensor` at `indices`."""

    name = "tensor.extract"
    traits = frozenset({Pure})
    tensor = operand(AnyRankedTensor)
    indices = var_operand(Index)
    result = result(AnyType)
    assembly_format = "$tensor `[` $indices `]` attr-dict `:` type($tensor)"
    type_inference = (("result", "tensor", lambda t: t.element_type),)

    def __init__(self, tensor, indices, **fields):
        fields.setdefault("result", tensor.type.element_type)
        super().__init__(tensor, list(indices), **fields)

    def verify_(self) -> None:
        t = self.tensor.type
        check_type(
            self, self.result.type, t.element_type, "result type matches element type of tensor"
        )
        if len(self.indices) != t.rank:
            fail(self, "incorrect number of indices for extract_element")


@irdl_op
class InsertOp(Operation):
    """`dest` with the element at `indices` replaced by `scalar`."""

    name = "tensor.insert"
    traits = frozenset({Pure})
    scalar = operand(AnyType)
    dest = operand(AnyRankedTensor)
    indices = var_operand(Index)
    result = result(AnyRankedTensor)
    assembly_format = "$scalar `into` $dest `[` $indices `]` attr-dict `:` type($dest)"
    type_inference = (("result", "dest", None), ("scalar", "dest", lambda t: t.element_type))

    def __init__(self, scalar, dest, indices, **fields):
        fields.setdefault("result", dest.type)
        super().__init__(scalar, dest, list(indices), **fields)

    def verify_(self) -> None:
        t = self.dest.type
        check_type(self, self.result.type, t, "result type matches type of dest")
        check_type(
            self, self.scalar.type, t.element_type, "scalar type matches element type of dest"
        )
        if len(self.indices) != t.rank:
            fail(self, "incorrect number of indices")


@irdl_op
class FromElementsOp(Operation):
    """A static tensor from its elements, row-major."""

    name = "tensor.from_elements"
    traits = frozenset({Pure})
    elements = var_operand()
    result = result(AnyStaticShapeTensor)
    assembly_format = "$elements attr-dict `:` type($result)"
    type_inference = (("elements", "result", lambda t: t.element_type),)

    def __init__(self, elements, shape=None, **fields):
        """The result is `tensor<N x T>` of the N elements, or has the given `shape`."""
        elements = list(elements)
        if shape is None:
            shape = (len(elements),)
        fields.setdefault("result", RankedTensorType(shape, elements[0].type))
        super().__init__(elements, **fields)

    def verify_(self) -> None:
        t = self.result.type
        if t.has_static_shape and (
            len(self.elements) != t.numel
            or any(v.type is not t.element_type for v in self.elements)
        ):
            fail(self, "failed to verify that operand types match result element type")


@irdl_op
class SplatOp(Operation):
    """A tensor whose every element is `input`; one index operand per dynamic dimension."""

    name = "tensor.splat"
    traits = frozenset({Pure})
    input = operand(IntIndexOrFloat)
    dynamicSizes = var_operand(Index)
    aggregate = result(AnyRankedTensor)
    assembly_format = "$input (`[` $dynamicSizes^ `]`)? attr-dict `:` type($aggregate)"
    type_inference = (("input", "aggregate", lambda t: t.element_type),)

    def __init__(self, input, result_type, dynamic_sizes=(), **fields):
        super().__init__(input, list(dynamic_sizes), aggregate=result_type, **fields)

    def verify_(self) -> None:
        t = self.aggregate.type
        check_type(
            self, self.input.type, t.element_type, "operand type matches element type of result"
        )
        _check_dynamic_sizes(self, self.dynamicSizes, t)


@irdl_op
class DimOp(Operation):
    """The size of dimension `index` of `source`."""

    name = "tensor.dim"
    traits = frozenset({Pure})
    source = operand(AnyNon0RankedTensor)
    index = operand(Index)
    result = result(Index)
    assembly_format = "attr-dict $source `,` $index `:` type($source)"
    type_inference = (("result", "source", lambda _: index),)

    def __init__(self, source, dim, **fields):
        """`dim`: an index value (upstream's builder from an int makes the constant)."""
        super().__init__(source, dim, result=index, **fields)


def _shapes_compatible(a, b) -> bool:
    """MLIR's verifyCompatibleShape: same rank, equal where both are static."""
    return len(a) == len(b) and all(x == y or DYNAMIC in (x, y) for x, y in zip(a, b))


class _CastBase(Operation):
    traits = frozenset({Pure})
    source = operand(AnyRankedTensor)
    dest = result(AnyRankedTensor)
    assembly_format = "$source attr-dict `:` type($source) `to` type($dest)"

    def __init__(self, source, result_type, **fields):
        super().__init__(source, dest=result_type, **fields)

    def compatible(self, a: RankedTensorType, b: RankedTensorType) -> bool:
        raise NotImplementedError

    def verify_(self) -> None:
        a, b = self.source.type, self.dest.type
        if not self.compatible(a, b):
            fail(self, f"operand type '{a}' and result type '{b}' are cast incompatible")


@irdl_op
class CastOp(_CastBase):
    """The same tensor with more or less static shape information."""

    name = "tensor.cast"

    def compatible(self, a, b) -> bool:
        return a.element_type is b.element_type and _shapes_compatible(a.shape, b.shape)


@irdl_op
class BitcastOp(_CastBase):
    """The same bits read as another element type of the same width."""

    name = "tensor.bitcast"

    def compatible(self, a, b) -> bool:
        widths = [getattr(t.element_type, "width", None) for t in (a, b)]
        return (
            None not in widths and widths[0] == widths[1] and _shapes_compatible(a.shape, b.shape)
        )


@irdl_op
class GenerateOp(Operation):
    """A tensor whose element at each index is what the body yields for that index; one
    index operand per dynamic dimension."""

    name = "tensor.generate"
    traits = frozenset({RecursiveMemoryEffects, SingleBlock})
    dynamicExtents = var_operand(Index)
    result = result(AnyRankedTensor)
    body = region(single_block=True)
    assembly_format = "$dynamicExtents $body attr-dict `:` type($result)"

    def __init__(self, result_type, dynamic_extents=(), **fields):
        """The body block takes one index per dimension of `result_type`."""
        fields.setdefault("body", Region([Block([index] * result_type.rank)]))
        super().__init__(list(dynamic_extents), result=result_type, **fields)

    @property
    def block(self) -> Block:
        return self.body.blocks[0]

    def verify_(self) -> None:
        t = self.result.type
        if len(self.dynamicExtents) != sum(1 for d in t.shape if d == DYNAMIC):
            fail(self, "must have as many index operands as dynamic extents in the result type")
        block = self.body.entry_block
        if block is None:
            fail(self, "expects a body block")
        if any(not isinstance(a.type, IndexType) for a in block.arguments):
            fail(self, "all body arguments must be index")
        if len(block.arguments) != t.rank:
            fail(self, "must have one body argument per input dimension")
        last = block.last_op
        if not isinstance(last, YieldOp) or last.value.type is not t.element_type:
            fail(
                self, "body must be terminated with a `yield` operation of the tensor element type"
            )


@irdl_op
class YieldOp(Operation):
    """The end of a `tensor.generate` body: the element for the current index."""

    name = "tensor.yield"
    traits = frozenset({Pure, Terminator, ReturnLike, HasParent("tensor.generate", "tensor.pad")})
    value = operand()
    assembly_format = "$value attr-dict `:` type($value)"


@irdl_op
class ConcatOp(Operation):
    """`inputs` joined along dimension `dim`; the others must agree."""

    name = "tensor.concat"
    traits = frozenset({Pure})
    dim = attribute(I64Attr)
    inputs = var_operand(AnyRankedTensor)
    result = result(AnyRankedTensor)
    assembly_format = "`dim` `(` $dim `)` $inputs attr-dict `:` functional-type(operands, results)"

    def __init__(self, dim, inputs, result_type=None, **fields):
        """The result type is inferred (upstream's ConcatOp::inferResultType) unless given."""
        inputs = list(inputs)
        if result_type is None:
            result_type = concat_type(int(dim), [v.type for v in inputs])
        super().__init__(inputs, dim=IntegerAttr(int(dim), i64), result=result_type, **fields)

    def verify_(self) -> None:
        types = [v.type for v in self.inputs]
        t = self.result.type
        if not types:
            fail(self, "requires at least one input")
        if any(x.rank != t.rank for x in types):
            fail(self, "rank of concatenated inputs must match result rank")
        if any(x.element_type is not t.element_type for x in types):
            fail(self, "inputs and result element type must match")
        dim = self.dim.value
        if dim >= t.rank:
            fail(self, "concatenation dim must be less than the tensor rank")
        for i in range(t.rank):
            if i != dim and len({x.shape[i] for x in types} - {DYNAMIC}) > 1:
                fail(
                    self, f"static concatenation size mismatch along non-concatenated dimension {i}"
                )
        inferred = concat_type(dim, types)
        if not _shapes_compatible(inferred.shape, t.shape):
            fail(self, f"result type '{t}'does not match inferred shape '{inferred}' static sizes")


def concat_type(dim: int, types) -> RankedTensorType:
    """The concatenation of tensors of `types` along `dim`: sizes summed there (DYNAMIC if
    one is), elsewhere the static size any input has."""
    first = types[0]
    shape = []
    for i in range(first.rank):
        sizes = [t.shape[i] for t in types]
        if i == dim:
            shape.append(DYNAMIC if DYNAMIC in sizes else sum(sizes))
        else:
            static = [s for s in sizes if s != DYNAMIC]
            shape.append(static[0] if static else DYNAMIC)
    return RankedTensorType(shape, first.element_type)
