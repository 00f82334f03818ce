"""Triton 3.6-3.9 language names and behaviours that Triton programs and libraries use, in the
interpreter and compiled for the CPU: `tl.str_to_ty`, `tl.dtype.STANDARD_FP_TYPES`,
`getattr(tl.PropagateNan, NAME)` with a constexpr name, a conditional
expression choosing Python numbers on a run-time condition, `x.to(block_ptr.type.element_ty)`, a
dtype passed to a helper (a constexpr: `.value`), `NAME: tl.constexpr = <run-time value>`; and
the names Naiad does not have yet fail saying so."""

import numpy as np
import pytest

import naiad
import naiad.language as tl
import naiad.triton
from naiad import knobs

BACKENDS = ["interpreter", "cpu"]


@pytest.fixture(params=BACKENDS)
def backend(request):
    with knobs.override(NAIAD_BACKEND=request.param):
        yield request.param


def test_str_to_ty_and_standard_fp_types():
    assert tl.str_to_ty("*fp16", None) == tl.pointer_type(tl.float16)
    assert tl.str_to_ty("*ki32", None).const
    assert tl.str_to_ty("constexpr", 4) == tl.constexpr_type(4)
    assert tl.str_to_ty(("i32", "fp32"), None) == tl.tuple_type([tl.int32, tl.float32])
    assert tl.dtype.STANDARD_FP_TYPES == ("fp16", "bf16", "fp32", "fp64")
    assert all(tl.dtype(name).is_standard_floating() for name in tl.dtype.STANDARD_FP_TYPES)


@naiad.jit
def propagate_nan_kernel(A, B, C, propagate_nan: tl.constexpr, func: tl.constexpr):
    if func == "clamp":
        nan = getattr(tl.PropagateNan, propagate_nan)
        tl.store(C, getattr(tl, func)(tl.load(A), -tl.load(B), tl.load(B), propagate_nan=nan))
    else:
        nan = getattr(tl.PropagateNan, propagate_nan)
        tl.store(C, getattr(tl, func)(tl.load(A), tl.load(B), propagate_nan=nan))


@pytest.mark.parametrize("func", ["minimum", "maximum", "clamp"])
@pytest.mark.parametrize("propagate_nan", ["NONE", "ALL"])
def test_propagate_nan_by_a_constexpr_name(backend, func, propagate_nan):
    a, b = np.array([np.nan], np.float32), np.array([1.0], np.float32)
    c = np.zeros(1, np.float32)
    propagate_nan_kernel[(1,)](a, b, c, propagate_nan, func)
    assert np.isnan(c[0]) == (propagate_nan == "ALL")


@naiad.jit
def choose_kernel(X, Y):
    x = tl.load(X + tl.arange(0, 4))
    total = tl.sum(x)
    tl.store(Y, 1.0 if total > 0 else 0.0)


def test_a_conditional_expression_of_numbers_on_a_run_time_condition(backend):
    y = np.full(1, np.nan, np.float32)
    choose_kernel[(1,)](np.ones(4, np.float32), y)
    assert y[0] == 1.0
    choose_kernel[(1,)](-np.ones(4, np.float32), y)
    assert y[0] == 0.0


@naiad.jit
def block_pointer_cast_kernel(X, Y, N: tl.constexpr):
    out = tl.make_block_ptr(Y, shape=(N,), strides=(1,), offsets=(0,), block_shape=(N,), order=(0,))
    x = tl.load(X + tl.arange(0, N))
    tl.store(out, x.to(out.type.element_ty))


def test_cast_to_a_block_pointers_element_type(backend):
    x, y = np.arange(8, dtype=np.float32) + 0.25, np.zeros(8, np.float16)
    block_pointer_cast_kernel[(1,)](x, y, 8)
    np.testing.assert_array_equal(y, x.astype(np.float16))


@naiad.jit
def to_dtype(x, DTYPE):
    return x.to(DTYPE.value) if DTYPE.value.is_floating() else x


@naiad.jit
def dtype_helper_kernel(X, Y, n):
    x = tl.load(X + tl.arange(0, 4))
    SHIFT: tl.constexpr = n * 2  # a run-time value: it stays one, as in Triton 3.9
    tl.store(Y + tl.arange(0, 4), to_dtype(x, tl.float16) + SHIFT)


def test_a_dtype_argument_is_a_constexpr_and_constexpr_takes_run_time_values(backend):
    x, y = np.arange(4, dtype=np.float32), np.zeros(4, np.float16)
    dtype_helper_kernel[(1,)](x, y, 5)
    np.testing.assert_array_equal(y, (x + 10).astype(np.float16))


def test_core_holds_every_builtin_as_triton_s_does():
    from naiad.language import core

    assert core.load is tl.load and core.atomic_poll is tl.atomic_poll and core.sum is tl.sum
    with pytest.raises(AttributeError):
        core.no_such_builtin  # noqa: B018


@naiad.jit
def bad_axis_kernel(X):
    x = tl.load(X + tl.arange(0, 4))
    tl.store(X + tl.arange(0, 4), tl.expand_dims(x, 3))


def test_errors_keep_their_cause_and_message_as_triton_s(backend):
    import traceback

    with pytest.raises(naiad.CompilationError) as caught:
        bad_axis_kernel[(1,)](np.zeros(4, np.float32))
    error = caught.value
    assert isinstance(error, naiad.triton.TritonError)
    assert "invalid axis 3" in str(error.__cause__) and "invalid axis 3" in error.error_message
    shown = "".join(traceback.format_exception(error))
    assert "/naiad/" not in shown.replace(__file__, "")  # still no frame of Naiad's
