"""Host code links on every CPU model: LLVM's runtime-library calls resolve to Naiad's own
helpers (runtime_library.py), and the helpers compute what compiler-rt's would.

LLVM calls `__truncsfbf2` on x86-64 without AVX512-BF16, `__extendhfsf2` without F16C, `__divti3`
everywhere; a call that resolves nowhere killed the test process on such machines. These tests
compile for CPU models other than this one (tests/host_code/models.py), so what a user's CPU
would need is checked here whatever CPU runs the suite.
"""

from __future__ import annotations

import ctypes
import zlib

import ml_dtypes
import numpy as np
import pytest
from host_code import undefined_symbols
from host_code.models import CHECKED_MODELS, model_id, unresolved

import naiad
import naiad.language as tl
from naiad.backends.cpu import llvm_tools, loader, runtime_library
from naiad.backends.cpu.compiler import compile_cpu
from naiad.backends.cpu.target import CpuTarget, host_target
from naiad.runtime.compiler import build_ttir

MODELS = pytest.mark.parametrize("model", CHECKED_MODELS, ids=model_id)

# Every operation the survey of LLVM 22 found lowered to a runtime call on some model.
_OPERATIONS = {
    "f32_bf16": ("float", "bfloat", "fptrunc float {x} to bfloat"),
    "f64_bf16": ("double", "bfloat", "fptrunc double {x} to bfloat"),
    "f32_f16": ("float", "half", "fptrunc float {x} to half"),
    "f64_f16": ("double", "half", "fptrunc double {x} to half"),
    "f16_f32": ("half", "float", "fpext half {x} to float"),
    "f16_f64": ("half", "double", "fpext half {x} to double"),
    "bf16_f32": ("bfloat", "float", "fpext bfloat {x} to float"),
    "i64_f16": ("i64", "half", "sitofp i64 {x} to half"),
    "f16_i64": ("half", "i64", "fptosi half {x} to i64"),
    "i32_bf16": ("i32", "bfloat", "sitofp i32 {x} to bfloat"),
    "add_f16": ("half", "half", "fadd half {x}, {x}"),
    "mul_bf16": ("bfloat", "bfloat", "fmul bfloat {x}, {x}"),
    "sdiv_i128": ("i128", "i128", "sdiv i128 {x}, {y}"),
    "udiv_i128": ("i128", "i128", "udiv i128 {x}, {y}"),
    "srem_i128": ("i128", "i128", "srem i128 {x}, {y}"),
    "urem_i128": ("i128", "i128", "urem i128 {x}, {y}"),
}


def _map_function(name: str, src: str, dst: str, expression: str) -> str:
    """`void name(src *in, src *other, dst *out, i64 n)`: out[i] = expression(in[i], other[i])."""
    body = expression.format(x="%x", y="%y")
    return f"""
define void @{name}(ptr %in, ptr %other, ptr %out, i64 %n) {{
entry:
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %at = getelementptr {src}, ptr %in, i64 %i
  %x = load {src}, ptr %at
  %other.at = getelementptr {src}, ptr %other, i64 %i
  %y = load {src}, ptr %other.at
  %r = {body}
  %to = getelementptr {dst}, ptr %out, i64 %i
  store {dst} %r, ptr %to
  %next = add i64 %i, 1
  %more = icmp ult i64 %next, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}}
"""


_ZOO = "\n".join(_map_function(name, *row) for name, row in _OPERATIONS.items())


@MODELS
def test_runtime_library_needs_nothing(model):
    machine = llvm_tools.create_target_machine(*model)
    code = llvm_tools.compile_ir(runtime_library.library_ir(), machine, "runtime")
    assert undefined_symbols(code) <= {"_GLOBAL_OFFSET_TABLE_"}


@MODELS
def test_runtime_calls_resolve_on_every_model(model):
    assert unresolved(_ZOO, model) == set()


def _cast_kernel_targets():
    return [CpuTarget("cpu:check", *model) for model in CHECKED_MODELS]


