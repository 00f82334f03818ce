"""Naiad's interpreter against Triton's language rules: the same kernel source through both.

Every kernel below is written once, as text, and generated twice into a temporary directory:
after `import triton.language as tl` with `jit = triton.jit`, and after `import naiad.language as
tl` with `jit = naiad.jit`. Both run on CPU torch tensors (Triton through its interpreter,
`TRITON_INTERPRET=1`). Each result goes through `emit`, a plain helper of the generated module: it
records the result's dtype and shape, bitcasts the value to the integer of its width, widens that
to int64 and stores it, so the store converts nothing and the values compare bit for bit. A misuse
must raise in both (the messages may differ).

Run: TRITON_INTERPRET=1 python -m pytest tests/differential/test_vs_triton.py -m triton

Triton's interpreter is not the GPU. Where it computes something else than Triton's compiled code,
Naiad follows the GPU (ARCHITECTURE.md, "Semantics") and the case is an expected difference,
named in `EXPECTED` / the `_known_*` helpers below with the reason; the lanes concerned are then
checked against the GPU's rule instead. NaN payloads are never compared (NumPy's NaNs are not the
GPU's canonical NaN in either interpreter); the sign of zero is.
"""

from __future__ import annotations

import importlib.util
import math
import os
import sys
import textwrap
import warnings
from dataclasses import dataclass, field

import numpy as np
import pytest

os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported: its jit reads it at decoration

try:
    import torch
    import triton  # noqa: F401
    import triton.language  # noqa: F401
except Exception:  # noqa: BLE001  (no triton, or one that cannot load here)
    pytest.skip("needs triton (and torch) for the differential test", allow_module_level=True)

import ml_dtypes

import naiad  # noqa: F401

pytestmark = pytest.mark.triton

N = 32  # lanes per kernel
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
FLOATS = ("fp16", "bf16", "fp32", "fp64")
DTYPES = INTS + FLOATS
FP8 = ("fp8e4nv", "fp8e5")

TORCH = {
    "int1": torch.bool, "int8": torch.int8, "int16": torch.int16, "int32": torch.int32,
    "int64": torch.int64, "uint8": torch.uint8, "uint16": torch.uint16, "uint32": torch.uint32,
    "uint64": torch.uint64, "fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32,
    "fp64": torch.float64, "fp8e4nv": torch.float8_e4m3fn, "fp8e5": torch.float8_e5m2,
}
NUMPY = {
    "int1": np.bool_, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
    "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
    "fp16": np.float16, "bf16": ml_dtypes.bfloat16, "fp32": np.float32, "fp64": np.float64,
    "fp8e4nv": ml_dtypes.float8_e4m3fn, "fp8e5": ml_dtypes.float8_e5m2,
}
WIDTH = {"int1": 1, "fp16": 16, "bf16": 16, "fp32": 32, "fp64": 64, "fp8e4nv": 8, "fp8e5": 8}
WIDTH.update({name: int(name.lstrip("uint")) for name in INTS})


# -------------------------------------------------------------------------------------------------
# The kernels: one source, two front ends
# -------------------------------------------------------------------------------------------------
HEADER = '''
import {lib}
import {lib}.language as tl

jit = {lib}.jit
RESULTS = []  # (dtype name, shape) of each emitted value, in order
_INT = {{8: tl.int8, 16: tl.int16, 32: tl.int32, 64: tl.int64}}


def emit(out_ptr, value, slot=0):
    """Record `value`'s type and store its bits (as int64) at out_ptr[slot * 64:]."""
    if not isinstance(value, tl.tensor):
        RESULTS.append(("python:" + type(value).__name__, ()))
        return
    shape = tuple(int(s) for s in value.shape)
    RESULTS.append((value.dtype.name, shape))
    bits = value.dtype.primitive_bitwidth
    v = value.to(tl.int8) if bits == 1 else value.to(_INT[bits], bitcast=True)
    v = v.to(tl.int64)
    numel = 1
    for s in shape:
        numel *= s
    if numel == 1:
        tl.store(out_ptr + slot * 64, tl.reshape(v, ()) if shape else v)
    else:
        tl.store(out_ptr + slot * 64 + tl.arange(0, numel), tl.reshape(v, [numel]))
'''

BINARY_OPS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%",
              "and": "&", "or": "|", "xor": "^", "shl": "<<", "shr": ">>", "lt": "<", "le": "<=",
              "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}

