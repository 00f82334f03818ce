"""Test-only JIT for scalar lowerings: many elementwise loops in one LLVM module, compiled once.

    kernels = ScalarKernels()
    name = kernels.add(make_op("arith.addi", [i32, i32], [i32]))
    kernels.compile()
    out = kernels.run(name, [a, b])          # NumPy arrays in the reference's host dtypes

Each kernel is `void f(T0* x0, T1* x1, ..., R* out, i64 n)`, a loop applying `lower_scalar_op`
to element i of every operand. Arrays travel as their storage bits (bool as one byte), exactly
what `llvm_type` says. `reference(op, arrays)` runs the reference evaluator's handler of the same
op on the same arrays. Compiled for the host and linked by the back end's loader (host_code).
"""

from __future__ import annotations

import ctypes
import types

import llvmlite.binding as llvm
import numpy as np
from host_code import host_machine, load_module
from llvmlite import ir

from naiad.backends.cpu.lower_scalar import ScalarContext, llvm_type, lower_scalar_op
from naiad.ir import Block, create_operation
from naiad.runtime.evaluator import HANDLERS
from naiad.runtime.evaluator.values import host_dtype
from naiad.runtime.interpreter.builder import InterpreterBuilder

I64 = ir.IntType(64)


def make_op(name: str, operand_types, result_types, attributes=None):
    """Op `name` on fresh block arguments of `operand_types`."""
    block = Block(arg_types=list(operand_types))
    return create_operation(name, block.arguments, list(result_types), attributes or {})


def reference(op, arrays):
    """The reference evaluator's value of `op` on `arrays` (its canonical host dtypes)."""
    ev = types.SimpleNamespace(builder=InterpreterBuilder(None, (1, 1, 1), False))
    with np.errstate(all="ignore"):
        result = HANDLERS[op.name](ev, op, [np.asarray(a) for a in arrays])
    return np.asarray(result).astype(host_dtype(op.results[0].type), copy=False)


def _memory_type(ty: ir.Type) -> ir.Type:
    """How an element sits in an array: i1 takes a byte."""
    return ir.IntType(8) if ty == ir.IntType(1) else ty


