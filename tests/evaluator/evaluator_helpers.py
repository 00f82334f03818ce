"""A small helper to build TTIR functions in tests with `naiad.ir.Builder` and the dialect op
classes (the same calls the frontend makes), without repeating the boilerplate."""

from __future__ import annotations

from naiad.dialects import arith, tt
from naiad.ir import (
    Builder,
    DenseElementsAttr,
    FloatAttr,
    FloatType,
    FunctionType,
    IntegerAttr,
    ModuleOp,
    RankedTensorType,
    verify,
)


def tensor(shape, element):
    return RankedTensorType(shape, element)


class Kernel:
    """One `tt.func` being built; `k.op(Class, ...)` creates an op at the insertion point and
    gives its result (or the op, when it has none or several)."""

    def __init__(self, name, arg_types, result_types=(), module=None):
        self.func = tt.FuncOp(name, FunctionType(arg_types, result_types))
        self.module = module if module is not None else ModuleOp()
        self.module.body.append(self.func)
        self.builder = Builder()
        self.builder.set_insertion_point(self.func.entry_block)
        self.args = self.func.arguments

    def op(self, cls, *args, **kwargs):
        created = self.builder.create(cls, *args, **kwargs)
        return created.results[0] if len(created.results) == 1 else created

    def create(self, cls, *args, **kwargs):
        """The op itself (for region ops, whatever their number of results)."""
        return self.builder.create(cls, *args, **kwargs)

    def at_end(self, block):
        return self.builder.at_end(block)

    def const(self, value, type):
        if isinstance(type, RankedTensorType):
            attr = DenseElementsAttr(type, value)
        elif isinstance(type, FloatType):
            attr = FloatAttr(value, type)
        else:
            attr = IntegerAttr(value, type)
        return self.op(arith.ConstantOp, attr)

    def splat(self, value, shape):
        return self.op(tt.SplatOp, value, shape=shape)

    def offsets(self, size):
        """`program_id(0) * size + arange(size)`."""
        pid = self.op(tt.GetProgramIdOp, 0)
        start = self.op(arith.MulIOp, pid, self.const(size, pid.type))
        return self.op(arith.AddIOp, self.splat(start, [size]), self.op(tt.MakeRangeOp, 0, size))

    def ptrs(self, ptr, offsets):
        return self.op(tt.AddPtrOp, self.splat(ptr, list(offsets.type.shape)), offsets)

    def load(self, ptr, offsets, mask=None, other=None):
        return self.op(tt.LoadOp, self.ptrs(ptr, offsets), mask, other)

    def store(self, ptr, offsets, value, mask=None):
        self.op(tt.StoreOp, self.ptrs(ptr, offsets), value, mask)

    def ret(self, *values):
        self.op(tt.ReturnOp, list(values))
        verify(self.module)
        return self.module
