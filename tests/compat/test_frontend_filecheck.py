"""What a Triton user's tests of the frontend import: `triton._filecheck` (a jit function's own
`# CHECK:` comments matched against the TTIR its code generator makes, before any pass, printed
without locations) and `triton.runtime.jit.MockTensor` (an argument standing for a tensor by its
dtype). Also the frontend behaviours Triton's test_frontend.py checks: `*args` in jit helpers,
`:=` assigning as `=` does, and unpacking errors in Python's words."""

import inspect

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.runtime.mock_tensor import MockTensor
from naiad.triton import _filecheck

BACKENDS = ["interpreter", "cpu"]


@naiad.jit
def anchor(v):
    pass


@naiad.jit
def constant_to_anchor():
    # CHECK-LABEL: tt.func public @constant_to_anchor
    # CHECK: %c11_i32 = arith.constant 11 : i32
    # CHECK-NEXT: tt.call @{{.*}}anchor__i32(%c11_i32)
    # The call is kept: no pass ran.
    # CHECK: tt.func private @{{.*}}anchor__i32(%arg0: i32)
    scalar = 11
    anchor(scalar)


@naiad.jit
def checks_a_constant_it_lacks():
    # CHECK: %c42_i32
    anchor(11)


def test_a_kernel_s_own_checks_are_matched():
    _filecheck.run_filecheck_test(constant_to_anchor)
    _filecheck.filecheck_test(constant_to_anchor)()


def test_an_unmatched_check_is_a_value_error_showing_the_module():
    with pytest.raises(ValueError) as info:
        _filecheck.run_filecheck_test(checks_a_constant_it_lacks)
    assert "%c42_i32" in str(info.value) and "anchor__c11" in str(info.value)


def test_the_parser_s_module_prints_with_and_without_locations():
    module = _filecheck.run_parser(constant_to_anchor)
    assert "loc(" not in module.str_nodebug()
    assert "%scalar = arith.constant 11" in module.str() and "loc(" in module.str()


@naiad.jit
def copy(src: tl.const, dst, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=mask), mask=mask)


def test_mock_tensors_specialize_as_aligned_pointers_of_their_dtype():
    """Launch options among the keywords are set aside, as a launch takes them."""
    module = _filecheck.run_parser(
        copy,
        args=(MockTensor(tl.float16), MockTensor(tl.float16), 40),
        kwargs={"BLOCK": 64, "num_warps": 8},
    )
    text = module.str_nodebug()
    assert text.count("!tt.ptr<f16> {tt.divisibility = 16 : i32}") == 2, text
    assert "tensor<64xi32>" in text


def test_a_program_the_frontend_refuses_raises_its_compilation_error():
    @naiad.jit
    def unpacks_too_many():
        a, b = (1, 2, 3)  # noqa: F841

    with pytest.raises(naiad.CompilationError, match=r"too many values to unpack \(expected 2\)"):
        _filecheck.run_parser(unpacks_too_many)


def test_a_kernel_compiled_for_mock_tensors_runs_on_arrays_and_a_launch_refuses_them():
    source = np.random.default_rng(16).standard_normal(40).astype(np.float32)
    compiled = copy.warmup(
        MockTensor(tl.float32), MockTensor(tl.float32), 40, BLOCK=64, grid=(1,), target="cpu"
    )
    assert "!tt.ptr<f32>" in compiled.asm["ttir"]
    out = np.full(40, np.nan, np.float32)
    with knobs.override(NAIAD_BACKEND="cpu"):
        copy[(1,)](source, out, 40, BLOCK=64)
    np.testing.assert_array_equal(out, source)
    with pytest.raises(TypeError, match="MockTensor has no data"):
        copy[(1,)](MockTensor(tl.float32), out, 40, BLOCK=64)


@naiad.jit
def weighted_sum(*values):
    total = values[0]
    for i in tl.static_range(1, len(values)):
        total += values[i] * (i + 1)
    return total


@naiad.jit
def sums_three_terms(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, weighted_sum(x, y, x * y))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_jit_helper_takes_star_args_as_a_tuple(backend):
    rng = np.random.default_rng(17)
    x, y = (rng.standard_normal(32).astype(np.float32) for _ in range(2))
    out = np.full(32, np.nan, np.float32)
    with knobs.override(NAIAD_BACKEND=backend):
        sums_three_terms[(1,)](x, y, out, BLOCK=32)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    np.testing.assert_allclose(out, x64 + 2 * y64 + 3 * x64 * y64, rtol=1e-5, atol=1e-6)


