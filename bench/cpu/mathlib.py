"""Throughput of the CPU math library's vectorized loops against NumPy, on 2**20 float32.

    python bench/cpu/mathlib.py [exp log sin ...]

Each function is compiled into a loop `out[i] = f(x[i])` the way the CPU back end compiles
kernels (llvm_tools.compile_ir at O3 for the host, loaded by the back end's loader) and timed
with `naiad.testing.do_bench` (median); NumPy's ufunc writes into a preallocated output too.
Prints elements per nanosecond for both and their ratio.
"""

from __future__ import annotations

import ctypes
import platform
import sys

import numpy as np
from llvmlite import ir

from naiad.backends.cpu import llvm_tools, loader
from naiad.backends.cpu.mathlib import math_function
from naiad.backends.cpu.target import host_target
from naiad.testing import do_bench

SIZE = 1 << 20
# name: (NumPy ufunc, input range)
FUNCTIONS = {
    "exp": (np.exp, (-80.0, 80.0)),
    "exp2": (np.exp2, (-120.0, 120.0)),
    "log": (np.log, (1e-30, 1e30)),
    "sin": (np.sin, (-1e4, 1e4)),
    "cos": (np.cos, (-1e4, 1e4)),
    "tanh": (np.tanh, (-10.0, 10.0)),
    "erf": (None, (-5.0, 5.0)),
}


def loop_ir(name: str, machine) -> str:
    """`void map(float *out, float *x, i64 n)`: out[i] = name(x[i])."""
    f32, i64 = ir.FloatType(), ir.IntType(64)
    module = ir.Module(name=f"bench_{name}")
    module.triple = machine.triple
    module.data_layout = llvm_tools.data_layout(machine)
    kernel_type = ir.FunctionType(ir.VoidType(), [f32.as_pointer(), f32.as_pointer(), i64])
    kernel = ir.Function(module, kernel_type, "map")
    out, x, n = kernel.args
    out.add_attribute("noalias")
    x.add_attribute("noalias")
    entry, body, done = (kernel.append_basic_block(label) for label in ("entry", "body", "done"))
    builder = ir.IRBuilder(entry)
    builder.cbranch(builder.icmp_signed(">", n, i64(0)), body, done)
    builder.position_at_end(body)
    index = builder.phi(i64)
    index.add_incoming(i64(0), entry)
    value = builder.load(builder.gep(x, [index], inbounds=True))
    function = math_function(module, name, f32, host_target().features)
    result = builder.call(function, [value])
    builder.store(result, builder.gep(out, [index], inbounds=True))
    following = builder.add(index, i64(1))
    index.add_incoming(following, body)
    builder.cbranch(builder.icmp_signed("<", following, n), body, done)
    builder.position_at_end(done)
    builder.ret_void()
    return str(module)


def compiled_loop(name: str):
    machine = host_target().machine
    code = llvm_tools.compile_ir(loop_ir(name, machine), machine, name=f"bench_{name}")
    loaded = loader.load_object(code, ["map"], name=f"bench_{name}")
    signature = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
    return loaded, signature(loaded.address("map"))


def elements_per_ns(ms: float) -> float:
    return SIZE / (ms * 1e6)


def measure(name: str, rng) -> tuple[float, float | None]:
    """(Naiad, NumPy) elements per ns for function `name`; NumPy's is None where it has none."""
    ufunc, (lo, hi) = FUNCTIONS[name]
    if name == "log":
        x = np.exp(rng.uniform(np.log(lo), np.log(hi), SIZE)).astype(np.float32)
    else:
        x = rng.uniform(lo, hi, SIZE).astype(np.float32)
    out = np.empty_like(x)
    _handle, run = compiled_loop(name)
    ours = elements_per_ns(do_bench(lambda: run(out.ctypes.data, x.ctypes.data, SIZE)))
    theirs = None if ufunc is None else elements_per_ns(do_bench(lambda: ufunc(x, out=out)))
    return ours, theirs


def main(names: list[str]) -> None:
    rng = np.random.default_rng(0)
    print(f"{platform.machine()} {host_target().cpu}, NumPy {np.__version__}, {SIZE} float32")
    print(f"{'function':<8} {'naiad el/ns':>12} {'numpy el/ns':>12} {'naiad/numpy':>12}")
    for name in names or list(FUNCTIONS):
        ours, theirs = measure(name, rng)
        if theirs is None:
            print(f"{name:<8} {ours:>12.2f} {'-':>12} {'-':>12}")
        else:
            print(f"{name:<8} {ours:>12.2f} {theirs:>12.2f} {ours / theirs:>12.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
