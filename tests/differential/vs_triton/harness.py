"""The shared machinery: the skip rule, EXPECTED, dtypes, the generated kernel files, running a
kernel through Triton's interpreter and Naiad's, bitwise comparison, and the inputs.

Importing this module skips the importing test module unless the process runs with
TRITON_INTERPRET=1 and triton imports (see the package docstring).
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

# Triton decides at import (its standard library) and at decoration whether `triton.jit` makes
# interpreted functions, so the whole process must run with TRITON_INTERPRET=1. Without it this
# module neither sets it nor imports triton: a GPU test run in the same process keeps real Triton.
if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip("run with TRITON_INTERPRET=1 (and -m triton)", allow_module_level=True)
try:
    import torch
    import triton
    import triton.language  # noqa: F401
except Exception:
    pytest.skip("needs triton (and torch) for the differential test", allow_module_level=True)

import ml_dtypes

from .kernel_sources import KERNELS

# Every test module sets `pytestmark = PYTESTMARK`. The GPU models overflow and produce NaN on
# purpose (inf inputs, out-of-range conversions).
PYTESTMARK = [pytest.mark.triton, pytest.mark.filterwarnings("ignore::RuntimeWarning")]

# Why Triton's interpreter is not the reference for a case; each key is used by the test modules.
EXPECTED = {
    "bf16": "Triton's interpreter holds bf16 as uint16 bits and applies NumPy's integer arithmetic "
    "and comparisons to them; its bf16 <-> fp32 conversion (`_convert_float`) rounds ties "
    "up and flushes subnormals, and int <-> bf16 casts reinterpret the bits. The GPU "
    "computes bf16 + - * in bf16 correctly rounded, compares values, converts exactly.",
    "get_bf16": "Triton's interpreter builder has no `get_bf16`, so a Python scalar operand with "
    "a bf16 tensor raises there; compiled Triton makes a bf16 constant (through a C "
    "float) and computes.",
    "fp8": "Triton's interpreter holds fp8 as uint8 bits (so np.negative negates the bits) and "
    "converts to and from fp8 with `_convert_float`: it rounds ties away from zero, "
    "neither saturates nor maps NaN/inf as the GPU's cvt.satfinite does. "
    "Naiad's conversions are checked against an H200 (tests/gpu/test_floats_triton.py).",
    "rtz": "Triton's interpreter truncates the bits for rtz, without the GPU's overflow rule and "
    "subnormal handling.",
    "fptoint": "Float -> int out of range or NaN is undefined in NumPy (Triton's interpreter); the "
    "GPU's cvt.rzi saturates (NaN -> 0; an 8-bit result is the low byte of the 16-bit "
    "conversion).",
    "idiv0": "Integer // and % by zero (and INT_MIN // -1): NumPy gives 0 (Triton's "
    "interpreter); Naiad gives its documented deterministic answer (docs/architecture.md: "
    "all ones (-1 signed) for //, the dividend for %, INT_MIN // -1 wraps), which these "
    "lanes are checked against. Compiled Triton's answer is not fixed (LLVM leaves it "
    "undefined): measured on an H100 and an H200 with Triton 3.6, 8/16/32-bit x // 0 is "
    "all ones as Naiad's, but 64-bit x // 0 is 0xffffffff for 0 <= x < 2**32 (LLVM's "
    "32-bit bypass of 64-bit division), and x % 0 is x when the kernel also computes "
    "x // 0 but all ones when it computes x % 0 alone.",
    "fma": "Triton's interpreter computes fma as x * y + z with two roundings; fma.rn rounds "
    "once (fp16, fp32, fp64; measured on an H200 for fp16 and fp32).",
    "fp16_scalar": "A Python float with an fp16 tensor: compiled Triton passes it to `get_fp16` "
    "as a C float (rounded to fp32 first, then to fp16); Triton's interpreter "
    "rounds the double to fp16 once.",
    "float_arg": "Triton's interpreter passes a float kernel argument as a Python float (a weak "
    "scalar); compiled Triton makes it an fp32 scalar, which takes part in promotion.",
    "bool_arith": "NumPy refuses `-` on booleans, so Triton's interpreter crashes on 0 - x for "
    "int1; compiled Triton emits arith.subi on i1 (modulo 2).",
    "all_ones": "Triton's interpreter makes the all-ones value of an unsigned type with "
    "np.full(1, -1, uint), which NumPy 2 refuses; compiled Triton xors with all ones.",
    "umulhi": "Triton's umulhi is tt.mulhiui for every integer type (the unsigned high half); "
    "its interpreter sign-extends int32 operands before an unsigned 64-bit multiply, "
    "and for 64 bits stores the high half with np.uint64, which refuses a negative one.",
    "sum_overflow": "Triton's interpreter sums int32 with np.sum (in int64) and then refuses the "
    "result that does not fit int32; the GPU's sum wraps around.",
    "keepdims": "Triton's interpreter's generic reduce keeps one dimension for axis=None, "
    "keep_dims=True; compiled Triton's `reduce` keeps every dimension (expand_ndims).",
    "triton_bug": "Triton 3.8 crashes here on any target: `flip(x)` with its default dim=None "
    "compares None in a static_assert; `topk(x, 1)` of a 1-D block reshapes a "
    "scalar. Naiad gives the documented result (flip the last dimension; the top "
    "value as a block of 1).",
    "verifier": "Triton's interpreter skips the IR verifier, which refuses these in compiled "
    "Triton (math.fma on integers).",
    "bf16_const": "Compiled Triton's `get_bf16(float)` builds the constant by parsing "
    "std::to_string(v), six decimals: below 5e-7 a bf16 constant is 0 and digits "
    "past the sixth decimal are lost. Naiad rounds the fp32 value to bf16 (not "
    "resolved: copying a string round trip is kept out of the reference).",
    "loop_index": "Triton's interpreter runs `range` as Python's, so the loop index is a Python "
    "int (a weak scalar); compiled Triton types it (int32 here), as Naiad does.",
    "not": "Triton's interpreter evaluates `not x` with Python truthiness (a block is always "
    "true); compiled Triton calls `tensor.__not__`, which inverts an int1 tensor and "
    "rejects any other type (it bitcasts to int1).",
    "signed_zero": "NumPy's fmin/fmax/minimum/maximum (Triton's interpreter) do not order -0.0 "
    "below +0.0; the GPU does (measured on an H200 with Triton 3.6: minimum(+0, "
    "-0) = -0 and maximum(-0, +0) = +0, with either NaN rule).",
    "nanarg": "Triton's interpreter runs argmax/argmin with np.nanargmax/np.nanargmin, skipping "
    "NaN; the GPU runs the combine function, in which comparisons with NaN are false "
    "(a NaN on the right of a comparison wins, on the left it loses), in the order of "
    "its layout. Naiad combines neighbours pairwise; these lanes are checked against "
    "that tree.",
    "reduce_order": "Float sums and products are compared within a norm-wise bound: Triton's "
    "interpreter accumulates with NumPy (pairwise or sequential), Naiad as a tree; "
    "neither is the GPU's order.",
}

N = 64  # lanes of the one-operand kernels
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
FLOATS = ("fp16", "bf16", "fp32", "fp64")
DTYPES = INTS + FLOATS
FP8 = ("fp8e4nv", "fp8e5")
ALL = ("int1",) + DTYPES + FP8

TORCH = {
    "int1": torch.bool,
    "int8": torch.int8,
    "int16": torch.int16,
    "int32": torch.int32,
    "int64": torch.int64,
    "uint8": torch.uint8,
    "uint16": torch.uint16,
    "uint32": torch.uint32,
    "uint64": torch.uint64,
    "fp16": torch.float16,
    "bf16": torch.bfloat16,
    "fp32": torch.float32,
    "fp64": torch.float64,
    "fp8e4nv": torch.float8_e4m3fn,
    "fp8e5": torch.float8_e5m2,
}
NUMPY = {
    "int1": np.dtype(np.bool_),
    "int8": np.dtype(np.int8),
    "int16": np.dtype(np.int16),
    "int32": np.dtype(np.int32),
    "int64": np.dtype(np.int64),
    "uint8": np.dtype(np.uint8),
    "uint16": np.dtype(np.uint16),
    "uint32": np.dtype(np.uint32),
    "uint64": np.dtype(np.uint64),
    "fp16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "fp32": np.dtype(np.float32),
    "fp64": np.dtype(np.float64),
    "fp8e4nv": np.dtype(ml_dtypes.float8_e4m3fn),
    "fp8e5": np.dtype(ml_dtypes.float8_e5m2),
}
WIDTH = {"int1": 1, "fp16": 16, "bf16": 16, "fp32": 32, "fp64": 64, "fp8e4nv": 8, "fp8e5": 8}
WIDTH.update({name: int(name.lstrip("uint")) for name in INTS})


def is_float(name):
    return name in FLOATS or name in FP8


def is_int(name):
    return name in INTS or name == "int1"


# -------------------------------------------------------------------------------------------------
# The generated kernel files: one source (kernel_sources.py), two front ends
# -------------------------------------------------------------------------------------------------
HEADER = '''
import {lib}
import {lib}.language as tl

jit = {lib}.jit
RESULTS = []  # (dtype name, shape) of each emitted value, in order
SLOT = 256
_INT = {{8: tl.int8, 16: tl.int16, 32: tl.int32, 64: tl.int64}}


def emit(out_ptr, value, slot=0):
    """Record `value`'s type and store its bits (as int64) at out_ptr[slot * SLOT:]."""
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
    if not shape:
        tl.store(out_ptr + slot * SLOT, v)
    else:
        tl.store(out_ptr + slot * SLOT + tl.arange(0, numel), tl.reshape(v, [numel]))
