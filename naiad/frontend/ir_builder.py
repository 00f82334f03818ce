"""The IR builder: the builder contract of `naiad/language/builder.py` made of TTIR ops.

The semantic layer decides every type and shape and asks this builder for values; a handle is an
`ir.Value`. Ops are inserted at the insertion point of `self.builder` (a `naiad.ir.Builder`) and
carry its current location, which the code generator keeps on the user's line. Elementwise ops
are named after the op they become, so `elementwise("arith.addi", ...)` is one `arith.addi`.

Two choices follow Triton's builder, so the IR matches what Triton's frontend emits:
`splat` of a constant folds to a dense `arith.constant` (Triton's `createOrFold<SplatOp>`), and a
hint (`multiple_of`, ...) is an attribute on the op that defines the value.
"""

from __future__ import annotations

from .. import ir
from ..dialects import arith, llvm, tt
from ..dialects.arith.attributes import CmpFPredicate, CmpIPredicate
from ..dialects.ttg import barrier
from . import tensor_maps, types

_HINT_ATTRIBUTES = {
    "multiple_of": "tt.divisibility",
    "max_contiguous": "tt.contiguity",
    "max_constancy": "tt.constancy",
}
_NO_PYTHON_VALUE = (
    "a tensor has no Python value at compile time: use it in tl operations, or make it a "
    "tl.constexpr"
)


