"""The launch front: binding arguments, grids, options, argument kinds, and jit-to-jit calls."""

import collections

import ml_dtypes
import numpy as np
import pytest
import torch

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.runtime import driver, launchers


@naiad.jit
def fill_index(out_ptr, n, BLOCK: tl.constexpr = 16):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, offs, mask=offs < n)


def poisoned(n, dtype=np.int32):
    return np.full(n, -7, dtype)


# -- binding errors name the argument and what was expected --------------------------------------
def test_missing_argument_is_named():
    with pytest.raises(TypeError, match=r"fill_index\(\) missing required argument 'n'"):
        fill_index[(1,)](poisoned(16))


def test_extra_keyword_is_named():
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'bogus'"):
        fill_index[(1,)](poisoned(16), 16, bogus=1)


def test_too_many_positional_arguments():
    with pytest.raises(TypeError, match=r"takes 3 arguments but 4 were given"):
        fill_index[(1,)](poisoned(16), 16, 16, 5)


def test_argument_given_twice():
    with pytest.raises(TypeError, match=r"multiple values for argument 'n'"):
        fill_index[(1,)](poisoned(16), 16, n=16)


def test_string_for_a_pointer_names_argument_and_expected_kinds():
    with pytest.raises(TypeError) as info:
        fill_index[(1,)]("not an array", 16)
    message = str(info.value)
    assert "`out_ptr`" in message and "expected an array" in message and "str" in message


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
def test_numpy_scalar_argument_is_rejected_with_advice(backend):
    with knobs.override(NAIAD_BACKEND=backend), pytest.raises(TypeError) as info:
        fill_index[(1,)](poisoned(16), np.int32(16))
    message = str(info.value)
    assert "`n`" in message and "NumPy scalar" in message and "int(x)" in message


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
def test_an_argument_of_no_kind_a_kernel_takes_is_named(backend):
    with knobs.override(NAIAD_BACKEND=backend), pytest.raises(TypeError) as info:
        fill_index[(1,)](poisoned(16), object())
    expected = "argument `n`: expected an array, a tensor, an int, a float, a bool or None"
    assert expected + ", got object" in str(info.value)


@pytest.mark.parametrize("value", [2**64, -(2**63) - 1])
def test_int_too_large_for_64_bits(value):
    with pytest.raises(OverflowError, match=r"`n` = -?\d+ is too large for a 64-bit integer"):
        fill_index[(1,)](poisoned(16), value)


def test_array_of_unsupported_dtype():
    with pytest.raises(TypeError, match=r"complex64"):
        fill_index[(1,)](np.zeros(16, np.complex64), 16)


# -- grids ---------------------------------------------------------------------------------------
@naiad.jit
def record_pids(out_ptr):
    x, y, z = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    nx, ny, nz = tl.num_programs(0), tl.num_programs(1), tl.num_programs(2)
    linear = x + nx * (y + ny * z)
    tl.store(out_ptr + 4 * linear, x)
    tl.store(out_ptr + 4 * linear + 1, y)
    tl.store(out_ptr + 4 * linear + 2, z)
    tl.store(out_ptr + 4 * linear + 3, nx * ny * nz)


@pytest.mark.parametrize("grid", [(3,), (3, 2), (3, 2, 2), [2, 2], 4])
def test_grid_of_one_to_three_dims(grid):
    dims = list(grid) if isinstance(grid, (tuple, list)) else [grid]
    dims += [1] * (3 - len(dims))
    total = dims[0] * dims[1] * dims[2]
    out = poisoned(4 * total)
    record_pids[grid](out)
    expected = [
        (x, y, z, total) for z in range(dims[2]) for y in range(dims[1]) for x in range(dims[0])
    ]
    assert out.reshape(-1, 4).tolist() == [list(e) for e in expected]


def test_grid_callable_receives_meta_with_constexpr_defaults_and_args():
    seen = {}

    def grid(meta):
        seen.update(meta)
        return (naiad.cdiv(meta["n"], meta["BLOCK"]),)

    out = poisoned(40)
    fill_index[grid](out, 37)
    assert seen["BLOCK"] == 16 and seen["n"] == 37 and "out_ptr" in seen
    assert out[:37].tolist() == list(range(37)) and (out[37:] == -7).all()


def test_grid_callable_sees_overridden_constexpr():
    out = poisoned(40)
    fill_index[lambda meta: (naiad.cdiv(40, meta["BLOCK"]),)](out, 40, BLOCK=8)
    assert out.tolist() == list(range(40))