KERNELS = []
for _name, _op in BINARY_OPS.items():
    KERNELS.append(f'''
@jit
def tt_{_name}(out_ptr, x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    emit(out_ptr, tl.load(x_ptr + offs) {_op} tl.load(y_ptr + offs))


@jit
def ts_{_name}(out_ptr, x_ptr, N: tl.constexpr, S: tl.constexpr):
    emit(out_ptr, tl.load(x_ptr + tl.arange(0, N)) {_op} S)


@jit
def st_{_name}(out_ptr, x_ptr, N: tl.constexpr, S: tl.constexpr):
    emit(out_ptr, S {_op} tl.load(x_ptr + tl.arange(0, N)))


@jit
def tr_{_name}(out_ptr, x_ptr, s, N: tl.constexpr):
    emit(out_ptr, tl.load(x_ptr + tl.arange(0, N)) {_op} s)


@jit
def t0_{_name}(out_ptr, x_ptr, y_ptr, N: tl.constexpr):
    emit(out_ptr, tl.load(x_ptr + tl.arange(0, N)) {_op} tl.load(y_ptr))
''')

KERNELS.append('''
@jit
def unary_neg(out_ptr, x_ptr, N: tl.constexpr):
    emit(out_ptr, -tl.load(x_ptr + tl.arange(0, N)))


@jit
def unary_invert(out_ptr, x_ptr, N: tl.constexpr):
    emit(out_ptr, ~tl.load(x_ptr + tl.arange(0, N)))


@jit
def unary_not(out_ptr, x_ptr, N: tl.constexpr):
    emit(out_ptr, not tl.load(x_ptr + tl.arange(0, N)))


@jit
def unary_not_scalar(out_ptr, x_ptr):
    emit(out_ptr, not tl.load(x_ptr))


@jit
def unary_plus(out_ptr, x_ptr, N: tl.constexpr):
    emit(out_ptr, +tl.load(x_ptr + tl.arange(0, N)))


@jit
def cast(out_ptr, x_ptr, N: tl.constexpr, DST: tl.constexpr, ROUNDING: tl.constexpr):
    emit(out_ptr, tl.load(x_ptr + tl.arange(0, N)).to(DST, fp_downcast_rounding=ROUNDING))


@jit
def cast_fn(out_ptr, x_ptr, N: tl.constexpr, DST: tl.constexpr):
    emit(out_ptr, tl.cast(tl.load(x_ptr + tl.arange(0, N)), DST))


@jit
def bitcast(out_ptr, x_ptr, N: tl.constexpr, DST: tl.constexpr):
    emit(out_ptr, tl.load(x_ptr + tl.arange(0, N)).to(DST, bitcast=True))


@jit
def store_cast(out_ptr, x_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))
''')

MATH_1 = ("exp", "exp2", "log", "log2", "sin", "cos", "sqrt", "sqrt_rn", "rsqrt", "erf", "floor",
          "ceil", "abs")
for _f in MATH_1:
    KERNELS.append(f'''
@jit
def math_{_f}(out_ptr, x_ptr, N: tl.constexpr):
    emit(out_ptr, tl.{_f}(tl.load(x_ptr + tl.arange(0, N))))
''')

