"""One test per diagnostic a kernel can raise while it runs: each is a `naiad.CompilationError`
(of the matching builtin type where there is one) at the user's own file:line:col."""

import numpy as np
import pytest
from diagnostic_checks import NAIAD_DIR, assert_located, source_position, traceback_text

import naiad
import naiad.language as tl
from naiad import knobs


def _out(n=16, dtype=np.float32):
    return np.zeros(n, dtype)


# -- type and shape checks -------------------------------------------------------------------------
@naiad.jit
def shape_mismatch(out_ptr):
    a = tl.arange(0, 16)
    b = tl.arange(0, 32)
    c = a + b  # MARK
    tl.store(out_ptr + a, c)


def test_shape_mismatch_in_add():
    with pytest.raises(naiad.CompilationError) as info:
        shape_mismatch[(1,)](_out())
    message = assert_located(info.value, shape_mismatch, "# MARK", at="a + b")
    assert "16" in message and "32" in message


@naiad.jit
def bitwise_on_floats(out_ptr):
    offs = tl.arange(0, 16)
    x = offs.to(tl.float32)
    y = x & x  # MARK
    tl.store(out_ptr + offs, y)


def test_bitwise_and_on_floats_is_a_type_error():
    with pytest.raises(TypeError) as info:
        bitwise_on_floats[(1,)](_out())
    message = assert_located(info.value, bitwise_on_floats, "# MARK", at="x & x")
    assert "fp32" in message and "integer" in message


@naiad.jit
def assigns_into_a_tuple(out_ptr):
    t = tl.tuple([5, 6, 7])
    t[0] = 0  # MARK
    tl.store(out_ptr, t[1])


def test_tuples_are_immutable():
    """As Triton's `tl.tuple`: an item cannot be replaced (a new tuple can be made)."""
    with pytest.raises(TypeError) as info:
        assigns_into_a_tuple[(1,)](_out(dtype=np.int32))
    message = assert_located(info.value, assigns_into_a_tuple, "# MARK", at="t[0] = 0")
    assert "does not support item assignment" in message


@naiad.jit
def negates_a_tuple(out_ptr):
    t = (1, 2)
    u = -t  # MARK
    tl.store(out_ptr, u[0])


def test_a_unary_operator_on_a_value_without_it_is_refused_by_the_compiler():
    """`-(1, 2)` in a compiled kernel: refused at the operator, as Triton's code generator
    refuses it, with no Python TypeError behind it (the error's cause is None)."""
    with knobs.override(NAIAD_BACKEND="cpu"), pytest.raises(naiad.CompilationError) as info:
        negates_a_tuple[(1,)](_out(dtype=np.int32))
    message = assert_located(info.value, negates_a_tuple, "# MARK", at="-t")
    assert isinstance(info.value, naiad.errors.UnsupportedLanguageConstruct)
    assert message == "unary - is not supported on a value of type tuple"
    assert info.value.__cause__ is None


@naiad.must_use_result("Assign it: `x = cube(x)`.")
@naiad.jit
def cube(x):
    return x * x * x


@naiad.jit
def drops_a_cube(out_ptr):
    x = tl.arange(0, 16).to(tl.float32)
    cube(x)  # MARK
    tl.store(out_ptr + tl.arange(0, 16), x)


@naiad.jit
def drops_an_advance(out_ptr):
    block = tl.make_block_ptr(out_ptr, (16,), (1,), (0,), (8,), (0,))
    block.advance((8,))  # MARK
    tl.store(block, tl.arange(0, 8).to(tl.float32))


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
@pytest.mark.parametrize(
    "kernel, spelled, extra",
    [(drops_a_cube, "cube", " Assign it: `x = cube(x)`."), (drops_an_advance, "block.advance", "")],
)
def test_a_dropped_result_that_must_be_used(kernel, spelled, extra, backend):
    """A call marked `must_use_result` (a user's, with its words, or `advance`) as a statement
    of its own is an error, in the interpreter and compiled (Triton's words)."""
    with knobs.override(NAIAD_BACKEND=backend), pytest.raises(ValueError) as info:
        kernel[(1,)](_out())
    message = assert_located(info.value, kernel, "# MARK", at=spelled)
    assert f"The result of {spelled} is not being used.{extra}" in message


@naiad.jit
def float_or_int(x):
    if x > 0:
        return x
    return 1