class IRBuilder:
    """A `naiad.language.builder.Builder` that builds TTIR at `self.builder`'s insertion point."""

    holds_inline_ptx = True

    def __init__(self, builder: ir.Builder | None = None):
        self.builder = builder or ir.Builder()

    def _create(self, op_class, *args, **kwargs):
        return self.builder.create(op_class, *args, **kwargs)

    def _insert(self, op: ir.Operation) -> ir.Operation:
        return self.builder.insert(op)

    # -- values ---------------------------------------------------------------------------------
    def constant(self, value, ty):
        return self._create(arith.ConstantOp, constant_attr(value, types.ir_type(ty))).result

    def splat(self, scalar, ty):
        result_type = types.ir_type(ty)
        op = scalar.defining_op
        if isinstance(op, arith.ConstantOp):
            dense = ir.DenseElementsAttr(result_type, op.value.value)
            return self._create(arith.ConstantOp, dense).result
        return self._create(tt.SplatOp, scalar, result=result_type).result

    def elementwise(self, op, operands, ty, **attrs):
        result_type = types.ir_type(ty)
        if op == "arith.bitcast" and operands[0].type is result_type:
            return operands[0]  # uint32 <-> int32: the same signless value
        attributes = _elementwise_attributes(op, operands, result_type, attrs)
        created = ir.create_operation(
            op, list(operands), [result_type], attributes, location=self.builder.location
        )
        return self._insert(created).results[0]

    def retype(self, value, ty):
        return value  # integers are signless: int32 and uint32 are the same i32 value

    def make_range(self, start, end, ty):
        return self._create(tt.MakeRangeOp, start, end).result

    def program_id(self, axis):
        return self._create(tt.GetProgramIdOp, axis).result

    def num_programs(self, axis):
        return self._create(tt.GetNumProgramsOp, axis).result

    # -- shapes ---------------------------------------------------------------------------------
    def broadcast(self, value, ty):
        return self._create(tt.BroadcastOp, value, result=types.ir_type(ty)).result

    def expand_dims(self, value, axis, ty):
        return self._create(tt.ExpandDimsOp, value, axis).result

    def reshape(self, value, ty, can_reorder):
        return self._create(
            tt.ReshapeOp, value, result=types.ir_type(ty), allow_reorder=can_reorder
        ).result

    def permute(self, value, order, ty):
        return self._create(tt.TransOp, value, list(order)).result

    def join(self, lhs, rhs, ty):
        if isinstance(lhs.type, ir.RankedTensorType):
            return self._create(tt.JoinOp, lhs, rhs).result
        # Two scalars: `tt.join` takes tensors, so join them as 1-element tensors and reshape
        # the 1x2 result to 2 elements (as Triton's semantic does).
        one = ir.RankedTensorType([1], lhs.type)
        pair = self._create(
            tt.JoinOp,
            self._create(tt.SplatOp, lhs, result=one).result,
            self._create(tt.SplatOp, rhs, result=one).result,
        ).result
        return self._create(tt.ReshapeOp, pair, result=types.ir_type(ty)).result

    def split(self, value, ty):
        if isinstance(types.ir_type(ty), ir.RankedTensorType):
            op = self._create(tt.SplitOp, value)
            return op.outLHS, op.outRHS
        # Into two scalars: split the 1x2 tensor, then take the single element of each half.
        op = self._create(tt.SplitOp, self._create(tt.ExpandDimsOp, value, 0).result)
        return tuple(self._create(tt.UnsplatOp, half).result for half in (op.outLHS, op.outRHS))

    def cat(self, lhs, rhs, ty):
        return self._create(tt.CatOp, lhs, rhs, result=types.ir_type(ty)).result

    def unsplat(self, value, ty):
        return self._create(tt.UnsplatOp, value).result

    def gather(self, src, index, axis, ty):
        return self._create(tt.GatherOp, src, index, axis).result

    def histogram(self, value, num_bins, mask, ty):
        return self._create(tt.HistogramOp, value, mask, result=types.ir_type(ty)).result

    # -- memory ---------------------------------------------------------------------------------
    def load(self, ptr, mask, other, ty, cache="", evict="", volatile=False):
        """`cache` (".cg", ...), `evict` ("evict_last", ...), `volatile`: tl.load's hints."""
        hints = {"cache": cache.lstrip(".") or None, "evict": evict or None}
        return self._create(tt.LoadOp, ptr, mask, other, isVolatile=volatile, **hints).result

    def store(self, ptr, value, mask, cache="", evict=""):
        """`cache` (".cs", ...) and `evict` ("evict_first", ...): tl.store's hints, or ""."""
        hints = {"cache": cache.lstrip(".") or None, "evict": evict or None}
        self._create(tt.StoreOp, ptr, value, mask, **hints)

    def atomic_rmw(self, kind, ptr, value, mask, sem, scope, ty):
        return self._create(tt.AtomicRMWOp, kind, ptr, value, mask, sem=sem, scope=scope).result

    def atomic_cas(self, ptr, cmp, value, sem, scope, ty):
        return self._create(tt.AtomicCASOp, ptr, cmp, value, sem=sem, scope=scope).result

    def atomic_poll(self, ptr, expected, timeout, sem, scope):
        return self._create(tt.AtomicPollOp, ptr, expected, timeout, sem=sem, scope=scope).result

    # -- regions --------------------------------------------------------------------------------
    def reduce(self, values, axis, combine, types_):
        op = self._create(tt.ReduceOp, list(values), axis)
        self._fill_combine_region(op, combine, tt.ReduceReturnOp)
        return list(op.results)

    def scan(self, values, axis, reverse, combine, types_):
        op = self._create(tt.ScanOp, list(values), axis, reverse)
        self._fill_combine_region(op, combine, tt.ScanReturnOp)
        return list(op.results)

    def _fill_combine_region(self, op, combine, return_class):
        """Call the semantic's combine callback on the region's scalar block arguments (the
        left operands, then the right ones) and return its results from the region."""
        block = op.combineOp.block
        count = len(block.arguments) // 2
        with self.builder.at_end(block):
            results = combine(list(block.arguments[:count]), list(block.arguments[count:]), ())
            self._create(return_class, list(results))

    def map_elementwise(self, values, shape, pack, body):
        """The scalar region is built first, in a block of its own: the function's results
        give the op's result types."""
        arg_types = [v.type.element_type for v in values for _ in range(pack)]
        block = ir.Block(arg_types, [self.builder.location] * len(arg_types))  # the call's
        with self.builder.at_end(block):
            results = body(list(block.arguments), ())
            self._create(tt.MapElementwiseReturnOp, list(results))
        op = self._create(
            tt.MapElementwiseOp,
            list(values),
            pack=ir.IntegerAttr(pack, ir.i32),
            result=[ir.RankedTensorType(shape, r.type) for r in results[::pack]],
            scalarOp=ir.Region([block]),
        )
        return list(op.results)

    def dot(self, lhs, rhs, acc, input_precision, max_num_imprecise_acc, ty):
        return self._create(
            tt.DotOp,
            lhs,
            rhs,
            acc,
            inputPrecision=input_precision,
            maxNumImpreciseAcc=max_num_imprecise_acc,
        ).d

    # -- side effects and hints -------------------------------------------------------------------
    def static_print(self, text):
        print(text, end="")  # at compile time, once per compilation (as Triton)

    def device_print(self, prefix, hex, values, types_):
        signed = [1 if types.is_signed(ty) else 0 for ty in types_]
        self._create(tt.PrintOp, prefix, list(values), hex=hex, isSigned=signed)

    def device_assert(self, cond, message):
        self._create(tt.AssertOp, cond, message)

    def inline_asm(self, asm, constraints, values, result_types, is_pure, pack):
        op = self._create(
            tt.ElementwiseInlineAsmOp,
            list(values),
            asm_string=ir.StringAttr(asm),
            constraints=ir.StringAttr(constraints),
            pure=ir.BoolAttr(is_pure),
            packed_element=ir.IntegerAttr(pack, ir.i32),
            result=[types.ir_type(ty) for ty in result_types],
        )
        return list(op.results)

    def barrier(self):
        self._create(barrier.BarrierOp, "all")

    def assume(self, cond):
        self._create(llvm.AssumeOp, cond)

    def tensor_map(self, target, base, shape, strides, wide_strides, block_type, padding):
        """The tensor map of a descriptor made in the kernel, or None where it keeps pointers
        (tensor_maps.in_kernel)."""
        return tensor_maps.in_kernel(
            self, target, base, shape, strides, wide_strides, block_type, padding
        )

    def block_pointers(self, base, offsets, strides, shape, checks, ty):
        """None: a block pointer's pointers and mask are made from operations, as the TTIR
        shows them."""
        return None

    def tensor_map_load(self, tensor_map, offsets, desc_type):
        """A block by one tensor copy through `tensor_map`, or None (tensor_maps.load)."""
        return tensor_maps.load(self, tensor_map, offsets, desc_type)

    def tensor_map_store(self, tensor_map, offsets, value):
        """The block `value` by one tensor copy through `tensor_map` (tensor_maps.store)."""
        tensor_maps.store(self, tensor_map, offsets, value)

    def tensor_map_reduce(self, tensor_map, offsets, value, kind):
        """The block atomic `kind` of `value` by one bulk tensor reduction (tensor_maps.reduce)."""
        tensor_maps.reduce(self, tensor_map, offsets, value, kind)

    def hint(self, value, kind, values):
        """The hint as Triton records it: `tt.divisibility = dense<8> : tensor<1xi32>` (one
        value per dimension) on the defining op; on a function argument, an argument attribute;
        on another block argument (a loop's), `<name>_arg<N>` on the op that owns the block."""
        name = _HINT_ATTRIBUTES[kind]
        attr = ir.DenseElementsAttr(ir.RankedTensorType([len(values)], ir.i32), list(values))
        op = value.defining_op
        if op is not None:
            op.attributes[name] = attr
            return value
        owner = value.parent_block.parent_op()
        if isinstance(owner, tt.FuncOp):
            _set_arg_attr(owner, value.index, name, attr)
        elif owner is not None:
            owner.attributes[f"{name}_arg{value.index}"] = attr
        return value

    # -- Python protocols -------------------------------------------------------------------------
    def to_python(self, value, ty, kind):
        raise TypeError(_NO_PYTHON_VALUE)

    def to_string(self, value, ty):
        """A value being compiled, as `str()` or `tl.static_print` shows it: its type, as
        Triton's prints it (`int32[constexpr[128]]`; a scalar `int32[]`)."""
        dims = ", ".join(f"constexpr[{size}]" for size in ty.get_block_shapes())
        return f"{ty.scalar}[{dims}]"


