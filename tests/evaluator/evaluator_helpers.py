"""Helpers of the evaluator's tests: `Kernel` builds TTIR functions with `naiad.ir.Builder` and
the dialect op classes (the same calls the frontend makes) without repeating the boilerplate; the
functions below run a TTIR fixture in the evaluator on a case's arguments."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

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
from naiad.runtime.evaluator import evaluate
from naiad.runtime.evaluator.arguments import argument_names
from naiad.tools.tensor_descriptor import TensorDescriptor

FIXTURES = Path(__file__).resolve().parents[1] / "ir" / "fixtures"


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


def parse_fixture(path):
    parser = pytest.importorskip("naiad.ir.parser")
    try:
        return parser.parse_module(path.read_text(), str(path))
    except Exception as exc:  # the parser is still being finished: say so, do not fail
        pytest.skip(f"the parser cannot read {path.name} yet: {exc}")


def copy_args(args):
    def copy(v):
        if isinstance(v, TensorDescriptor):
            return dataclasses.replace(v, base=v.base.copy())
        return v.copy() if isinstance(v, np.ndarray) else v

    return {k: copy(v) for k, v in args.items()}


def arrays_of(args):
    for key, value in args.items():
        if isinstance(value, TensorDescriptor):
            yield key, value.base
        elif isinstance(value, np.ndarray):
            yield key, value


def evaluator_args(args, names):
    """The TTIR function's arguments: a host descriptor is followed by its shape and strides
    (`desc_q.shape.0`, ..., `desc_q.stride.1`), as Triton's launcher passes them, and where
    Naiad's frontend compiled it for tensor copies its tensor map comes first
    (`desc_q.tensor_map`: the descriptor itself, as for Triton's `!tt.tensordesc` arguments)."""
    flat = dict(args)
    for key, value in args.items():
        if isinstance(value, TensorDescriptor):
            flat[f"{key}.tensor_map"] = value
            flat.update({f"{key}.shape.{i}": s for i, s in enumerate(value.shape)})
            flat.update({f"{key}.stride.{i}": s for i, s in enumerate(value.strides)})
    return {n: flat[n] for n in names}


def bits(array):
    return array.view(f"u{array.dtype.itemsize}") if array.dtype.kind == "f" else array


def fixture_kernel_name(name: str) -> str:
    return json.loads((FIXTURES / f"{name}.json").read_text())["kernel"]


def run_evaluator(module, func_name, case, args, out=None, debug=True):
    """Evaluate `module`'s function on (a copy of) `args`; the arrays afterwards, by name."""
    evaluated = copy_args(args)
    func = module.lookup_symbol(func_name)
    params = evaluator_args(evaluated, argument_names(func))
    evaluate(module, func_name, params, case.grid, debug=debug, out=out or (lambda line: None))
    return dict(arrays_of(evaluated))