@naiad.jit
def returns_two_types(out_ptr):
    x = tl.load(out_ptr)
    tl.store(out_ptr, float_or_int(x))  # MARK


@naiad.jit
def chooses_two_types(out_ptr):
    x = tl.load(out_ptr)
    y = x if x > 0 else 1  # MARK
    tl.store(out_ptr, y)


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
def test_paths_of_two_types(backend):
    """A function's returns (fp32 and int32) and a conditional expression's values must agree,
    in Triton's words (its tests look for them). The interpreter runs one path: no error."""
    with knobs.override(NAIAD_BACKEND=backend):
        if backend == "interpreter":
            returns_two_types[(1,)](_out())
            return
        with pytest.raises(TypeError) as info:
            returns_two_types[(1,)](_out())
        assert "Return type mismatch: fp32 and int32" in str(info.value)
        with pytest.raises(TypeError) as info:
            chooses_two_types[(1,)](_out())
        message = assert_located(info.value, chooses_two_types, "# MARK", at="x if x > 0 else 1")
        assert "Ternary expression with dynamic condition has inconsistent type" in message


@naiad.jit
def arange_not_power_of_2(out_ptr):
    offs = tl.arange(0, 3)  # MARK
    tl.store(out_ptr + offs, offs)


def test_arange_length_must_be_power_of_2():
    with pytest.raises(naiad.CompilationError) as info:
        arange_not_power_of_2[(1,)](_out(dtype=np.int32))
    message = assert_located(info.value, arange_not_power_of_2, "# MARK", at="tl.arange")
    assert "power of 2" in message and "3" in message


@naiad.jit
def arange_runtime_bound(out_ptr, n):
    offs = tl.arange(0, n)  # MARK
    tl.store(out_ptr + offs, offs)


def test_arange_needs_constexpr_bounds():
    with pytest.raises(naiad.CompilationError) as info:
        arange_runtime_bound[(1,)](_out(dtype=np.int32), 16)
    message = assert_located(info.value, arange_runtime_bound, "# MARK", at="tl.arange")
    assert "constexpr" in message


@naiad.jit
def sum_bad_axis(out_ptr):
    offs = tl.arange(0, 16)
    s = tl.sum(offs, axis=2)  # MARK
    tl.store(out_ptr, s)


def test_bad_axis_points_at_the_users_sum_not_the_library():
    with pytest.raises(naiad.CompilationError) as info:
        sum_bad_axis[(1,)](_out(dtype=np.int32))
    message = assert_located(info.value, sum_bad_axis, "# MARK", at="tl.sum")
    assert "axis" in message and "2" in message
    assert "standard.py" not in str(info.value)


# -- errors inside jit functions that the kernel calls ---------------------------------------------
@naiad.jit
def add_wide(x):
    return x + tl.arange(0, 32)  # CALLEE


@naiad.jit
def calls_add_wide(out_ptr):
    offs = tl.arange(0, 16)
    y = add_wide(offs)  # CALLER
    tl.store(out_ptr + offs, y)


def test_error_in_callee_is_located_in_callee_with_call_chain():
    with pytest.raises(naiad.CompilationError) as info:
        calls_add_wide[(1,)](_out(dtype=np.int32))
    assert_located(info.value, add_wide, "# CALLEE", at="x + tl.arange")
    filename, line, col, _ = source_position(calls_add_wide, "# CALLER", at="add_wide(offs)")
    chain = info.value.call_chain
    assert (chain[0].lineno, chain[0].col, chain[0].function) == (line, col, "calls_add_wide")
    assert f"called from {filename}:{line}:{col} in `calls_add_wide`" in str(info.value)


@naiad.jit
def middle(x):
    return add_wide(x)  # MIDDLE


@naiad.jit
def calls_middle(out_ptr):
    offs = tl.arange(0, 16)
    tl.store(out_ptr + offs, middle(offs))  # OUTER


def test_call_chain_lists_callers_innermost_first():
    with pytest.raises(naiad.CompilationError) as info:
        calls_middle[(1,)](_out(dtype=np.int32))
    assert_located(info.value, add_wide, "# CALLEE", at="x + tl.arange")
    lines = [loc.lineno for loc in info.value.call_chain]
    assert lines == [
        source_position(middle, "# MIDDLE")[1],
        source_position(calls_middle, "# OUTER")[1],
    ]