KERNELS.append('''
@jit
def math_fma(out_ptr, x_ptr, y_ptr, z_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    emit(out_ptr, tl.fma(tl.load(x_ptr + offs), tl.load(y_ptr + offs), tl.load(z_ptr + offs)))


@jit
def math_div_rn(out_ptr, x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    emit(out_ptr, tl.div_rn(tl.load(x_ptr + offs), tl.load(y_ptr + offs)))


@jit
def math_fdiv(out_ptr, x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    emit(out_ptr, tl.fdiv(tl.load(x_ptr + offs), tl.load(y_ptr + offs)))


@jit
def math_umulhi(out_ptr, x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    emit(out_ptr, tl.umulhi(tl.load(x_ptr + offs), tl.load(y_ptr + offs)))


@jit
def math_cdiv(out_ptr, x_ptr, N: tl.constexpr, D: tl.constexpr):
    emit(out_ptr, tl.cdiv(tl.load(x_ptr + tl.arange(0, N)), D))


@jit
def ext_minimum(out_ptr, x_ptr, y_ptr, N: tl.constexpr, NAN: tl.constexpr):
    offs = tl.arange(0, N)
    emit(out_ptr, tl.minimum(tl.load(x_ptr + offs), tl.load(y_ptr + offs), propagate_nan=NAN))


@jit
def ext_maximum(out_ptr, x_ptr, y_ptr, N: tl.constexpr, NAN: tl.constexpr):
    offs = tl.arange(0, N)
    emit(out_ptr, tl.maximum(tl.load(x_ptr + offs), tl.load(y_ptr + offs), propagate_nan=NAN))


@jit
def ext_minimum_s(out_ptr, x_ptr, N: tl.constexpr, S: tl.constexpr):
    emit(out_ptr, tl.minimum(tl.load(x_ptr + tl.arange(0, N)), S))


@jit
def ext_maximum_s(out_ptr, x_ptr, N: tl.constexpr, S: tl.constexpr):
    emit(out_ptr, tl.maximum(tl.load(x_ptr + tl.arange(0, N)), S))


@jit
def ext_clamp(out_ptr, x_ptr, lo_ptr, hi_ptr, N: tl.constexpr, NAN: tl.constexpr):
    offs = tl.arange(0, N)
    emit(out_ptr, tl.clamp(tl.load(x_ptr + offs), tl.load(lo_ptr + offs), tl.load(hi_ptr + offs),
                           propagate_nan=NAN))


@jit
def ext_clamp_s(out_ptr, x_ptr, N: tl.constexpr, LO: tl.constexpr, HI: tl.constexpr):
    emit(out_ptr, tl.clamp(tl.load(x_ptr + tl.arange(0, N)), LO, HI))


@jit
def sel_where(out_ptr, c_ptr, x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    emit(out_ptr, tl.where(tl.load(c_ptr + offs), tl.load(x_ptr + offs), tl.load(y_ptr + offs)))


@jit
def sel_where_s(out_ptr, c_ptr, x_ptr, N: tl.constexpr, S: tl.constexpr):
    offs = tl.arange(0, N)
    emit(out_ptr, tl.where(tl.load(c_ptr + offs), tl.load(x_ptr + offs), S))


@jit
def sel_where_ss(out_ptr, c_ptr, N: tl.constexpr, A: tl.constexpr, B: tl.constexpr):
    emit(out_ptr, tl.where(tl.load(c_ptr + tl.arange(0, N)) > 0, A, B))
''')

for _f in ("sum", "max", "min", "argmax", "argmin", "xor_sum"):
    _axis = "0" if _f.startswith("arg") else "None"
    KERNELS.append(f'''
@jit
def red_{_f}(out_ptr, x_ptr, N: tl.constexpr):
    emit(out_ptr, tl.{_f}(tl.load(x_ptr + tl.arange(0, N)), {_axis}))


@jit
def red2_{_f}(out_ptr, x_ptr, AXIS: tl.constexpr, KEEP: tl.constexpr):
    offs = tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :]
    emit(out_ptr, tl.{_f}(tl.load(x_ptr + offs), AXIS, keep_dims=KEEP))
''')

