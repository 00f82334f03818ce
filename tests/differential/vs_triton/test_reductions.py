"""Reductions, scans and sorting against Triton's interpreter: sum / max / min / argmax / argmin /
xor_sum (result types, axes, keep_dims, NaN), cumsum / cumprod, sort, topk and flip (Triton's
bitonic network exactly)."""

import numpy as np
import pytest

from .harness import (
    DTYPES,
    NUMPY,
    PYTESTMARK,
    WIDTH,
    Mismatches,
    N,
    both,
    both_dtype,
    check_values,
    compare,
    is_float,
    is_int,
    launch,
    tensor_of,
    values_of,
)
from .kernel_sources import REDUCTIONS

pytestmark = PYTESTMARK


def reduce_values(dtype, n=N):
    """Values for reductions: no inf/NaN for sums (the order of a float sum is not compared)."""
    x = values_of(dtype, n)
    if is_float(dtype):
        rng = np.random.default_rng(7)
        x = rng.uniform(-4, 4, n).astype(np.float64).astype(NUMPY[dtype])
    return x


def close(tv, nv, dtype, rel):
    """Norm-wise: |t - n| <= rel * sum(|t|) elementwise-broadcast (reductions of one order or
    another of the same terms)."""
    t64, n64 = np.asarray(tv).astype(np.float64), np.asarray(nv).astype(np.float64)
    scale = np.abs(t64).sum() + 1.0
    return np.abs(t64 - n64) <= rel * scale


TOL = {"fp16": 2e-3, "bf16": 1.6e-2, "fp32": 1e-6, "fp64": 1e-14}


@pytest.mark.parametrize("fn", REDUCTIONS)
def test_reductions(kernels, fn):
    """sum/max/min/argmax/argmin/xor_sum: result dtypes (int8 sum -> int32, uint8 -> uint32,
    max of int8 -> int32, of fp16/bf16 -> fp32), 1-D and 2-D, keep_dims, ints exact."""
    mism = Mismatches()
    for a in ("int1",) + DTYPES:
        x = reduce_values(a)
        xt = tensor_of(x, a)
        runs = [(f"{fn}({a})", both(kernels, f"red_{fn}", xt, N=N))]
        for axis in (0, 1) + ((None,) if not fn.startswith("arg") else ()):
            for keep in (False, True):
                runs.append(
                    (
                        f"{fn}({a}, axis={axis}, keep_dims={keep})",
                        both(kernels, f"red2_{fn}", xt, AXIS=axis, KEEP=keep),
                    )
                )
        for case, (t, n) in runs:
            if a == "bf16" and t.error is None:  # EXPECTED["bf16"]: Triton on the fp32 values
                t = launch(
                    kernels[0],
                    case_kernel(fn, case),
                    (tensor_of(x.astype(np.float32), "fp32"),),
                    case_kwargs(case),
                )
                if n.error is None and t.error is None and fn == "sum":
                    if n.results[0][0] != "bf16" or n.results[0][1] != t.results[0][1]:
                        mism.add(case, f"[bf16] Naiad's results {n.results}")
                    elif not close(t.values(0), n.values(0), "bf16", TOL["bf16"]).all():
                        mism.add(case, f"[bf16] {t.values(0)} {n.values(0)}")
                    continue
            if (
                fn == "sum"
                and a == "int32"
                and t.error is not None
                and "out of bounds" in str(t.error)
            ):
                axis = case_kwargs(case).get("AXIS", None)
                keep = case_kwargs(case).get("KEEP", False)
                data = x.astype(np.int64)
                data = data.reshape(8, 8) if "axis" in case else data
                ref = data.sum(axis=axis if "axis" in case else None, keepdims=keep)
                compare(
                    case,
                    t,
                    n,
                    mism,
                    lambda slot, dtype, ref=ref: ref.astype(np.int32),
                    "sum_overflow",
                    [("int32", tuple(np.shape(ref)))],
                )
                continue
            if fn == "xor_sum" and "axis=None, keep_dims=True" in case and t.error is None:
                # EXPECTED["keepdims"]: compiled Triton keeps both dimensions.
                ref = np.bitwise_xor.reduce(x.reshape(-1)).reshape(1, 1)
                if n.error is not None or n.results != [(a, (1, 1))]:
                    mism.add(case, f"[keepdims] Naiad gave {n.results or n.error}")
                else:
                    check_values(
                        case,
                        0,
                        a,
                        None,
                        n.values(0),
                        mism,
                        lambda slot, dtype, ref=ref: ref,
                        "keepdims",
                    )
                continue
            if (
                t.error is None
                and n.error is None
                and t.results == n.results
                and is_float(t.results[0][0])
                and fn == "sum"
            ):
                dtype = t.results[0][0]
                ok = close(t.values(0), n.values(0), dtype, TOL[dtype])
                if not ok.all():  # EXPECTED["reduce_order"]
                    mism.add(case, f"sum differs beyond {TOL[dtype]}: {t.values(0)} {n.values(0)}")
                continue
            compare(case, t, n, mism)
    mism.check()


