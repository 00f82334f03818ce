"""Run the math library on NumPy arrays: a loop `out[i] = f(a[i] [, b[i]])` JIT-compiled for the
host through llvmlite (O3 with the new pass manager), linked by the back end's loader
(tests/host_code), called through ctypes. What it checks is the library's IR, optimized and
vectorized the way the back end will compile it.
"""

from __future__ import annotations

import ctypes
import functools

import llvmlite.binding as llvm
import numpy as np
from host_code import host_machine, load_module
from llvmlite import ir

from naiad.backends.cpu.mathlib import math_function

FLOAT_TYPES = {np.dtype(np.float32): ir.FloatType(), np.dtype(np.float64): ir.DoubleType()}


def map_module(name: str, dtype, arity: int, target_machine=None) -> ir.Module:
    """A module whose `map(out, a[, b], n)` applies math function `name` elementwise."""
    float_type = FLOAT_TYPES[np.dtype(dtype)]
    machine = target_machine or host_machine()
    module = ir.Module(name=f"map_{name}")
    module.triple = machine.triple
    module.data_layout = str(machine.target_data)
    i64 = ir.IntType(64)
    pointer = ir.PointerType(float_type)
    function_type = ir.FunctionType(ir.VoidType(), [pointer] * (arity + 1) + [i64])
    kernel = ir.Function(module, function_type, "map")
    out, *inputs, n = kernel.args
    for argument in [out, *inputs]:
        argument.add_attribute("noalias")
    entry, body, done = (kernel.append_basic_block(label) for label in ("entry", "body", "done"))
    builder = ir.IRBuilder(entry)
    builder.cbranch(builder.icmp_signed(">", n, i64(0)), body, done)
    builder.position_at_end(body)
    index = builder.phi(i64)
    index.add_incoming(i64(0), entry)
    values = [builder.load(builder.gep(p, [index], inbounds=True)) for p in inputs]
    result = builder.call(math_function(module, name, float_type), values)
    builder.store(result, builder.gep(out, [index], inbounds=True))
    following = builder.add(index, i64(1))
    index.add_incoming(following, body)
    builder.cbranch(builder.icmp_signed("<", following, n), body, done)
    builder.position_at_end(done)
    builder.ret_void()
    return module


def optimize(module: ir.Module, target_machine=None) -> llvm.ModuleRef:
    """Parse, verify and optimize at O3 (loop and SLP vectorization on) for the target."""
    machine = target_machine or host_machine()
    parsed = llvm.parse_assembly(str(module))
    parsed.verify()
    options = llvm.create_pipeline_tuning_options(speed_level=3)
    options.loop_vectorization = True
    options.slp_vectorization = True
    options.loop_interleaving = True
    builder = llvm.create_pass_builder(machine, options)
    builder.getModulePassManager().run(parsed, builder)
    return parsed


class CompiledMap:
    """`f` applied elementwise to float arrays of one dtype, as compiled native code."""

    def __init__(self, name: str, dtype, arity: int = 1):
        self.dtype = np.dtype(dtype)
        self.arity = arity
        self.module = optimize(map_module(name, self.dtype, arity))
        self.loaded = load_module(self.module, ["map"], f"map_{name}")
        pointer = ctypes.c_void_p
        signature = ctypes.CFUNCTYPE(None, *[pointer] * (arity + 1), ctypes.c_int64)
        self._call = signature(self.loaded.address("map"))

    def __call__(self, *arrays: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        inputs = [np.ascontiguousarray(a, dtype=self.dtype) for a in arrays]
        if len(inputs) != self.arity or len({a.shape for a in inputs}) != 1:
            raise ValueError(f"expected {self.arity} arrays of one shape")
        if out is None:
            out = np.empty_like(inputs[0])
        self._call(*(a.ctypes.data for a in [out, *inputs]), out.size)
        return out


@functools.cache
def compiled(name: str, dtype_name: str, arity: int = 1) -> CompiledMap:
    """One compiled loop per function and dtype for the whole test session."""
    return CompiledMap(name, np.dtype(dtype_name), arity)