def test_zero_size_grid_runs_nothing():
    out = poisoned(16)
    fill_index[(0,)](out, 16)
    fill_index[(4, 0)](out, 16)
    fill_index[lambda meta: (0, 1, 1)](out, 16)
    assert (out == -7).all()


def test_negative_grid_dimension_is_an_error():
    with pytest.raises(ValueError, match=r"grid dimensions must be non-negative"):
        fill_index[(-1,)](poisoned(16), 16)


@pytest.mark.parametrize("grid", [(), (1, 1, 1, 1)])
def test_grid_needs_one_to_three_dimensions(grid):
    with pytest.raises(ValueError, match=r"grid must have 1 to 3 dimensions"):
        fill_index[grid](poisoned(16), 16)


def test_grid_dimensions_must_be_integers():
    with pytest.raises(TypeError, match=r"grid dimensions must be integers"):
        fill_index[(1.5,)](poisoned(16), 16)


# -- launch options ------------------------------------------------------------------------------
@pytest.mark.parametrize("warps", [3, 0, 6])
def test_num_warps_must_be_power_of_2(warps):
    with pytest.raises(ValueError, match=r"num_warps must be a power of 2"):
        fill_index[(1,)](poisoned(16), 16, num_warps=warps)
    # Triton checks its options with `assert`: code catching AssertionError finds it too.
    with pytest.raises(AssertionError, match=r"num_warps must be a power of 2"):
        fill_index.warmup(poisoned(16), 16, grid=(1,), num_warps=warps)


def test_options_are_accepted():
    out = poisoned(16)
    fill_index[(1,)](out, 16, num_warps=8, num_stages=2, maxnreg=128, num_ctas=1)
    assert out.tolist() == list(range(16))


def test_warmup_binds_but_runs_nothing():
    out = poisoned(16)
    fill_index.warmup(out, 16, grid=(1,))
    assert (out == -7).all()
    with pytest.raises(TypeError, match=r"missing required argument 'n'"):
        fill_index.warmup(out, grid=(1,))


@naiad.jit
def fill_target(out_ptr, target, BLOCK: tl.constexpr = 16):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, offs + target)


def test_a_parameter_named_target_takes_the_keyword():
    """`target=` names the compile target of a warmup, unless the kernel has a parameter of
    that name: the kernel's signature wins, at a launch and at a warmup."""
    out = poisoned(16)
    fill_target[(1,)](out, target=100)
    assert out.tolist() == [100 + i for i in range(16)]
    compiled = fill_target.warmup(out, target=5, grid=(1,))
    assert compiled is not None and (out == [100 + i for i in range(16)]).all()
    compiled = fill_index.warmup(out, 16, grid=(1,), target="cpu")
    assert compiled is not None


def test_constexpr_default_and_override():
    out = poisoned(32)
    fill_index[(1,)](out, 32)  # BLOCK defaults to 16
    assert out[:16].tolist() == list(range(16)) and (out[16:] == -7).all()
    fill_index[(1,)](out, 32, BLOCK=32)
    assert out.tolist() == list(range(32))


@naiad.jit(do_not_specialize=["n"], noinline=True)
def fill_unspecialized(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, offs * 2, mask=offs < n)


def test_do_not_specialize_and_noinline_are_accepted():
    out = poisoned(16)
    fill_unspecialized[(1,)](out, 5, BLOCK=16)
    assert out[:5].tolist() == [0, 2, 4, 6, 8] and (out[5:] == -7).all()
    assert fill_unspecialized.params[1].do_not_specialize


# -- naiad.cdiv, naiad.next_power_of_2 -----------------------------------------------------------
@pytest.mark.parametrize(
    "x, y, expected", [(1, 1, 1), (10, 3, 4), (9, 3, 3), (0, 4, 0), (1025, 1024, 2)]
)
def test_cdiv(x, y, expected):
    assert naiad.cdiv(x, y) == expected


@pytest.mark.parametrize(
    "n, expected", [(0, 1), (1, 1), (2, 2), (3, 4), (17, 32), (1024, 1024), (1025, 2048)]
)
def test_next_power_of_2(n, expected):
    assert naiad.next_power_of_2(n) == expected