def case_kernel(fn, case):
    return f"red2_{fn}" if "axis" in case else f"red_{fn}"


def case_kwargs(case):
    if "axis" not in case:
        return {"N": N}
    axis = case.split("axis=")[1].split(",")[0]
    return {"AXIS": None if axis == "None" else int(axis), "KEEP": "keep_dims=True" in case}


def test_reductions_with_nan(kernels):
    """max/min skip NaN in both; EXPECTED["nanarg"]: argmax/argmin with NaN follow the combine
    function on the GPU (comparisons with NaN are false), not np.nanargmax."""
    mism = Mismatches()
    for a in ("fp16", "fp32", "fp64"):
        x = reduce_values(a)
        x[[3, 17, 40]] = np.nan
        xt = tensor_of(x, a)
        for fn in ("max", "min"):
            compare(f"{fn}({a} with NaN)", *both(kernels, f"red_{fn}", xt, N=N), mism)
        for fn in ("argmax", "argmin"):
            t, n = both(kernels, f"red_{fn}", xt, N=N)
            compare(
                f"{fn}({a} with NaN)",
                t,
                n,
                mism,
                lambda slot, dtype, fn=fn, x=x: np.array(_gpu_arg(fn, x)),
                "nanarg",
            )
        for fn in ("max_idx", "min_idx"):
            t, n = both(kernels, f"red_{fn}", xt, N=N)
            compare(
                f"{fn}({a} with NaN)",
                t,
                n,
                mism,
                lambda slot, dtype, fn=fn, x=x: _gpu_arg_pair(fn[:3], x, slot),
                "nanarg",
            )
    mism.check()


def _tree_combine(values, combine):
    """Combine neighbours pairwise (the shape of the GPU's reduction tree across a block)."""
    items = list(values)
    while len(items) > 1:
        items = [combine(items[i], items[i + 1]) for i in range(0, len(items), 2)]
    return items[0]


def _gpu_arg(fn, x):
    return _gpu_arg_pair(fn[3:], x, 1)


def _gpu_arg_pair(which, x, slot):
    """argmax/argmin's combine (tie_break_left): keep (v1, i1) when v1 > v2 (or <), or equal and
    i1 < i2; NaN compares false, so the right-hand pair wins against a NaN on the left."""

    def combine(p, q):
        (v1, i1), (v2, i2) = p, q
        better = v1 > v2 if which == "max" else v1 < v2
        return p if better or (v1 == v2 and i1 < i2) else q

    value, index = _tree_combine(
        [(float(v), i) for i, v in enumerate(x.astype(np.float64))], combine
    )
    return np.array(value).astype(x.dtype) if slot == 0 else np.array(index, np.int32)


def test_sum_dtype_argument(kernels):
    mism = Mismatches()
    for a in ("int8", "uint8", "int32", "fp16", "bf16"):
        xt = tensor_of(reduce_values(a), a)
        for dst in ("int8", "int64", "uint16", "fp32", "fp64"):
            t, n = both_dtype(kernels, "red_sum_dtype", dst, xt, N=N)
            if t.error is None and n.error is None and is_float(dst):
                if t.results != n.results:
                    mism.add(f"sum({a}, dtype={dst})", f"types {t.results} {n.results}")
                elif a == "bf16":
                    pass  # EXPECTED["bf16"]: the interpreter's bf16 -> fp32 conversion
                elif not close(t.values(0), n.values(0), dst, TOL[dst]).all():
                    mism.add(f"sum({a}, dtype={dst})", "values differ")
                continue
            compare(f"sum({a}, dtype={dst})", t, n, mism)
    mism.check()