def constant_attr(value, type_: ir.Type) -> ir.Attribute:
    """The attribute of a scalar constant of IR type `type_`."""
    if isinstance(type_, ir.IntegerType):
        return ir.IntegerAttr(int(value), type_)
    return ir.FloatAttr(float(value), type_)


def _elementwise_attributes(op, operands, result_type, attrs) -> dict:
    """The IR attributes of an elementwise op from the semantic's keywords (`src`, a language
    type for untyped builders, is implied here by the operand's IR type)."""
    if op == "arith.cmpi":
        return {"predicate": CmpIPredicate.get(attrs["predicate"])}
    if op == "arith.cmpf":
        return {"predicate": CmpFPredicate.get(attrs["predicate"])}
    if op == "tt.fp_to_fp":
        source = ir.element_type(operands[0].type)
        if ir.element_type(result_type).width < source.width:
            return {"rounding": tt.RoundingMode.get(attrs.get("rounding") or "rtne")}
        return {}
    if op == "tt.clampf":
        return {"propagateNan": tt.PropagateNan.get("all" if attrs["propagate_nan"] else "none")}
    if op == "tt.extern_elementwise":
        return {
            "libname": ir.StringAttr(attrs.get("libname", "")),
            "libpath": ir.StringAttr(""),
            "pure": ir.BoolAttr(bool(attrs.get("pure", True))),
            "symbol": ir.StringAttr(attrs["symbol"]),
        }
    return {}


def _set_arg_attr(func, index: int, name: str, attr) -> None:
    count = len(func.signature.inputs)
    current = func.arg_attrs
    entries = [dict(current[i].items) if current else {} for i in range(count)]
    entries[index][name] = attr
    func.attributes["arg_attrs"] = ir.ArrayAttr(ir.DictionaryAttr(e) for e in entries)