KERNELS.append('''
@jit
def red_max_idx(out_ptr, x_ptr, N: tl.constexpr):
    v, i = tl.max(tl.load(x_ptr + tl.arange(0, N)), 0, return_indices=True)
    emit(out_ptr, v, 0)
    emit(out_ptr, i, 1)


@jit
def red_min_idx(out_ptr, x_ptr, N: tl.constexpr):
    v, i = tl.min(tl.load(x_ptr + tl.arange(0, N)), 0, return_indices=True)
    emit(out_ptr, v, 0)
    emit(out_ptr, i, 1)


@jit
def red_sum_dtype(out_ptr, x_ptr, N: tl.constexpr, DTYPE: tl.constexpr):
    emit(out_ptr, tl.sum(tl.load(x_ptr + tl.arange(0, N)), 0, dtype=DTYPE))


@jit
def scan_cumsum(out_ptr, x_ptr, N: tl.constexpr, REVERSE: tl.constexpr):
    emit(out_ptr, tl.cumsum(tl.load(x_ptr + tl.arange(0, N)), 0, reverse=REVERSE))


@jit
def scan_cumprod(out_ptr, x_ptr, N: tl.constexpr, REVERSE: tl.constexpr):
    emit(out_ptr, tl.cumprod(tl.load(x_ptr + tl.arange(0, N)), 0, reverse=REVERSE))


@jit
def sort_sort(out_ptr, x_ptr, N: tl.constexpr, DESCENDING: tl.constexpr):
    emit(out_ptr, tl.sort(tl.load(x_ptr + tl.arange(0, N)), descending=DESCENDING))


@jit
def sort_sort2(out_ptr, x_ptr, DESCENDING: tl.constexpr):
    offs = tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :]
    emit(out_ptr, tl.sort(tl.load(x_ptr + offs), descending=DESCENDING))


@jit
def sort_topk(out_ptr, x_ptr, N: tl.constexpr, K: tl.constexpr):
    emit(out_ptr, tl.topk(tl.load(x_ptr + tl.arange(0, N)), K))


@jit
def sort_flip(out_ptr, x_ptr, N: tl.constexpr):
    emit(out_ptr, tl.flip(tl.load(x_ptr + tl.arange(0, N))))


@jit
def sort_flip2(out_ptr, x_ptr, DIM: tl.constexpr):
    offs = tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :]
    emit(out_ptr, tl.flip(tl.load(x_ptr + offs), DIM))


@jit
def rng_randint(out_ptr, seed, off_ptr, N: tl.constexpr):
    emit(out_ptr, tl.randint(seed, tl.load(off_ptr + tl.arange(0, N))))


@jit
def rng_rand(out_ptr, seed, off_ptr, N: tl.constexpr):
    emit(out_ptr, tl.rand(seed, tl.load(off_ptr + tl.arange(0, N))))


@jit
def rng_randn(out_ptr, seed, off_ptr, N: tl.constexpr):
    emit(out_ptr, tl.randn(seed, tl.load(off_ptr + tl.arange(0, N))))


@jit
def rng_randint4x(out_ptr, seed, off_ptr, N: tl.constexpr):
    a, b, c, d = tl.randint4x(seed, tl.load(off_ptr + tl.arange(0, N)))
    emit(out_ptr, a, 0)
    emit(out_ptr, b, 1)
    emit(out_ptr, c, 2)
    emit(out_ptr, d, 3)


@jit
def rng_randint_arange(out_ptr, seed, N: tl.constexpr):
    emit(out_ptr, tl.randint(seed, tl.arange(0, N)))
''')

LITERALS = ("0", "1", "-1", "2**31 - 1", "2**31", "-2**31", "-2**31 - 1", "2**32 - 1", "2**32",
            "2**63 - 1", "2**63", "-2**63", "2**64 - 1", "True", "False", "1.5", "-0.0", "1e50",
            "1e-50", "3.4e38", "3.5e38", "1e-45", "float('inf')", "float('nan')")
for _i, _lit in enumerate(LITERALS):
    KERNELS.append(f'''
@jit
def lit_{_i}(out_ptr):
    x = {_lit}
    emit(out_ptr, x)


@jit
def litop_{_i}(out_ptr, x_ptr, N: tl.constexpr):
    emit(out_ptr, tl.load(x_ptr + tl.arange(0, N)) + {_lit})
''')

KERNELS.append('''
@jit
def const_assign(out_ptr, x_ptr, N: tl.constexpr, C: tl.constexpr):
    c = C
    emit(out_ptr, c, 0)
    emit(out_ptr, tl.load(x_ptr + tl.arange(0, N)) + c, 1)


@jit
def const_annotated(out_ptr, x_ptr, N: tl.constexpr, C: tl.constexpr):
    c: tl.constexpr = C
    emit(out_ptr, tl.load(x_ptr + tl.arange(0, N)) + c, 0)


@jit
def const_direct(out_ptr, x_ptr, N: tl.constexpr, C: tl.constexpr):
    emit(out_ptr, tl.load(x_ptr + tl.arange(0, N)) + C, 0)


@jit
def const_to_tensor(out_ptr, x_ptr, N: tl.constexpr, C: tl.constexpr):
    emit(out_ptr, tl.load(x_ptr + tl.arange(0, N)) + tl.to_tensor(C), 0)


@jit
def const_full(out_ptr, N: tl.constexpr, C: tl.constexpr, DTYPE: tl.constexpr):
    emit(out_ptr, tl.full((N,), C, DTYPE), 0)


@jit
def loop_wrap_add(out_ptr, n, STEP: tl.constexpr):
    acc = 0
    for i in range(n):
        acc += STEP
    emit(out_ptr, acc)


@jit
def loop_wrap_mul(out_ptr, n):
    acc = 1
    for i in range(n):
        acc = acc * 3 + 1
    emit(out_ptr, acc)


@jit
def loop_wrap_block(out_ptr, n, N: tl.constexpr):
    acc = tl.full((N,), 2**31 - 8, tl.int32)
    for i in range(n):
        acc += tl.arange(0, N)
    emit(out_ptr, acc)


@jit
def loop_while(out_ptr, n):
    acc = 1
    i = 0
    while i < n:
        acc = acc * 5
        i += 1
    emit(out_ptr, acc)


@jit
def loop_index_sum(out_ptr, lo, hi, STEP: tl.constexpr):
    acc = 0
    for i in range(lo, hi, STEP):
        acc += i
    emit(out_ptr, acc)


@jit
def loop_index_type(out_ptr, x_ptr, n, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    for i in range(n, n + 1):
        x = x + i
    emit(out_ptr, x)
''')


