"""Compiled Triton's front end as the oracle, where Triton's interpreter runs the kernel as plain
Python (`not`, `and`, unary `+`, `abs()`, loop indices, loop-carried types, float arguments, the
rounding of constants): the kernels below are compiled to TTIR for sm_90 in a child process (no GPU
needed); `compile_frontend` gives what it printed, or the error it raised, for each request.
"""

import json
import os
import subprocess
import sys

import pytest

FRONTEND = """
import triton.language as tl
from triton.runtime.jit import JITFunction as jit


@jit
def fe_not(x_ptr):
    y = not tl.load(x_ptr + tl.arange(0, 16))
    tl.static_print("RESULT", y.dtype)


@jit
def fe_and(x_ptr):
    y = tl.load(x_ptr) and tl.load(x_ptr + 1)
    tl.static_print("RESULT", y.dtype)


@jit
def fe_or_block(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    y = x or x
    tl.static_print("RESULT", y.dtype)


@jit
def fe_plus(x_ptr):
    y = +tl.load(x_ptr + tl.arange(0, 16))
    tl.static_print("RESULT", y.dtype)


@jit
def fe_abs(x_ptr):
    y = abs(tl.load(x_ptr + tl.arange(0, 16)))
    tl.static_print("RESULT", y.dtype)


@jit
def fe_loop_index(x_ptr, n):
    x = tl.load(x_ptr + tl.arange(0, 16))
    for i in range(n, n + 1):
        y = x + i
        tl.static_print("RESULT", y.dtype)


@jit
def fe_loop_carried(x_ptr, n):
    x = tl.load(x_ptr + tl.arange(0, 16))
    for i in range(n, n + 1):
        x = x + i
    tl.static_print("RESULT", x.dtype)


@jit
def fe_float_arg(x_ptr, s):
    y = tl.load(x_ptr + tl.arange(0, 16)) + s
    tl.static_print("RESULT", y.dtype)


@jit
def fe_const(x_ptr, S: tl.constexpr):
    y = tl.load(x_ptr + tl.arange(0, 16)) + S
    tl.static_print("RESULT", y.dtype)


@jit
def fe_topk1(x_ptr):
    y = tl.topk(tl.load(x_ptr + tl.arange(0, 16)), 1)
    tl.static_print("RESULT", y.dtype)


@jit
def fe_flip(x_ptr):
    y = tl.flip(tl.load(x_ptr + tl.arange(0, 16)))
    tl.static_print("RESULT", y.dtype)
"""


# Compiled Triton's front end runs in a child process without TRITON_INTERPRET: there the
# standard library is compiled (here its jit functions are interpreted ones, which patch
# `triton.language` for good once called), and this process's patched module stays out of it.
FRONTEND_RUNNER = """
import contextlib, io, json, sys, warnings
sys.path.insert(0, sys.argv[1])
import triton
import fe_kernels
from triton._C.libtriton import ir
from triton.backends.compiler import GPUTarget
from triton.compiler.compiler import make_backend

target = GPUTarget("cuda", 90, 32)
backend = make_backend(target)
options = backend.parse_options({})
results = {}
for key, name, signature, constexprs in json.load(open(sys.argv[2])):
    src = triton.compiler.ASTSource(fn=getattr(fe_kernels, name), signature=signature,
                                    constexprs={tuple(k): v for k, v in constexprs})
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()), \\
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ttir = src.make_ir(target, options, backend.get_codegen_implementation(options),
                               backend.get_module_map(), context)
    except Exception as error:
        results[key] = ["error", type(error).__name__ + ": " + str(error).strip()[-1500:], None]
        continue
    printed = [line.split("RESULT", 1)[1].strip() for line in out.getvalue().splitlines()
               if "RESULT" in line]
    results[key] = ["ok", printed, str(ttir)]
json.dump(results, open(sys.argv[3], "w"))
"""


# Python floats added to fp16 / bf16 / fp32 tensors: test_compiled_scalar_constants reads the
# constant compiled Triton makes of each.
CONSTANTS = (0.1, 1 + 2**-11 + 2**-40, 1 + 2**-8 + 2**-40, -0.0, 1e-7, 3.0e-5, 65519.0, 12345.678)


def frontend_requests():
    """(key, kernel, signature, constexprs) of every front-end compile the tests read."""
    requests = []
    for a in ("int1", "int32", "fp32"):
        for name in ("fe_not", "fe_and", "fe_or_block", "fe_plus", "fe_abs", "fe_topk1", "fe_flip"):
            requests.append((f"{name}:{a}", name, {"x_ptr": _ptr(a)}, []))
    for a in ("int8", "uint8", "int64", "fp16"):
        for bits in ("i32", "i64"):
            for name in ("fe_loop_index", "fe_loop_carried"):
                requests.append((f"{name}:{a}:{bits}", name, {"x_ptr": _ptr(a), "n": bits}, []))
        requests.append((f"fe_float_arg:{a}", "fe_float_arg", {"x_ptr": _ptr(a), "s": "fp32"}, []))
    for a in ("fp16", "bf16", "fp32"):
        for s in CONSTANTS:
            signature = {"x_ptr": _ptr(a), "S": "constexpr"}
            requests.append((f"fe_const:{a}:{s!r}", "fe_const", signature, [[[1], s]]))
    return requests


def compile_frontend(root):
    """key -> ("ok", static_print output, TTIR) or ("error", message, None): compiled Triton's
    front end for sm_90 (AST -> TTIR; no GPU needed), run in a child process under `root`."""
    (root / "fe_kernels.py").write_text(FRONTEND)
    (root / "runner.py").write_text(FRONTEND_RUNNER)
    (root / "requests.json").write_text(json.dumps(frontend_requests()))
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run(
        [
            sys.executable,
            str(root / "runner.py"),
            str(root),
            str(root / "requests.json"),
            str(root / "results.json"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        pytest.skip(f"compiled Triton's front end is not available here: {done.stderr[-500:]}")
    return json.loads((root / "results.json").read_text())


_SIG = {"int1": "i1", "fp16": "fp16", "bf16": "bf16", "fp32": "fp32", "fp64": "fp64"}


def _ptr(dtype):
    return "*" + _SIG.get(dtype, dtype.replace("uint", "u").replace("int", "i"))