@naiad.jit
def uses_host_helpers(out_ptr, N: tl.constexpr):
    BLOCK: tl.constexpr = naiad.next_power_of_2(N)
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, offs * 0 + naiad.cdiv(N, 4), mask=offs < N)


def test_cdiv_and_next_power_of_2_inside_a_kernel():
    out = poisoned(8)
    uses_host_helpers[(1,)](out, 7)
    assert out[:7].tolist() == [2] * 7 and out[7] == -7


# -- naiad.reinterpret ---------------------------------------------------------------------------
@naiad.jit
def fp8_to_fp32(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs).to(tl.float32))


def test_reinterpret_uint8_bits_as_float8e4nv():
    # zero, subnormals, normals, the largest finite (0x7e = 448) and their negatives; 0x7f is NaN
    bits = np.array(
        [
            0x00,
            0x01,
            0x07,
            0x08,
            0x38,
            0x3C,
            0x40,
            0x7E,
            0x80,
            0x81,
            0x87,
            0x88,
            0xB8,
            0xBC,
            0xC0,
            0xFE,
        ],
        np.uint8,
    )
    out = np.zeros(16, np.float32)
    fp8_to_fp32[(1,)](naiad.reinterpret(bits, tl.float8e4nv), out, BLOCK=16)
    expected = bits.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    np.testing.assert_array_equal(out, expected)


@naiad.jit
def shift_right(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) >> 1)


def test_reinterpret_int32_as_uint32_changes_the_shift():
    x = np.array([-2, -1, 4, 2**31 - 1], np.int32)
    signed = np.zeros(4, np.int32)
    shift_right[(1,)](x, signed, BLOCK=4)
    assert signed.tolist() == [-1, -1, 2, 2**30 - 1]  # arithmetic shift
    unsigned = np.zeros(4, np.int32)
    shift_right[(1,)](
        naiad.reinterpret(x, tl.uint32), naiad.reinterpret(unsigned, tl.uint32), BLOCK=4
    )
    assert unsigned.view(np.uint32).tolist() == [0x7FFFFFFF, 0x7FFFFFFF, 2, 2**30 - 1]  # logical


def test_reinterpret_to_a_host_dtype():
    """A NumPy (or torch) dtype names the element type too, as Triton's reinterpret takes
    torch dtypes: uint16 bits read as fp16, and random fp8 e5m2 bits given as ml_dtypes'."""
    gen = np.random.default_rng(16)
    halves = gen.standard_normal(16).astype(np.float16)
    out = np.zeros(16, np.float32)
    fp8_to_fp32[(1,)](naiad.reinterpret(halves.view(np.uint16), np.float16), out, BLOCK=16)
    np.testing.assert_array_equal(out, halves.astype(np.float32))
    bits = gen.integers(0, 0x7B, 16, dtype=np.uint8)  # finite magnitudes, positive
    fp8_to_fp32[(1,)](naiad.reinterpret(bits, ml_dtypes.float8_e5m2), out, BLOCK=16)
    np.testing.assert_array_equal(out, bits.view(ml_dtypes.float8_e5m2).astype(np.float32))


def test_reinterpret_back_to_own_dtype_unwraps():
    x = np.zeros(4, np.int32)
    assert naiad.reinterpret(naiad.reinterpret(x, tl.uint32), tl.int32) is x


# -- argument kinds ------------------------------------------------------------------------------
@naiad.jit
def scale_copy(x_ptr, out_ptr, scale, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * scale)


def test_numpy_arrays_and_python_float():
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    scale_copy[(1,)](x, out, 0.5, BLOCK=8)
    np.testing.assert_array_equal(out, x * 0.5)


def test_numpy_strided_view_addresses_its_base():
    base = np.arange(16, dtype=np.float32)
    out = np.zeros(8, np.float32)
    scale_copy[(1,)](base[8:], out, 2.0, BLOCK=8)
    np.testing.assert_array_equal(out, base[8:] * 2)


def test_torch_cpu_tensors():
    x = torch.arange(8, dtype=torch.float32)
    out = torch.zeros(8, dtype=torch.float32)
    scale_copy[(1,)](x, out, 3, BLOCK=8)
    assert torch.equal(out, x * 3)


class _GpuDriver:
    """The active driver as a GPU machine's answers: device 1 of CUDA's."""

    def get_current_target(self):
        return driver.GPUTarget("cuda", 90, 32)

    def get_current_device(self):
        return 1