def _load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    """(triton module, naiad module): the generated kernels, imported from real files."""
    root = tmp_path_factory.mktemp("differential")
    body = "\n".join(KERNELS)
    modules = []
    for lib in ("triton", "naiad"):
        path = root / f"kernels_{lib}.py"
        path.write_text(textwrap.dedent(HEADER.format(lib=lib)) + body)
        modules.append(_load_module(str(path), f"_naiad_differential_{lib}"))
    return tuple(modules)


# -------------------------------------------------------------------------------------------------
# Running a kernel through both
# -------------------------------------------------------------------------------------------------
@dataclass
class Outcome:
    error: BaseException | None = None
    results: list = field(default_factory=list)  # [(dtype name, shape)]
    bits: np.ndarray | None = None  # int64, 4 slots of 64

    def values(self, slot=0):
        """The emitted value of `slot` as a NumPy array of its own dtype."""
        dtype, shape = self.results[slot]
        numel = math.prod(shape) if shape else 1
        raw = self.bits[slot * 64: slot * 64 + numel]
        if dtype == "int1":
            return raw.astype(np.bool_).reshape(shape)
        width = WIDTH[dtype]
        return raw.astype(f"int{width}").view(NUMPY[dtype]).reshape(shape)


def launch(module, name, args, kwargs, grid=(1,)) -> Outcome:
    """Run `module.name[grid](out, *args, **kwargs)`; arrays in `args` are copied first."""
    out = torch.zeros(4 * 64, dtype=torch.int64)
    args = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    module.RESULTS.clear()
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            getattr(module, name)[grid](out, *args, **kwargs)
        except Exception as error:  # noqa: BLE001  (any misuse error; compared by presence)
            return Outcome(error=error)
    return Outcome(results=list(module.RESULTS), bits=out.numpy().copy())


def both(kernels, name, *args, **kwargs):
    return tuple(launch(module, name, args, kwargs) for module in kernels)


def tensor_of(values, dtype: str) -> torch.Tensor:
    """A torch tensor of `dtype` holding `values` (a NumPy array of NUMPY[dtype] or castable)."""
    array = np.asarray(values)
    if array.dtype != NUMPY[dtype]:
        array = array.astype(NUMPY[dtype])
    if dtype == "int1":
        return torch.from_numpy(array.copy())
    width = WIDTH[dtype]
    bits = array.view(f"int{width}").copy()
    return torch.from_numpy(bits).view(TORCH[dtype])


def bits_equal(a: np.ndarray, b: np.ndarray, dtype: str) -> np.ndarray:
    """Lane-wise equality of the bit patterns; any NaN equals any NaN."""
    a, b = np.asarray(a), np.asarray(b)
    if dtype == "int1":
        return a == b
    width = WIDTH[dtype]
    same = a.view(f"uint{width}") == b.view(f"uint{width}")
    if dtype in FLOATS or dtype in FP8:
        fa, fb = a.astype(np.float64), b.astype(np.float64)
        same |= np.isnan(fa) & np.isnan(fb)
    return same


