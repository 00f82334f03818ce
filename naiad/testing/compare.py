"""Bring arrays of any origin to NumPy, and `assert_close` for loose numerical comparisons.

Tests compare results that come from NumPy, from torch tensors on any device, and from Python
scalars; bfloat16 and the fp8 types exist in torch and in ml_dtypes but not in NumPy proper, so
everything is moved to the host and viewed through ml_dtypes before comparing.
"""

from __future__ import annotations

import sys

import ml_dtypes
import numpy as np


def _is_torch_tensor(x) -> bool:
    torch = sys.modules.get("torch")  # a torch tensor can only exist if torch was imported
    return torch is not None and isinstance(x, torch.Tensor)


def to_numpy(x) -> np.ndarray:
    """Return `x` (NumPy array, torch tensor on any device, scalar, sequence) as a host array.

    torch's bfloat16 and fp8 tensors have no NumPy counterpart: their bits are reinterpreted as the
    ml_dtypes type of the same name, so no value is rounded on the way.
    """
    if not _is_torch_tensor(x):
        return np.asarray(x)
    import torch

    t = x.detach().cpu().resolve_conj().resolve_neg()
    ml_type = getattr(ml_dtypes, str(t.dtype).removeprefix("torch."), None)
    if ml_type is None:
        return t.numpy()
    bits = {1: torch.uint8, 2: torch.int16}[t.element_size()]
    return t.view(bits).numpy().view(ml_type)


def is_float_dtype(dtype) -> bool:
    """True for NumPy floats and ml_dtypes' floats (bfloat16, fp8...), which NumPy calls 'V'."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return True
    try:
        ml_dtypes.finfo(dtype)
    except ValueError:
        return False
    return True


def _as_float64(x) -> np.ndarray:
    return to_numpy(x).astype(np.float64)


def _resolve_tolerance(tol, default: float, dtype) -> float:
    """Triton lets atol/rtol be a callable of the dtype, so one test can serve many dtypes."""
    if tol is None:
        return default
    return float(tol(dtype)) if callable(tol) else float(tol)


def assert_close(x, y, atol=None, rtol=None, err_msg: str = "") -> None:
    """Assert that `x` (actual) is within `atol + rtol * |y|` of `y` (expected), elementwise.

    Both sides are upcast to float64 first, so bf16/fp8 compare by value. NaNs in the same places
    are equal; infinities must match exactly. Defaults are Triton's: atol=1e-2, rtol=0.

    Raises:
        AssertionError: naming how many elements differ, the largest absolute and relative errors
            and the first mismatching index with both values.
    """
    dtype = to_numpy(x).dtype
    atol = _resolve_tolerance(atol, 1e-2, dtype)
    rtol = _resolve_tolerance(rtol, 0.0, dtype)
    actual, expected = _as_float64(x), _as_float64(y)
    try:
        actual, expected = np.broadcast_arrays(actual, expected)
    except ValueError:
        raise AssertionError(
            f"{err_msg}\nshapes differ: actual {actual.shape}, expected {expected.shape}".lstrip()
        ) from None
    with np.errstate(invalid="ignore"):
        diff = np.abs(actual - expected)
        same = (actual == expected) | (np.isnan(actual) & np.isnan(expected))
        bad = ~(same | (diff <= atol + rtol * np.abs(expected)))
    if bad.any():
        raise AssertionError(_mismatch_message(actual, expected, diff, bad, atol, rtol, err_msg))


def _mismatch_message(actual, expected, diff, bad, atol, rtol, err_msg) -> str:
    """Describe a failed comparison so the reader can judge it without rerunning the test."""
    first = tuple(int(i) for i in np.argwhere(bad)[0])
    finite = np.isfinite(diff)
    worst_abs = float(diff[finite].max()) if finite.any() else float("nan")
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = diff / np.abs(expected)
    rel_ok = finite & (expected != 0)
    worst_rel = float(rel[rel_ok].max()) if rel_ok.any() else float("nan")
    lines = [
        err_msg,
        f"Not close: {int(bad.sum())} of {bad.size} elements differ (atol={atol:g}, rtol={rtol:g})",
        f"max abs error: {worst_abs:g}",
        f"max rel error: {worst_rel:g}",
        (
            f"first mismatch at index {first}: actual {float(actual[first])!r}, "
            f"expected {float(expected[first])!r}"
        ),
    ]
    return "\n".join(line for line in lines if line)