def test_a_launch_without_arrays_runs_on_the_active_drivers_device():
    """Host arrays run on the CPU; with no array at all, where Triton's launch would: the
    active driver's device (the GPU on a GPU machine)."""
    previous = driver.active.get()
    try:
        driver.active.set(_GpuDriver())
        assert launchers.device_of({"n": 3, "scale": 0.5}) == ("cuda", 1)
        assert launchers.device_of({"x": np.zeros(4), "n": 3}) == ("cpu", 0)
        assert launchers.device_of({"x": torch.zeros(4), "n": 3}) == ("cpu", 0)
        driver.active.set(driver.CpuDriver())
        assert launchers.device_of({"n": 3}) == ("cpu", 0)
    finally:
        driver.active.set(previous)


def test_torch_bfloat16_tensor():
    x = torch.tensor([1.5, -2.0, 3.25, 0.0], dtype=torch.bfloat16)
    out = torch.zeros(4, dtype=torch.bfloat16)
    scale_copy[(1,)](x, out, 2, BLOCK=4)
    assert torch.equal(out, x * 2)


class ArrayInterfaceOnly:
    """Exposes memory through `__array_interface__` only."""

    def __init__(self, array):
        self._array = array
        self.__array_interface__ = array.__array_interface__


class DataPtrOnly:
    """Exposes memory through `data_ptr()`, `dtype`, `numel()` and `element_size()` only."""

    def __init__(self, array):
        self._array = array
        self.dtype = str(array.dtype)

    def data_ptr(self):
        return self._array.ctypes.data

    def numel(self):
        return self._array.size

    def element_size(self):
        return self._array.itemsize


def test_object_with_array_interface():
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    scale_copy[(1,)](ArrayInterfaceOnly(x), ArrayInterfaceOnly(out), 2.0, BLOCK=8)
    np.testing.assert_array_equal(out, x * 2)


def test_object_with_data_ptr_and_numel():
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    scale_copy[(1,)](DataPtrOnly(x), DataPtrOnly(out), 2.0, BLOCK=8)
    np.testing.assert_array_equal(out, x * 2)


def test_data_ptr_object_is_bounds_checked_by_its_numel():
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    with pytest.raises(IndexError, match=r"`x_ptr`"):
        scale_copy[(1,)](DataPtrOnly(x[:4]), out, 2.0, BLOCK=8)