@pytest.mark.parametrize("fn", ["cumsum", "cumprod"])
def test_scans(kernels, fn):
    """cumsum (int8 -> int32, bf16 -> fp32) and cumprod (bf16 -> fp32), forward and reverse."""
    mism = Mismatches()
    for a in ("int1",) + DTYPES:
        x = reduce_values(a)
        if fn == "cumprod" and is_float(a):
            x = (1 + (x.astype(np.float64) / 64)).astype(NUMPY[a])
        xt = tensor_of(x, a)
        for reverse in (False, True):
            t, n = both(kernels, f"scan_{fn}", xt, N=N, REVERSE=reverse)
            case = f"{fn}({a}, reverse={reverse})"
            if (
                t.error is None
                and n.error is None
                and t.results == n.results
                and is_float(t.results[0][0])
            ):
                dtype = t.results[0][0]
                if a == "bf16":  # EXPECTED["bf16"]: compare with a model of the promoted values
                    ref = (np.cumsum if fn == "cumsum" else np.cumprod)(
                        x.astype(np.float64)[::-1] if reverse else x.astype(np.float64)
                    )
                    tv = ref[::-1] if reverse else ref
                else:
                    tv = t.values(0)
                ok = (
                    np.abs(tv.astype(np.float64) - n.values(0).astype(np.float64))
                    <= TOL[dtype] * (np.abs(tv.astype(np.float64)) + 1) * 4
                )
                if not ok.all():  # EXPECTED["reduce_order"]
                    mism.add(case, f"values beyond tolerance: {tv[~ok][:4]} {n.values(0)[~ok][:4]}")
                continue
            compare(case, t, n, mism)
        if fn == "cumsum":
            for axis in (0, 1):
                t, n = both(kernels, "scan_cumsum2", xt, AXIS=axis)
                if is_float(a) and t.error is None:
                    if t.results != n.results:
                        mism.add(f"cumsum2({a}, {axis})", f"types {t.results} {n.results}")
                    continue
                compare(f"cumsum2({a}, {axis})", t, n, mism)
    mism.check()


# -------------------------------------------------------------------------------------------------
# sort, topk, flip
# -------------------------------------------------------------------------------------------------
def test_sort_topk_flip(kernels):
    """Triton's bitonic network exactly: an element takes its partner where `(x > y) != (flip ^
    is_right)`, so -0.0/+0.0 and NaN pairs keep the left value twice; topk keeps the max of pairs
    of runs (its dtype: int8 -> int32, fp16 -> fp32)."""
    mism = Mismatches()
    for a in ("int1",) + DTYPES:
        x = values_of(a, 32)
        xt = tensor_of(x, a)
        runs = [
            (f"sort({a}, descending={d})", "sort_sort", dict(N=32, DESCENDING=d))
            for d in (False, True)
        ]
        runs += [
            (f"sort2({a}, descending={d})", "sort_sort2", dict(DESCENDING=d)) for d in (False, True)
        ]
        runs += [(f"topk({a}, {k})", "sort_topk", dict(N=32, K=k)) for k in (1, 4, 32)]
        runs += [(f"flip({a})", "sort_flip", dict(N=32))]
        runs += [(f"flip2({a}, {d})", "sort_flip2", dict(DIM=d)) for d in (0, 1, -1)]
        for case, name, kwargs in runs:
            t, n = both(kernels, name, xt, **kwargs)
            if t.error is not None and ("numel" in str(t.error) or "NoneType" in str(t.error)):
                # EXPECTED["triton_bug"]: topk(x, 1) and flip(x) crash in Triton 3.8. The top
                # value is Triton's tl.max (the same pairwise maxima, the same promotion).
                if name == "sort_topk":
                    top = launch(kernels[0], "red_max", (xt,), dict(N=32))
                    ref = top.values(0).reshape(1)
                else:
                    ref = x[::-1]
                out = (
                    (
                        "fp32"
                        if a in ("fp16", "bf16")
                        else "int32"
                        if is_int(a) and WIDTH[a] < 32
                        else a
                    )
                    if name == "sort_topk"
                    else a
                )
                compare(
                    case,
                    t,
                    n,
                    mism,
                    lambda slot, dtype, ref=ref: ref,
                    "triton_bug",
                    [(out, (1,) if name == "sort_topk" else (32,))],
                )
                continue
            if a == "bf16" and t.error is None and name != "sort_flip2":
                # EXPECTED["bf16"]: Triton's network on the (exactly) widened fp32 values.
                t32 = launch(kernels[0], name, (tensor_of(x.astype(np.float32), "fp32"),), kwargs)
                if n.error is None and t32.error is None:
                    same_shape = [r[1] for r in n.results] == [r[1] for r in t32.results]
                    if not same_shape or n.results != t.results:
                        mism.add(case, f"[bf16] results {n.results}, Triton's {t.results}")
                        continue
                    dtype = n.results[0][0]
                    check_values(
                        case, 0, dtype, t32.values(0).astype(NUMPY[dtype]), n.values(0), mism
                    )
                    continue
            compare(case, t, n, mism)
    mism.check()