@naiad.jit
def _every_cast(x_ptr, h_ptr, b_ptr, e_ptr, i_ptr, d_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets)
    half = x.to(tl.float16)
    brain = (x * 3.0).to(tl.bfloat16)
    tl.store(h_ptr + offsets, half + half)
    tl.store(b_ptr + offsets, brain * brain)
    tl.store(e_ptr + offsets, tl.exp(half.to(tl.float8e4nv).to(tl.float32)))
    tl.store(i_ptr + offsets, brain.to(tl.int64) // (offsets.to(tl.int64) + 3))
    tl.store(d_ptr + offsets, half.to(tl.float64) / brain.to(tl.float64))


@pytest.mark.parametrize("target", _cast_kernel_targets(), ids=lambda t: f"{t.arch}-{t.cpu}")
def test_compiled_kernels_link_on_every_model(target):
    arrays = [np.zeros(16, t) for t in (np.float32, np.float16, np.float32, np.float32)]
    arrays += [np.zeros(16, np.int64), np.zeros(16, np.float64)]
    bound = _every_cast._bind((*arrays,), {"BLOCK": 16})
    module = build_ttir(_every_cast, bound, "cpu").module
    kernel = compile_cpu(module, target)
    assert undefined_symbols(kernel.obj) - set(loader.RESOLVED_NAMES) <= {"_GLOBAL_OFFSET_TABLE_"}


# -- the helpers compute what compiler-rt's do -----------------------------------------------
_NUMPY = {"float": np.float32, "double": np.float64, "half": np.float16}
_NUMPY["bfloat"] = ml_dtypes.bfloat16
_CONVERSIONS = ("f32_bf16", "f64_bf16", "f32_f16", "f64_f16", "f16_f32", "f16_f64")


@pytest.fixture(scope="module")
def baseline_zoo():
    """The zoo compiled for the baseline model of this architecture (x86-64 has neither F16C
    nor AVX512-BF16: every conversion is a call into the helpers) and linked here."""
    host = host_target()
    model = "x86-64" if host.arch == "x86_64" else "generic"
    machine = llvm_tools.create_target_machine(host.triple, model, "")
    code = llvm_tools.compile_ir(_ZOO, machine, "zoo")
    return loader.load_object(code, list(_OPERATIONS), "zoo")


def _run(zoo, name: str, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
    src, dst, _ = _OPERATIONS[name]
    out = np.empty(x.size, _NUMPY.get(dst, np.uint64))  # i128: two words, as `x`
    other = x if y is None else y
    call = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 3, ctypes.c_int64)(zoo.address(name))
    size = x.size // 2 if src == "i128" else x.size
    call(x.ctypes.data, other.ctypes.data, out.ctypes.data, size)
    return out


def _samples(dtype, rng) -> np.ndarray:
    """Random bit patterns of every exponent, the narrow formats' halfway points and specials."""
    bits = np.dtype(dtype).itemsize * 8
    unsigned = np.dtype(f"u{bits // 8}")
    random = rng.integers(0, 2**bits - 1, 20000, dtype=np.uint64, endpoint=True).astype(unsigned)
    values = random.view(dtype)
    halfway = np.arange(1, 0x7C00, 37, dtype=np.uint16).view(np.float16).astype(dtype)
    halfway = halfway * (1 + np.finfo(np.float16).eps / 2)  # between two f16 neighbours
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 65520.0, 1e-8, 3.4e38], dtype)
    return np.concatenate([values, halfway.astype(dtype), specials])


@pytest.mark.parametrize("name", _CONVERSIONS)
def test_conversion_helpers_round_as_compiler_rt(baseline_zoo, name):
    src, dst, _ = _OPERATIONS[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    if src == "half":
        x = np.arange(65536, dtype=np.uint16).view(np.float16)  # every pattern
    else:
        x = _samples(_NUMPY[src], rng)
    got = _run(baseline_zoo, name, np.ascontiguousarray(x))
    with np.errstate(all="ignore"):
        want = x.astype(_NUMPY[dst])
        nan = np.isnan(want.astype(np.float64))
        assert np.array_equal(np.isnan(got.astype(np.float64)), nan)
    assert np.array_equal(got[~nan].view(f"u{got.itemsize}"), want[~nan].view(f"u{got.itemsize}"))


def _to_i128(values) -> np.ndarray:
    return np.array([(v >> s) & (2**64 - 1) for v in values for s in (0, 64)], np.uint64)


def _from_i128(words: np.ndarray) -> list[int]:
    return [low | (high << 64) for low, high in words.reshape(-1, 2).tolist()]


@pytest.mark.parametrize("name", ["sdiv_i128", "udiv_i128", "srem_i128", "urem_i128"])
def test_division_helpers_divide_as_c(baseline_zoo, name):
    rng = np.random.default_rng(7)
    bits = rng.integers(1, 128, 600).tolist()
    numbers = [int(rng.integers(0, 2**62)) << max(b - 62, 0) for b in bits]
    signs = rng.choice([-1, 1], 600).tolist()
    a = [s * n for s, n in zip(signs, numbers)]
    shifts = rng.integers(0, 100, 600).tolist()
    b = [s * (n >> k) or 3 for s, n, k in zip(signs[::-1], numbers[::-1], shifts)]
    a += [-(2**127), 2**127 - 1, 5, -5, 2**128 - 1 if name[0] == "u" else -1]
    b += [-1 if name[0] == "s" else 3, -(2**127), -(2**127), 2**127 - 1, 7]
    wrap = [v % 2**128 for v in a], [v % 2**128 for v in b]
    got = _from_i128(_run(baseline_zoo, name, _to_i128(wrap[0]), _to_i128(wrap[1])))
    for x, y, g in zip(*wrap, got):
        if name[0] == "s":
            x, y = (x - 2**128 if x >= 2**127 else x), (y - 2**128 if y >= 2**127 else y)
        quotient = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
        want = quotient if "div" in name else x - quotient * y
        assert g == want % 2**128, (name, x, y)