'''


def _load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def generate_kernels(root):
    """(triton module, naiad module): every kernel of `kernel_sources`, written under `root` after
    each front end's header and imported from those real files."""
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
SLOT = 256


@dataclass
class Outcome:
    error: BaseException | None = None
    results: list = field(default_factory=list)  # [(dtype name, shape)]
    bits: np.ndarray | None = None  # int64, 4 slots of SLOT

    def values(self, slot=0):
        """The emitted value of `slot` as a NumPy array of its own dtype."""
        dtype, shape = self.results[slot]
        numel = math.prod(shape) if shape else 1
        raw = self.bits[slot * SLOT : slot * SLOT + numel]
        if dtype == "int1":
            return raw.astype(np.bool_).reshape(shape)
        return raw.astype(f"int{WIDTH[dtype]}").view(NUMPY[dtype]).reshape(shape)


def launch(module, name, args, kwargs) -> Outcome:
    """Run `module.name[(1,)](out, *args, **kwargs)` on copies of the array arguments."""
    out = torch.zeros(4 * SLOT, dtype=torch.int64)
    args = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    module.RESULTS.clear()
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            getattr(module, name)[(1,)](out, *args, **kwargs)
        except Exception as error:
            return Outcome(error=error)
    return Outcome(results=list(module.RESULTS), bits=out.numpy().copy())


def both(kernels, name, *args, **kwargs):
    return tuple(launch(module, name, args, kwargs) for module in kernels)


_TL_NAME = {
    "int1": "int1",
    "fp16": "float16",
    "bf16": "bfloat16",
    "fp32": "float32",
    "fp64": "float64",
    "fp8e4nv": "float8e4nv",
    "fp8e5": "float8e5",
}


def both_dtype(kernels, name, dtype, *args, **kwargs):
    """`both`, with the constexpr DST set to each front end's own dtype object for `dtype`."""
    outcomes = []
    for module in kernels:
        dst = getattr(module.tl, _TL_NAME.get(dtype, dtype))
        outcomes.append(launch(module, name, args, dict(kwargs, DST=dst)))
    return tuple(outcomes)


def tensor_of(values, dtype: str) -> torch.Tensor:
    """A torch tensor of `dtype` holding `values` (a NumPy array of NUMPY[dtype] or castable)."""
    array = np.asarray(values)
    if array.dtype != NUMPY[dtype]:
        with np.errstate(all="ignore"):
            array = array.astype(NUMPY[dtype])
    if dtype == "int1":
        return torch.from_numpy(array.copy())
    bits = array.view(f"int{WIDTH[dtype]}").copy()
    return torch.from_numpy(bits).view(TORCH[dtype])


def bits_equal(a, b, dtype: str) -> np.ndarray:
    """Lane-wise equality of the bit patterns; any NaN equals any NaN."""
    a, b = np.asarray(a), np.asarray(b)
    if dtype == "int1":
        return a == b
    width = WIDTH[dtype]
    same = a.view(f"uint{width}") == b.view(f"uint{width}")
    if is_float(dtype):
        with np.errstate(all="ignore"):
            same |= np.isnan(a.astype(np.float64)) & np.isnan(b.astype(np.float64))
    return same


class Mismatches:
    """Collects the differences of one test, so that a failure lists all of them."""

    def __init__(self):
        self.items = []

    def add(self, case, message):
        self.items.append(f"{case}: {message}")

    def check(self):
        if self.items:
            shown = "\n  ".join(self.items[:80])
            more = f"\n  ... and {len(self.items) - 80} more" if len(self.items) > 80 else ""
            pytest.fail(
                f"{len(self.items)} differences from Triton:\n  {shown}{more}", pytrace=False
            )


def _show(values, lanes):
    flat = np.asarray(values).reshape(-1)
    return [flat[i].item() if hasattr(flat[i], "item") else flat[i] for i in lanes]


def compare(case, t: Outcome, n: Outcome, mism: Mismatches, gpu=None, reason=None, results=None):
    """Compare two outcomes: raised or not, result types, then values bit for bit.

    With `reason` (a key of EXPECTED) Triton's interpreter is known not to be the GPU for this
    case: lanes where the two differ must then equal `gpu(slot, dtype)`, the GPU's answer. With
    `results` too, Triton's interpreter is known to crash on the case (a failure of its own, not a
    refusal of the language): if it did, Naiad must give `results` and the GPU's values.
    """
    if results is not None and t.error is not None:
        if n.error is not None:
            mism.add(case, f"[{reason}] Naiad raised {type(n.error).__name__}: {n.error}")
        elif n.results != results:
            mism.add(case, f"[{reason}] Naiad's results {n.results}, compiled Triton's {results}")
        else:
            for slot, (dtype, _) in enumerate(results):
                check_values(case, slot, dtype, None, n.values(slot), mism, gpu, reason)
        return
    if (t.error is None) != (n.error is None):
        which, error = ("only Triton", t.error) if t.error is not None else ("only Naiad", n.error)
        mism.add(case, f"{which} raised {type(error).__name__}: {str(error)[:300]}")
        return
    if t.error is not None:
        return
    if t.results != n.results:
        mism.add(case, f"result types differ: triton {t.results} naiad {n.results}")
        return
    for slot, (dtype, _) in enumerate(t.results):
        if dtype.startswith("python:"):
            continue
        check_values(case, slot, dtype, t.values(slot), n.values(slot), mism, gpu, reason)


def check_values(case, slot, dtype, tv, nv, mism, gpu=None, reason=None):
    """Lanes of `nv` (Naiad) must equal `tv` (Triton), or the GPU's where `reason` applies.
    `tv` None: no Triton value (its interpreter crashed), every lane is checked against the GPU."""
    same = bits_equal(tv, nv, dtype) if tv is not None else np.zeros(np.shape(nv), bool)
    if same.all():
        return
    if reason is not None:
        assert reason in EXPECTED
        ref = np.asarray(gpu(slot, dtype)).astype(NUMPY[dtype]).reshape(np.shape(nv))
        wrong = ~same & ~bits_equal(ref, nv, dtype)
        if not wrong.any():
            return
        lanes = np.argwhere(wrong.reshape(-1)).ravel()[:4]
        mism.add(
            case,
            f"[{reason}] {int(wrong.sum())} lanes of {dtype} differ from the GPU "
            f"model: lanes {lanes.tolist()} naiad {_show(nv, lanes)} model "
            f"{_show(ref, lanes)} triton {_show(tv, lanes) if tv is not None else None}",
        )
        return
    lanes = np.argwhere(~same.reshape(-1)).ravel()[:4]
    mism.add(
        case,
        f"{int((~same).sum())} lanes of {dtype} differ: lanes {lanes.tolist()} "
        f"triton {_show(tv, lanes)} naiad {_show(nv, lanes)}",
    )


# -------------------------------------------------------------------------------------------------
# Inputs
# -------------------------------------------------------------------------------------------------
def int_specials(dtype: str) -> list[int]:
    """16 integers: signs, extremes, small numbers and shift amounts around the width."""
    width = WIDTH[dtype]
    signed = not dtype.startswith("u")
    lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
    raw = [0, 1, -1, 2, -3, 7, 100, -100, width - 1, width, width + 1, lo, lo + 1, hi, hi - 1, 13]
    return [((v - lo) % (1 << width)) + lo for v in raw]


FLOAT_SPECIALS = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -2.5,
    0.1,
    1 / 3,
    math.inf,
    -math.inf,
    math.nan,
    65504.0,
    -3e38,
    1e-40,
    6e-8,
    300.75,
]
# More floats for one-operand kernels: ties of the narrow formats, overflow edges, subnormals.
FLOAT_MORE = [
    1 + 2**-11,
    1 + 3 * 2**-11,
    -(1 + 2**-8),
    1 + 3 * 2**-8,
    1 + 2**-4,
    1 + 3 * 2**-4,
    1 + 2**-3,
    -(1 + 3 * 2**-3),
    448.0,
    464.0,
    480.0,
    57344.0,
    61440.0,
    65520.0,
    3.3961776e38,
    2**-9,
    2**-10,
    3 * 2**-10,
    2**-16,
    2**-17,
    2**-24,
    2**-25,
    1e300,
    2.0**31,
    -(2.0**31),
    2.0**63,
    -(2.0**63),
    2.0**64,
    255.5,
    -128.5,
    127.5,
    32767.9,
    -32768.5,
    4294967295.5,
    1e-310,
    2.0**24 + 1,
    12345.678,
    -0.7,
    1e10,
    -1e-5,
    2**-126,
    2**-149,
    7.0,
    -100.0,
    1.5,
    0.75,
    40000.0,
    -70000.0,
]


def int_values(dtype: str, n=N) -> np.ndarray:
    specials = int_specials(dtype)
    info = np.iinfo(NUMPY[dtype])
    rng = np.random.default_rng(WIDTH[dtype])
    extra = rng.integers(info.min, info.max, n - len(specials), dtype=NUMPY[dtype], endpoint=True)
    return np.concatenate([np.array(specials, NUMPY[dtype]), extra])


def float_values(dtype: str, n=N) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.array((FLOAT_SPECIALS + FLOAT_MORE)[:n], np.float64).astype(NUMPY[dtype])


def values_of(dtype: str, n=N) -> np.ndarray:
    if dtype == "int1":
        return np.arange(n) % 3 == 1
    if is_int(dtype):
        return int_values(dtype, n)
    if dtype in FP8:  # every bit pattern but a few, in an order that mixes signs
        bits = (np.arange(n, dtype=np.uint16) * 37 + 5) % 256
        return bits.astype(np.uint8).view(NUMPY[dtype])
    return float_values(dtype, n)


def cross(a: str, b: str):
    """x, y of 256 lanes: every pair of the 16 special values of `a` and of `b`."""
    xs = values_of(a, 16)
    ys = values_of(b, 16)
    return np.repeat(xs, 16), np.tile(ys, 16)
