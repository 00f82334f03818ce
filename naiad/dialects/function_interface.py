"""What function ops share, whatever their dialect (`tt.func`, `func.func`): MLIR's
FunctionOpInterface, CallOpInterface and the return rules, as family base classes.

A function has `sym_name`, `function_type`, an optional `sym_visibility`, `arg_attrs` /
`res_attrs` (one dictionary per argument / result, present only when one is not empty, as MLIR
keeps them) and a body region whose entry block takes the arguments (no block: a declaration).
A dialect declares its ops as subclasses that add the name, traits and format; the text
syntax is shared too (dialects/syntax/function.py).
"""

from __future__ import annotations

from ..ir import (
    ArrayAttr,
    Block,
    DictionaryAttr,
    FunctionType,
    Operation,
    Region,
    StringAttr,
    SymbolRefAttr,
    SymbolTable,
    TypeAttr,
    attribute,
    lookup_symbol,
    opt_attribute,
    region,
    var_operand,
    var_result,
)
from .base import DictArrayAttr, FlatSymbolRefAttr, FunctionTypeAttr, StrAttr, fail, str_attr


class FunctionOpBase(Operation):
    """A function: its signature, and a body whose entry block takes the arguments."""

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
        `[{"tt.divisibility": IntegerAttr(16, i32)}, {}]`. The body gets an entry block with
        the arguments, unless `declaration`."""
        if "body" not in fields:
            blocks = [] if declaration else [Block(function_type.inputs)]
            fields["body"] = Region(blocks)
        super().__init__(
            sym_name=str_attr(sym_name),
            function_type=TypeAttr(function_type),
            sym_visibility=None if visibility is None else StringAttr(visibility),
            arg_attrs=dict_array(arg_attrs),
            res_attrs=dict_array(res_attrs),
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


def dict_array(entries):
    """`arg_attrs` / `res_attrs` from a list of dicts (or DictionaryAttrs), or None."""
    if entries is None or isinstance(entries, ArrayAttr):
        return entries
    return ArrayAttr(e if isinstance(e, DictionaryAttr) else DictionaryAttr(e) for e in entries)


def verify_return(op, values) -> None:
    """The return rules of a function's terminator: as many values as the enclosing function
    (of the class HasParent names, checked by that trait) returns, of its result types."""
    func = op.parent_op()
    if not isinstance(func, FunctionOpBase):
        return  # HasParent reports it
    results = func.signature.results
    name = func.sym_name.value
    if len(values) != len(results):
        fail(
            op,
            f"has {len(values)} operands, but enclosing function (@{name}) returns {len(results)}",
        )
    for i, (value, t) in enumerate(zip(values, results)):
        if value.type is not t:
            fail(
                op,
                f"type of return operand {i} ({value.type}) doesn't match function result "
                f"type ({t}) in function @{name}",
            )


class CallOpBase(Operation):
    """A direct call of the function named `callee`, looked up in the nearest symbol table.
    ODS names the operand group `operands` and leaves the results unnamed; here they are
    `args` and `outs` (`operands`/`results` are Operation's own), and formats use the
    `operands` / `results` directives, which print the same."""

    callee = attribute(FlatSymbolRefAttr)
    args = var_operand()
    arg_attrs = opt_attribute(DictArrayAttr)
    res_attrs = opt_attribute(DictArrayAttr)
    outs = var_result()
    function_class: type[FunctionOpBase]  # what `callee` must name

    def __init__(self, callee, args=(), result_types=None, **fields):
        """`callee`: a function op (its results give the result types), a name or a symbol."""
        if isinstance(callee, FunctionOpBase):
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
        if not isinstance(func, self.function_class):
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
