"""`tt` functions, calls and returns, and the device-side debug ops `tt.print` and
`tt.assert` (TritonOps.td).

`tt.func` is printed by hand-written C++ upstream (function_interface_impl: `tt.func public
@k(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32}) attributes {noinline = false}`), hence
`custom_syntax`. Argument attributes live in `arg_attrs`, an array of dictionaries, one per
argument, as MLIR stores them.
"""

from __future__ import annotations

from naiad.ir import (
    ArrayAttr,
    Block,
    DictionaryAttr,
    FunctionType,
    HasParent,
    IntegerType,
    IsolatedFromAbove,
    MemoryWrite,
    Operation,
    Pure,
    Region,
    ReturnLike,
    StringAttr,
    Symbol,
    SymbolRefAttr,
    SymbolTable,
    Terminator,
    TypeAttr,
    attribute,
    element_type,
    i1,
    irdl_op,
    lookup_symbol,
    operand,
    opt_attribute,
    region,
    var_operand,
    var_result,
)

from .base import (
    BoolAttrC,
    DenseI32ArrayAttr,
    DictArrayAttr,
    FlatSymbolRefAttr,
    FunctionTypeAttr,
    StrAttr,
    bool_attr,
    fail,
    i32_array,
    str_attr,
    tensor_or_scalar,
)
from .tt_types import TT, TT_Type


@irdl_op
class FuncOp(Operation):
    """A kernel or `@jit` function: `sym_name`, `function_type`, a body region whose entry
    block takes the arguments (none: a declaration)."""

    name = "tt.func"
    traits = TT | {IsolatedFromAbove, Symbol}
    sym_name = attribute(StrAttr)
    function_type = attribute(FunctionTypeAttr)
    sym_visibility = opt_attribute(StrAttr)
    arg_attrs = opt_attribute(DictArrayAttr)
    res_attrs = opt_attribute(DictArrayAttr)
    body = region()
    custom_syntax = True

    def __init__(
        self,
        sym_name,
        function_type: FunctionType,
        *,
        visibility: str | None = None,
        arg_attrs=None,
        res_attrs=None,
        declaration: bool = False,
        **fields,
    ):
        """`arg_attrs`: one dict (or DictionaryAttr) per argument, e.g.
        `[{"tt.divisibility": IntegerAttr(16, i32)}, {}]`."""
        if "body" not in fields:
            blocks = [] if declaration else [Block(function_type.inputs)]
            fields["body"] = Region(blocks)
        super().__init__(
            sym_name=str_attr(sym_name),
            function_type=TypeAttr(function_type),
            sym_visibility=None if visibility is None else StringAttr(visibility),
            arg_attrs=_dict_array(arg_attrs),
            res_attrs=_dict_array(res_attrs),
            **fields,
        )

    @property
    def signature(self) -> FunctionType:
        return self.function_type.value

    @property
    def entry_block(self) -> Block | None:
        return self.body.entry_block

    @property
    def arguments(self) -> tuple:
        block = self.entry_block
        return () if block is None else block.arguments

    @property
    def is_declaration(self) -> bool:
        return not self.body.blocks

    def arg_attr(self, index: int, name: str):
        """Argument `index`'s attribute `name` (`tt.divisibility`), or None."""
        attrs = self.arg_attrs
        return None if attrs is None else attrs[index].get(name)

    def verify_(self) -> None:
        inputs = self.signature.inputs
        for group, what in ((self.arg_attrs, "argument"), (self.res_attrs, "result")):
            count = len(inputs) if what == "argument" else len(self.signature.results)
            if group is not None and len(group) != count:
                fail(
                    self,
                    f"expects {what} attribute array to have the same number of elements as "
                    f"the number of function {what}s, got {len(group)}, but expected {count}",
                )
        block = self.entry_block
        if block is None:
            return
        if len(block.arguments) != len(inputs):
            fail(self, f"entry block must have {len(inputs)} arguments to match function signature")
        for i, (arg, t) in enumerate(zip(block.arguments, inputs)):
            if arg.type is not t:
                fail(
                    self,
                    f"type of entry block argument #{i}('{arg.type}') must match the type of "
                    f"the corresponding argument in function signature('{t}')",
                )


def _dict_array(entries):
    if entries is None or isinstance(entries, ArrayAttr):
        return entries
    return ArrayAttr(e if isinstance(e, DictionaryAttr) else DictionaryAttr(e) for e in entries)