# -- compile-time assertions and unsupported features ----------------------------------------------
@naiad.jit
def static_assert_false(out_ptr):
    tl.static_assert(False, "the block is too small")  # MARK


def test_static_assert_raises_compile_time_assertion_failure():
    with pytest.raises(naiad.CompileTimeAssertionFailure) as info:
        static_assert_false[(1,)](_out())
    message = assert_located(info.value, static_assert_false, "# MARK", at="tl.static_assert")
    assert "the block is too small" in message


@naiad.jit
def maps_a_python_function(out_ptr):
    offs = tl.arange(0, 16)
    y = tl.map_elementwise(abs, offs)  # MARK
    tl.store(out_ptr + offs, y)


def test_map_elementwise_needs_a_jit_function():
    with pytest.raises(TypeError) as info:
        maps_a_python_function[(1,)](_out(dtype=np.int32))
    message = assert_located(info.value, maps_a_python_function, "# MARK", at="tl.map_elementwise")
    assert "must be a @jit function, got 'abs'" in message


@naiad.jit
def uses_inline_asm(out_ptr):
    offs = tl.arange(0, 16)
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [offs], tl.int32, True, 1)  # MARK
    tl.store(out_ptr + offs, y)


def test_inline_asm_off_the_gpu_is_not_implemented_and_named():
    with pytest.raises(NotImplementedError) as info:
        uses_inline_asm[(1,)](_out(dtype=np.int32))
    message = assert_located(info.value, uses_inline_asm, "# MARK", at="tl.inline_asm_elementwise")
    assert "inline_asm_elementwise" in message


# -- memory ----------------------------------------------------------------------------------------
@naiad.jit
def load_past_the_end(x_ptr, out_ptr):
    offs = tl.arange(0, 16)
    v = tl.load(x_ptr + offs + 10)  # MARK
    tl.store(out_ptr + offs, v)


def test_out_of_bounds_load_names_argument_and_offsets():
    with pytest.raises(IndexError) as info:
        load_past_the_end[(1,)](np.ones(16, np.float32), _out())
    message = assert_located(info.value, load_past_the_end, "# MARK", at="tl.load")
    assert "`x_ptr`" in message and "load" in message
    assert "[16, 17, 18, 19, 20, 21, 22, 23, ...]" in message
    assert "16 element(s)" in message


@naiad.jit
def store_before_the_start(out_ptr):
    offs = tl.arange(0, 4)
    tl.store(out_ptr + offs - 2, offs)  # MARK


def test_out_of_bounds_store_names_argument_and_negative_offsets():
    out = np.full(8, 7, np.int32)
    with pytest.raises(IndexError) as info:
        store_before_the_start[(1,)](out)
    message = assert_located(info.value, store_before_the_start, "# MARK", at="tl.store")
    assert "`out_ptr`" in message and "store" in message and "[-2, -1]" in message
    assert (out == 7).all()  # nothing was written


# -- device_assert and `assert`: on in debug mode only ---------------------------------------------
@naiad.jit
def asserts_small(x_ptr):
    offs = tl.arange(0, 16)
    tl.device_assert(offs < 5, "offs must be small")  # MARK


@naiad.jit(debug=True)
def asserts_small_debug(x_ptr):
    offs = tl.arange(0, 16)
    tl.device_assert(offs < 5, "offs must be small")  # MARK


@naiad.jit
def python_assert(x_ptr):
    v = tl.load(x_ptr + tl.arange(0, 4))
    assert v > 0, "v must be positive"  # MARK


def _check_assert(info, kernel, at="tl.device_assert", text="offs must be small"):
    assert isinstance(info.value, AssertionError)
    assert isinstance(info.value, RuntimeError)  # as a CUDA launch's device-side assert
    message = assert_located(info.value, kernel, "# MARK", at=at)
    assert text in message


def test_device_assert_fires_with_jit_debug_true():
    with pytest.raises(AssertionError) as info:
        asserts_small_debug[(1,)](_out())
    _check_assert(info, asserts_small_debug)
    assert "[5]" in str(info.value)  # the first failing element


def test_device_assert_fires_with_naiad_debug_knob():
    with knobs.override(NAIAD_DEBUG=1), pytest.raises(AssertionError) as info:
        asserts_small[(1,)](_out())
    _check_assert(info, asserts_small)


def test_device_assert_fires_with_debug_launch_option():
    with pytest.raises(AssertionError) as info:
        asserts_small[(1,)](_out(), debug=True)
    _check_assert(info, asserts_small)