def test_a_jit_function_with_star_args_is_not_launched():
    with pytest.raises(TypeError, match=r"takes \*values: .* called from kernels only"):
        weighted_sum[(1,)](np.zeros(4, np.float32))


@naiad.jit
def walrus(out_ptr):
    x = (y := 7)
    tl.static_assert(y.dtype == tl.int32)  # assigned as `y = 7`: a typed scalar
    z: tl.constexpr
    if (z := 3) > 2:
        tl.static_assert(isinstance(z, tl.constexpr))  # declared: stays a constant
    tl.store(out_ptr, x + y * z)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_named_expression_assigns_as_an_assignment_does(backend):
    out = np.full(1, -1, np.int32)
    with knobs.override(NAIAD_BACKEND=backend):
        walrus[(1,)](out)
    assert out[0] == 7 + 7 * 3


@naiad.jit
def unpacks(out_ptr, HOW: tl.constexpr):
    if HOW == 0:
        a, b = (1, 2, 3)
    else:
        a, b, _c = (1, 2)
    tl.store(out_ptr, a + b)


@pytest.mark.parametrize("backend", BACKENDS)
def test_unpacking_errors_read_as_python_s(backend):
    out = np.zeros(1, np.int32)
    with knobs.override(NAIAD_BACKEND=backend):
        with pytest.raises(ValueError, match=r"^.*too many values to unpack \(expected 2\)"):
            unpacks[(1,)](out, HOW=0)
        with pytest.raises(ValueError, match=r"not enough values to unpack \(expected 3, got 2\)"):
            unpacks[(1,)](out, HOW=1)


@naiad.jit
def constant_extrema(out_ptr, A: tl.constexpr, B: tl.constexpr):
    low: tl.constexpr = min(A, B, 2.5)
    high: tl.constexpr = max(A, B, 2.5)
    tl.store(out_ptr, low)
    tl.store(out_ptr + 1, high)


@pytest.mark.parametrize("backend", BACKENDS)
def test_min_and_max_of_constants_refuse_nan_and_negative_zero(backend):
    out = np.full(2, np.nan, np.float32)
    with knobs.override(NAIAD_BACKEND=backend):
        constant_extrema[(1,)](out, A=4.0, B=-1.5)
        np.testing.assert_array_equal(out, [-1.5, 4.0])
        for a, refused in ((float("nan"), "does not take NaN"), (-0.0, r"does not take -0\.0")):
            with pytest.raises(ValueError, match=refused):
                constant_extrema[(1,)](out, A=a, B=1.0)


def test_a_kernel_s_location_is_its_def_keyword():
    """Line and column of `def`, also for a kernel defined (indented) in a function."""

    @naiad.jit
    def nested(out_ptr):
        tl.store(out_ptr, 1)

    lines, first = inspect.getsourcelines(nested.fn)
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("def "))
    column = len(lines[at]) - len(lines[at].lstrip()) + 1
    text = _filecheck.run_parser(nested, args=(MockTensor(tl.int32),)).str()
    assert f'#loc = loc("{__file__}":{first + at}:{column})' in text, text


@naiad.jit
def poll_with_and_without_a_timeout(flag, timeout_ns):
    # CHECK-LABEL: tt.func public @poll_with_and_without_a_timeout
    # CHECK: tt.atomic_poll relaxed, sys, %arg0, %{{.*}} : !tt.ptr<i16>, i16 -> i1
    tl.atomic_poll(flag, 3, sem="relaxed", scope="sys")
    # CHECK: %[[T:.*]] = arith.extsi %arg1 : i32 to i64
    # CHECK: tt.atomic_poll acquire, gpu, %arg0, %{{.*}} timeout %[[T]] : !tt.ptr<i16>, i16 -> i1
    tl.atomic_poll(flag, 3, timeout_ns=timeout_ns)


def test_atomic_poll_is_triton_s_op_and_its_text_reads_back():
    from naiad.ir.parser import parse_module
    from naiad.ir.printer import print_module

    args = (MockTensor(tl.int16), 100)
    _filecheck.run_filecheck_test(poll_with_and_without_a_timeout, args=args)
    text = _filecheck.run_parser(poll_with_and_without_a_timeout, args=args).str()
    assert text.count("tt.atomic_poll") == 2
    assert print_module(parse_module(text)) == text