class ScalarKernels:
    """A module of elementwise loops, one per op added."""

    def __init__(self, vectorize: bool = False):
        self.vectorize = vectorize
        self.module = ir.Module(name="scalar_tests")
        self.module.triple = llvm.get_process_triple()
        self.ctx = ScalarContext(self.module)
        self.ops: dict[str, object] = {}
        self.loaded = None

    def add(self, op, constants: dict[int, int] | None = None) -> str:
        """A loop applying `op`; the operands at the positions `constants` names are those
        constants in the IR (their arrays are still passed, and not read)."""
        constants = constants or {}
        name = f"k{len(self.ops)}"
        self.ops[name] = op
        value_types = [llvm_type(v.type) for v in op.operands]
        result_type = llvm_type(op.results[0].type)
        ptr = ir.PointerType()
        fn_type = ir.FunctionType(ir.VoidType(), [ptr] * (len(value_types) + 1) + [I64])
        fn = ir.Function(self.module, fn_type, name)
        entry, body, done = (fn.append_basic_block(n) for n in ("entry", "body", "done"))
        b = ir.IRBuilder(entry)
        n = fn.args[-1]
        b.cbranch(b.icmp_signed(">", n, ir.Constant(I64, 0)), body, done)
        b.position_at_end(body)
        i = b.phi(I64)
        i.add_incoming(ir.Constant(I64, 0), entry)
        operands = []
        for k, (arg, ty) in enumerate(zip(fn.args, value_types)):
            if k in constants:
                operands.append(ir.Constant(ty, constants[k]))
                continue
            address = b.gep(arg, [i], source_etype=_memory_type(ty))
            value = b.load(address, typ=_memory_type(ty))
            operands.append(b.trunc(value, ty) if _memory_type(ty) != ty else value)
        [result] = lower_scalar_op(b, op, operands, self.ctx)
        if _memory_type(result_type) != result_type:
            result = b.zext(result, _memory_type(result_type))
        out = b.gep(fn.args[len(value_types)], [i], source_etype=_memory_type(result_type))
        b.store(result, out)
        following = b.add(i, ir.Constant(I64, 1))
        i.add_incoming(following, b.block)
        b.cbranch(b.icmp_signed("<", following, n), body, done)
        b.position_at_end(done)
        b.ret_void()
        return name

    def compile(self) -> None:
        """Verify, optimize (so any poison a lowering lets through gets exploited) and load.
        With `vectorize`, O3 with both vectorizers, as the back end compiles loops (slower to
        compile: the AVX-512 code generation of wide selects); else O1."""
        machine = host_machine()
        parsed = llvm.parse_assembly(str(self.module))
        parsed.verify()
        parsed.data_layout = str(machine.target_data)
        options = llvm.create_pipeline_tuning_options(speed_level=3 if self.vectorize else 1)
        options.loop_vectorization = self.vectorize
        options.slp_vectorization = self.vectorize
        passes = llvm.create_pass_builder(machine, options)
        passes.getModulePassManager().run(parsed, passes)
        self.optimized = str(parsed)
        self.loaded = load_module(parsed, list(self.ops), "scalar_tests")

    def run(self, name: str, arrays, seed: int = 0, count: int | None = None) -> np.ndarray:
        """The kernel's results on `arrays` (`count` of them for an op without operands); the
        output is filled with random bytes first."""
        op = self.ops[name]
        arrays = [np.ascontiguousarray(a) for a in arrays]
        count = len(arrays[0]) if arrays else count
        out = np.empty(count, host_dtype(op.results[0].type))
        poison = np.random.default_rng(seed).integers(0, 256, out.nbytes, dtype=np.uint8)
        out.view(np.uint8)[:] = poison if out.dtype != np.bool_ else poison & 1
        pointers = [a.ctypes.data for a in arrays] + [out.ctypes.data]
        address = self.loaded.address(name)
        signature = [ctypes.c_void_p] * len(pointers) + [ctypes.c_int64]
        ctypes.CFUNCTYPE(None, *signature)(address)(*pointers, count)
        return out


def assert_bits_equal(got, want, op, inputs=(), nan_bits: bool = False) -> None:
    """Bit-identical results; any NaN equals any NaN unless `nan_bits` (conversions, whose NaN
    encodings are part of the spec)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (op.name, got.dtype, want.dtype)
    if got.dtype == np.bool_:
        bad = got != want
    else:
        unsigned = np.dtype(f"uint{8 * got.dtype.itemsize}")
        bad = got.view(unsigned) != want.view(unsigned)
        if got.dtype.kind not in "iub" and not nan_bits:
            with np.errstate(invalid="ignore"):  # a signaling NaN raises "invalid" as it widens
                both_nan = np.isnan(got.astype(np.float64)) & np.isnan(want.astype(np.float64))
            bad &= ~both_nan
    if bad.any():
        symbol = op.attributes.get("symbol")
        op = f"{op} {symbol.value}" if symbol is not None else op
        i = int(np.flatnonzero(bad)[0])
        args = ", ".join(f"{np.asarray(x)[i]!r}" for x in inputs)
        raise AssertionError(
            f"{op}: {int(bad.sum())} of {bad.size} differ; first at {i}: ({args}) -> "
            f"got {got[i]!r}, want {want[i]!r}"
        )


def run_all(cases, nan_bits: bool = False, vectorize: bool = False) -> ScalarKernels:
    """Compile every `(op, inputs)` case into one module, run each and compare it with the
    reference bit for bit; returns the kernels (their optimized IR is `optimized`)."""
    kernels = ScalarKernels(vectorize)
    names = [kernels.add(op) for op, _ in cases]
    kernels.compile()
    for (op, inputs), name in zip(cases, names):
        assert_bits_equal(kernels.run(name, inputs), reference(op, inputs), op, inputs, nan_bits)
    return kernels
