"""`linalg.generic`, `linalg.yield` and `linalg.index` (LinalgStructuredOps.td, LinalgOps.td).

`linalg.generic` is the general structured op: a loop nest (`iterator_types`), an affine map
per operand (`indexing_maps`) and a body computing the output elements from the input
elements. Upstream prints it with a C++ printer (`custom_syntax`, linalg/syntax.py):

    %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                         iterator_types = ["parallel"]}
           ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
         ^bb0(%in: f32, %out: f32):
           ...
           linalg.yield %v : f32
         } -> tensor<8xf32>

    op = GenericOp([x], [e], [AffineMap.identity(1)] * 2, ["parallel"])
    with builder.at_end(op.body): ...   # block arguments: the element types of x and e
"""

from __future__ import annotations

from ...ir import (
    Block,
    IntegerAttr,
    Operation,
    Pure,
    RecursiveMemoryEffects,
    Region,
    ReturnLike,
    SingleBlock,
    Terminator,
    attribute,
    i64,
    index,
    irdl_op,
    opt_attribute,
    region,
    result,
    var_operand,
    var_result,
)
from ..base import I64Attr, Index, StrAttr, conditional_traits, fail, str_attr
from .base import (
    AffineMapArrayAttr,
    AnyRankedTensor,
    IteratorTypeArrayAttr,
    LinalgOp,
    TensorOrMemRef,
    buffer_effects,
    element_or_self,
    indexing_maps_attr,
    iterator_types_attr,
    tensor_types,
    verify_body,
    verify_destination_style,
    verify_indexing,
)


@conditional_traits(buffer_effects)
@irdl_op
class GenericOp(Operation):
    """A loop nest over `iterator_types`, reading `inputs` and updating `outputs` element by
    element through the body, each operand indexed by its map in `indexing_maps`."""

    name = "linalg.generic"
    traits = frozenset({LinalgOp, RecursiveMemoryEffects, SingleBlock})
    inputs = var_operand()
    outputs = var_operand(TensorOrMemRef)
    indexing_maps = attribute(AffineMapArrayAttr)
    iterator_types = attribute(IteratorTypeArrayAttr)
    doc = opt_attribute(StrAttr)
    library_call = opt_attribute(StrAttr)
    result_tensors = var_result(AnyRankedTensor)
    region = region(single_block=True)
    custom_syntax = True

    def __init__(
        self,
        inputs,
        outputs,
        indexing_maps,
        iterator_types,
        result_types=None,
        *,
        doc=None,
        library_call=None,
        **fields,
    ):
        """`indexing_maps`: AffineMaps (or attributes), one per input then output;
        `iterator_types`: names or attributes. Results default to the tensor outputs'
        types; the body block is made with the operands' element types as arguments."""
        inputs, outputs = list(inputs), list(outputs)
        if result_types is None:
            result_types = tensor_types(outputs)
        if "region" not in fields:
            fields["region"] = Region([Block([element_or_self(v.type) for v in inputs + outputs])])
        super().__init__(
            inputs,
            outputs,
            indexing_maps=indexing_maps_attr(indexing_maps),
            iterator_types=iterator_types_attr(iterator_types),
            doc=None if doc is None else str_attr(doc),
            library_call=None if library_call is None else str_attr(library_call),
            result_tensors=list(result_types),
            **fields,
        )

    @property
    def body(self) -> Block:
        return self.region.blocks[0]

    @property
    def inits(self) -> tuple:
        return self.outputs

    @property
    def num_loops(self) -> int:
        return len(self.iterator_types)

    def maps(self) -> list:
        """The indexing maps as AffineMaps, one per operand."""
        return [m.value for m in self.indexing_maps]

    def yield_types(self) -> list:
        return [element_or_self(v.type) for v in self.outputs]

    def verify_(self) -> None:
        verify_destination_style(self, self.outputs)
        verify_indexing(self, self.maps(), self.num_loops)
        verify_body(self, self.region.entry_block, [v.type for v in self.operands])


@irdl_op
class YieldOp(Operation):
    """The end of a structured op's body: the new value of each output element."""

    name = "linalg.yield"
    traits = frozenset({Pure, Terminator, ReturnLike})
    values = var_operand()
    assembly_format = "($values^)? attr-dict (`:` type($values)^)?"

    def __init__(self, values=(), **fields):
        super().__init__(list(values), **fields)

    def verify_(self) -> None:
        parent = self.parent_op()
        if parent is None or LinalgOp not in parent.traits or not parent.regions:
            fail(self, "expected parent op with LinalgOp interface")
        expected = parent.yield_types()
        if len(self.values) != len(expected):
            fail(
                self,
                f"expected number of yield values ({len(self.values)}) to match the number of "
                f"inits / outs operands of the enclosing LinalgOp ({len(expected)})",
            )
        for i, (value, t) in enumerate(zip(self.values, expected)):
            if value.type is not t:
                fail(
                    self,
                    f"type of yield operand {i + 1} ('{value.type}') doesn't match the element "
                    f"type of the enclosing linalg.generic op ('{t}')",
                )


@irdl_op
class IndexOp(Operation):
    """The index of the current iteration along loop `dim` of the enclosing structured op."""

    name = "linalg.index"
    traits = frozenset({Pure})
    dim = attribute(I64Attr)
    result = result(Index)
    assembly_format = "$dim attr-dict `:` type($result)"

    def __init__(self, dim, **fields):
        fields.setdefault("result", index)
        dim = dim if isinstance(dim, IntegerAttr) else IntegerAttr(dim, i64)
        super().__init__(dim=dim, **fields)

    def verify_(self) -> None:
        parent = self.parent_op()
        if parent is None or LinalgOp not in parent.traits:
            fail(self, "expected parent op with LinalgOp interface")
        if parent.num_loops <= self.dim.value:
            fail(
                self,
                f"expected dim ({self.dim.value}) to be lower than the number of loops "
                f"({parent.num_loops}) of the enclosing LinalgOp",
            )