class Mismatches:
    """Collects differences of one test so that a failure lists all of them."""

    def __init__(self):
        self.items = []

    def add(self, case, message):
        self.items.append(f"{case}: {message}")

    def check(self):
        if self.items:
            shown = "\n  ".join(self.items[:60])
            more = f"\n  ... and {len(self.items) - 60} more" if len(self.items) > 60 else ""
            pytest.fail(f"{len(self.items)} differences from Triton:\n  {shown}{more}")


def compare(case, t: Outcome, n: Outcome, mism: Mismatches, lane_ok=None, slots=None):
    """Compare two outcomes: raised or not, result types, then values (bit for bit).

    `lane_ok(slot, dtype, triton_values, naiad_values) -> bool array` may accept lanes where a
    documented expected difference applies (it checks them against the GPU's rule itself).
    """
    if (t.error is None) != (n.error is None):
        which = "only Triton" if t.error is not None else "only Naiad"
        error = t.error if t.error is not None else n.error
        mism.add(case, f"{which} raised {type(error).__name__}: {str(error)[:200]}")
        return
    if t.error is not None:
        return
    if t.results != n.results:
        mism.add(case, f"result types differ: triton {t.results} naiad {n.results}")
        return
    for slot in range(len(t.results)) if slots is None else slots:
        dtype = t.results[slot][0]
        if dtype.startswith("python:"):
            continue
        tv, nv = t.values(slot), n.values(slot)
        same = bits_equal(tv, nv, dtype)
        if lane_ok is not None and not same.all():
            same = same | lane_ok(slot, dtype, tv, nv)
        if not same.all():
            lanes = np.argwhere(~same.reshape(-1)).ravel()[:4]
            flat_t, flat_n = tv.reshape(-1), nv.reshape(-1)
            shown = ", ".join(f"[{i}] triton {flat_t[i]!r} naiad {flat_n[i]!r}" for i in lanes)
            mism.add(case, f"{int((~same).sum())} lanes of {dtype} differ: {shown}")


# -------------------------------------------------------------------------------------------------
# Inputs
# -------------------------------------------------------------------------------------------------
def int_values(dtype: str) -> np.ndarray:
    """N values of an integer type: signs, extremes, small numbers, shift amounts around the width."""
    width = WIDTH[dtype]
    signed = not dtype.startswith("u")
    lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
    raw = [0, 1, -1, 2, -2, 3, -3, 5, -5, 7, -7, 13, -13, 100, -100, width - 1, width, width + 1,
           2 * width, lo, lo + 1, hi, hi - 1, hi // 2, lo // 2 if signed else hi // 3, 127, 128,
           255, -129, 0x5A5A5A5A5A5A5A5A, 31, 6]
    mod = 1 << width
    wrapped = [((v - lo) % mod) + lo for v in raw[:N]]
    return np.array(wrapped, dtype=NUMPY[dtype])


FLOAT_RAW = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 3.0, 0.1, 1 / 3, -7.75, 100.25, 1e-3,
             math.inf, -math.inf, math.nan, 65504.0, 65520.0, -1e10, 2.0**31, -(2.0**31) - 1,
             6e-8, 1e-40, 3.4e38, 1e300, 2.0**-126, 255.5, -129.0, 2.5, 448.0, 57344.0]


def float_values(dtype: str) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.array(FLOAT_RAW[:N], np.float64).astype(NUMPY[dtype])


def values_of(dtype: str) -> np.ndarray:
    return int_values(dtype) if dtype in INTS else float_values(dtype)


def permuted(dtype: str, seed: int) -> np.ndarray:
    values = values_of(dtype)
    return values[np.random.default_rng(seed).permutation(N)]


# -------------------------------------------------------------------------------------------------
# Expected differences: where Triton's interpreter is not the GPU
# -------------------------------------------------------------------------------------------------
def _floats_wide(values, dtype):
    return np.asarray(values).astype(np.float64) if dtype in FLOATS or dtype in FP8 else values


# -------------------------------------------------------------------------------------------------
# Binary operators
# -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("op", list(BINARY_OPS))
def test_binary_tensor_tensor(kernels, op):
    mism = Mismatches()
    for a in DTYPES:
        x = tensor_of(permuted(a, 1), a)
        for b in DTYPES:
            y = tensor_of(permuted(b, 2), b)
            t, n = both(kernels, f"tt_{op}", x, y, N=N)
            compare(f"{a} {BINARY_OPS[op]} {b}", t, n, mism)
    mism.check()