@naiad.jit
def flags(out_ptr, flag, maybe_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    value = tl.where(flag, offs, -offs)
    if maybe_ptr is not None:
        value += tl.load(maybe_ptr + offs)
    tl.store(out_ptr + offs, value)


def test_python_bool_and_none_arguments():
    out = poisoned(4)
    flags[(1,)](out, True, None, BLOCK=4)
    assert out.tolist() == [0, 1, 2, 3]
    flags[(1,)](out, False, None, BLOCK=4)
    assert out.tolist() == [0, -1, -2, -3]
    flags[(1,)](out, True, np.full(4, 10, np.int32), BLOCK=4)
    assert out.tolist() == [10, 11, 12, 13]


# -- integer argument typing (as Triton types them) ----------------------------------------------
@naiad.jit
def assert_int_type(v, EXPECTED: tl.constexpr):
    tl.static_assert(v.dtype == EXPECTED)


@pytest.mark.parametrize(
    "value, expected",
    [
        (1, tl.int32),
        (-(2**31), tl.int32),
        (2**31 - 1, tl.int32),
        (2**31, tl.int64),
        (-(2**31) - 1, tl.int64),
        (2**63 - 1, tl.int64),
        (-(2**63), tl.int64),
        (2**63, tl.uint64),
        (2**64 - 1, tl.uint64),
        (True, tl.int1),
        (1.5, tl.float32),
    ],
)
def test_scalar_argument_types(value, expected):
    assert_int_type[(1,)](value, expected)


def test_scalar_argument_type_mismatch_is_a_static_assert():
    with pytest.raises(naiad.CompileTimeAssertionFailure):
        assert_int_type[(1,)](2**31, tl.int32)


@naiad.jit
def store_scalar(out_ptr, v):
    tl.store(out_ptr, v)


@pytest.mark.parametrize(
    "value, dtype", [(1, np.int32), (2**31, np.int64), (2**63 + 5, np.uint64), (-(2**40), np.int64)]
)
def test_scalar_arguments_keep_their_value(value, dtype):
    out = np.zeros(1, dtype)
    store_scalar[(1,)](out, value)
    assert int(out[0]) == value


@naiad.jit
def annotated_scalar(out_ptr, v: tl.int64):
    tl.static_assert(v.dtype == tl.int64)
    tl.store(out_ptr, v)


def test_annotated_scalar_type_wins():
    out = np.zeros(1, np.int64)
    annotated_scalar[(1,)](out, 3)
    assert out[0] == 3


# -- tuples and namedtuples ----------------------------------------------------------------------
Pair = collections.namedtuple("Pair", ["src", "dst"])


@naiad.jit
def copy_through_tuple(ptrs, sizes, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < sizes[0]
    tl.store(ptrs[1] + offs, tl.load(ptrs[0] + offs, mask=mask) + sizes[1], mask=mask)


@naiad.jit
def copy_through_namedtuple(pair, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(pair.dst + offs, tl.load(pair.src + offs))


def test_tuple_arguments():
    x = np.arange(8, dtype=np.int32)
    out = poisoned(8)
    copy_through_tuple[(1,)]((x, out), (5, 100), BLOCK=8)
    assert out.tolist() == [100, 101, 102, 103, 104, -7, -7, -7]


def test_namedtuple_arguments():
    x = np.arange(8, dtype=np.int32)
    out = poisoned(8)
    copy_through_namedtuple[(1,)](Pair(src=x, dst=out), BLOCK=8)
    assert out.tolist() == list(range(8))


# -- jit functions as arguments, and jit functions calling jit functions -------------------------
@naiad.jit
def maximum_combine(a, b):
    return tl.maximum(a, b)


@naiad.jit
def add_combine(a, b):
    return a + b


@naiad.jit
def relu(x):
    return tl.where(x > 0, x, 0)


@naiad.jit
def negate(x):
    return -x


@naiad.jit
def reduce_with(x_ptr, out_ptr, combine, activation, BLOCK: tl.constexpr):
    x = activation(tl.load(x_ptr + tl.arange(0, BLOCK)))
    tl.store(out_ptr, tl.reduce(x, 0, combine))


@pytest.mark.parametrize(
    "combine, activation, expected",
    [
        (maximum_combine, relu, 7),
        (add_combine, relu, 1 + 7),
        (add_combine, negate, -(1 + 7 - 3 - 5)),
        (maximum_combine, negate, 5),
    ],
)
def test_jit_function_passed_as_argument(combine, activation, expected):
    x = np.array([1, -3, 7, -5], np.int32)
    out = np.zeros(1, np.int32)
    reduce_with[(1,)](x, out, combine, activation, BLOCK=4)
    assert out[0] == expected


@naiad.jit
def min_max_scaled(x, SCALE: tl.constexpr):
    return tl.min(x, 0) * SCALE, tl.max(x, 0) * SCALE


@naiad.jit
def stats(x, SCALE: tl.constexpr):
    lo, hi = min_max_scaled(x, SCALE)
    return lo, hi, hi - lo


@naiad.jit
def nested_calls(x_ptr, out_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    lo, hi, spread = stats(x, 10)
    tl.store(out_ptr, lo)
    tl.store(out_ptr + 1, hi)
    tl.store(out_ptr + 2, spread)
    both = min_max_scaled(x, SCALE=2)
    tl.store(out_ptr + 3, both[0] + both[1])


def test_jit_calls_jit_with_constexpr_args_and_tuple_results():
    x = np.array([4, -2, 9, 0], np.int32)
    out = poisoned(4)
    nested_calls[(1,)](x, out, BLOCK=4)
    assert out.tolist() == [-20, 90, 110, 14]


def test_warmup_compiles_for_the_target_of_its_arguments():
    """Host arrays compile for the CPU (a launch with them runs there); types alone for the
    active driver's target; a named target wins."""
    from naiad.runtime.driver import active

    out = poisoned(16)
    host = fill_index.warmup(out, 16, grid=(1,))
    assert "linalg" in host.asm and "ptx" not in host.asm
    typed = fill_index.warmup("*i32", 16, grid=(1,))
    on_gpu = active.get_current_target_name().startswith("cuda")
    assert ("ptx" in typed.asm) == on_gpu and ("linalg" in typed.asm) != on_gpu
    named = fill_index.warmup(out, 16, grid=(1,), target="cuda:sm_80")
    assert named.metadata["target"] == "cuda:sm_80" and "ptx" in named.asm