def test_device_assert_is_off_outside_debug_mode(monkeypatch):
    monkeypatch.delenv("NAIAD_DEBUG", raising=False)
    asserts_small[(2,)](_out())
    python_assert[(1,)](np.array([1, -1, 2, 3], np.float32))
    with knobs.override(NAIAD_DEBUG=0):
        asserts_small[(1,)](_out())


def test_naiad_debug_turns_debug_on_whatever_the_kernel_or_launch_says():
    """NAIAD_DEBUG=1 (TRITON_DEBUG=1 under the switch) wins over `debug=False`, as in Triton:
    a launch is in debug mode when it or its kernel asks, or the setting does."""
    with knobs.override(NAIAD_DEBUG=1), pytest.raises(AssertionError) as info:
        asserts_small[(1,)](_out(), debug=False)
    _check_assert(info, asserts_small)
    asserts_small[(1,)](_out(), debug=False)  # the setting off: the launch's choice
    with pytest.raises(AssertionError):
        asserts_small_debug[(1,)](_out(), debug=None)  # the kernel's


def test_python_assert_in_kernel_is_a_device_assert():
    with knobs.override(NAIAD_DEBUG=1), pytest.raises(AssertionError) as info:
        python_assert[(1,)](np.array([1, -1, 2, 3], np.float32))
    _check_assert(info, python_assert, at="assert v", text="v must be positive")


@naiad.jit(debug=True)
def asserts_masked(x_ptr, MASK: tl.constexpr):
    offs = tl.arange(0, 16)
    value = tl.load(x_ptr + offs)
    tl.device_assert(value < 0.5, "value must be small", mask=MASK)  # MARK
    tl.store(x_ptr + offs, value * 2.0)


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
def test_device_assert_mask_from_a_constexpr_parameter(backend):
    """`mask=MASK` with MASK a constexpr parameter: None is no mask (the assert fires), False
    masks every lane off (the kernel runs on), as in Triton."""
    x = np.random.default_rng(5).uniform(0.25, 1.0, 16).astype(np.float32)
    with knobs.override(NAIAD_BACKEND=backend):
        with pytest.raises(AssertionError) as info:
            asserts_masked[(1,)](x.copy(), None)
        _check_assert(info, asserts_masked, text="value must be small")
        doubled = x.copy()
        asserts_masked[(1,)](doubled, False)
    np.testing.assert_array_equal(doubled, x * 2)


# -- the traceback: Naiad's frames hidden unless NAIAD_TRACEBACK=1 ---------------------------------
def test_naiad_traceback_knob_shows_naiad_frames():
    with knobs.override(NAIAD_TRACEBACK=1), pytest.raises(naiad.CompilationError) as info:
        shape_mismatch[(1,)](_out())
    shown = traceback_text(info.value)
    assert NAIAD_DIR in shown  # the original exception and Naiad's frames are chained in
    assert str(info.value).startswith(source_position(shape_mismatch, "# MARK")[0])


# -- misuse from the host --------------------------------------------------------------------------
def test_builtin_outside_a_kernel_says_forgot_jit():
    with pytest.raises(Exception, match=r"Did you forget to add @naiad\.jit"):
        tl.arange(0, 16)
    with pytest.raises(Exception, match=r"Did you forget to add @naiad\.jit"):
        tl.program_id(0)


def test_calling_a_jit_function_from_the_host_is_a_runtime_error():
    with pytest.raises(RuntimeError, match=r"shape_mismatch.*outside of a kernel"):
        shape_mismatch(_out())


# -- what only the interpreter can do ----------------------------------------------------------
@naiad.jit
def stops_in_pdb(out_ptr):
    offs = tl.arange(0, 16)
    breakpoint()  # MARK
    tl.store(out_ptr + offs, offs)


def test_breakpoint_in_a_compiled_kernel_names_the_interpreter():
    with knobs.override(NAIAD_BACKEND="cpu"), pytest.raises(TypeError) as info:
        stops_in_pdb[(1,)](_out(dtype=np.int32))
    message = assert_located(info.value, stops_in_pdb, "# MARK", at="breakpoint()")
    assert "NAIAD_INTERPRET=1" in message
    with pytest.raises(TypeError, match="NAIAD_INTERPRET=1"):
        stops_in_pdb.warmup(_out(dtype=np.int32), grid=(1,), target="cuda:sm_90a")