@irdl_op
class ReturnOp(Operation):
    """Return `srcs` from the enclosing `tt.func`."""

    name = "tt.return"
    traits = TT | {Pure, HasParent("tt.func"), ReturnLike, Terminator}
    srcs = var_operand()
    assembly_format = "attr-dict ($srcs^ `:` type($srcs))?"

    def __init__(self, srcs=(), **fields):
        super().__init__(list(srcs), **fields)

    def verify_(self) -> None:
        func = self.parent_op()
        if not isinstance(func, FuncOp):
            return  # HasParent reports it
        results = func.signature.results
        name = func.sym_name.value
        if len(self.srcs) != len(results):
            fail(
                self,
                f"has {len(self.srcs)} operands, but enclosing function (@{name}) returns "
                f"{len(results)}",
            )
        for i, (value, t) in enumerate(zip(self.srcs, results)):
            if value.type is not t:
                fail(
                    self,
                    f"type of return operand {i} ({value.type}) doesn't match function result "
                    f"type ({t}) in function @{name}",
                )


@irdl_op
class CallOp(Operation):
    """A direct call of the `tt.func` named `callee` (`@jit` functions before inlining,
    `noinline` ones after). ODS names the operand group `operands` and leaves the results
    unnamed; here they are `args` and `outs` (`operands`/`results` are Operation's own), and
    the format uses the `operands` / `results` directives, which print the same."""

    name = "tt.call"
    callee = attribute(FlatSymbolRefAttr)
    args = var_operand()
    arg_attrs = opt_attribute(DictArrayAttr)
    res_attrs = opt_attribute(DictArrayAttr)
    outs = var_result()
    assembly_format = "$callee `(` operands `)` attr-dict `:` functional-type(operands, results)"

    def __init__(self, callee, args=(), result_types=None, **fields):
        """`callee`: a FuncOp (its results give the result types), a name or a symbol."""
        if isinstance(callee, FuncOp):
            if result_types is None:
                result_types = callee.signature.results
            callee = callee.sym_name.value
        if isinstance(callee, str):
            callee = SymbolRefAttr(callee)
        super().__init__(list(args), callee=callee, outs=list(result_types or ()), **fields)

    def verify_(self) -> None:
        table = self.parent_op()
        while table is not None and SymbolTable not in table.traits:
            table = table.parent_op()
        if table is None:
            return  # not in a module yet: nothing to resolve against
        name = self.callee.root
        func = lookup_symbol(table, name)
        if not isinstance(func, FuncOp):
            fail(self, f"'{name}' does not reference a valid function")
        signature = func.signature
        if len(signature.inputs) != len(self.args):
            fail(self, "incorrect number of operands for callee")
        for i, (value, t) in enumerate(zip(self.args, signature.inputs)):
            if value.type is not t:
                fail(
                    self,
                    f"operand type mismatch: expected operand type {t}, but provided "
                    f"{value.type} for operand number {i}",
                )
        if len(signature.results) != len(self.outs):
            fail(self, "incorrect number of results for callee")
        for i, (value, t) in enumerate(zip(self.outs, signature.results)):
            if value.type is not t:
                fail(self, f"result type mismatch at index {i}")


@irdl_op
class PrintOp(Operation):
    """Device-side print of `prefix` and `args` (`tl.device_print`); `isSigned` says per
    argument whether integers print signed."""

    name = "tt.print"
    traits = TT | {MemoryWrite}
    prefix = attribute(StrAttr)
    hex = attribute(BoolAttrC)
    args = var_operand(TT_Type)
    isSigned = attribute(DenseI32ArrayAttr)  # the ODS name
    assembly_format = "$prefix attr-dict (`:` $args^ `:` type($args))?"

    def __init__(self, prefix, args=(), *, hex=False, isSigned=None, **fields):
        """`isSigned` defaults to 1 for integer arguments, 0 for others; the frontend, which
        knows `tl.dtype` signedness, passes it for unsigned integers."""
        args = list(args)
        if isSigned is None:
            isSigned = [int(isinstance(element_type(v.type), IntegerType)) for v in args]
        signed = isSigned
        super().__init__(
            args,
            prefix=str_attr(prefix),
            hex=bool_attr(hex),
            isSigned=i32_array(signed),
            **fields,
        )


_I1OrTensor = tensor_or_scalar(lambda t: t is i1, "1-bit signless integer or tensor of i1")


@irdl_op
class AssertOp(Operation):
    """Device-side assert (`tl.device_assert`): abort with `message` where `condition` is
    false."""

    name = "tt.assert"
    traits = TT | {MemoryWrite}
    condition = operand(_I1OrTensor)
    message = attribute(StrAttr)
    assembly_format = "$condition `,` $message attr-dict `:` type($condition)"

    def __init__(self, condition, message, **fields):
        super().__init__(condition, message=str_attr(message), **fields)
