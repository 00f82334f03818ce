"""`triton._internal_testing` (naiad/triton/_internal_testing.py): the helpers Triton's test
suite imports, answering for Naiad's active driver."""

import os
import sys

import numpy as np
import pytest
import torch

import naiad.language as tl
from naiad import knobs
from naiad.runtime.host_arrays import TensorWrapper
from naiad.triton import _internal_testing as testing


def test_dtype_lists_and_names():
    assert testing.dtypes == testing.integral_dtypes + testing.float_dtypes
    assert "bfloat16" in testing.dtypes_with_bfloat16
    assert testing.str_to_triton_dtype("float8_e4m3fn") is tl.float8e4nv
    assert testing.str_to_triton_dtype("bool") is tl.int1
    assert testing.str_to_triton_dtype("uint16") is tl.uint16
    assert testing.torch_dtype_name(torch.int64) == "int64"
    assert testing.torch_dtype_name(tl.bfloat16) == "bf16"


@pytest.mark.parametrize("dtype", ["int8", "uint32", "float16", "bfloat16", "bool"])
def test_numpy_random_and_the_round_trip_through_kernel_arguments(dtype):
    x = testing.numpy_random((4, 64), dtype, rs=np.random.RandomState(3))
    if dtype in testing.integral_dtypes:
        assert (x != 0).all()
    argument = testing.to_triton(x, device="cpu", dst_type=dtype)
    if dtype == "uint32":
        assert isinstance(argument, TensorWrapper) and argument.dtype is tl.uint32
    back = testing.to_numpy(argument)
    np.testing.assert_array_equal(back, x.astype(back.dtype))


def test_device_predicates_follow_the_active_driver():
    on_gpu = torch.cuda.is_available()
    assert testing.is_cuda() == on_gpu
    assert not testing.is_hip() and not testing.is_xpu() and not testing.is_hip_cdna3()
    with knobs.override(NAIAD_INTERPRET="1"):
        assert testing.is_interpreter() and testing.get_current_target() is None
        assert not testing.is_cuda() and testing.supports_tma()
    with knobs.override(NAIAD_BACKEND="interpreter"):  # launches return no compiled kernel
        assert testing.is_interpreter() and testing.get_current_target() is None
    with knobs.override(NAIAD_BACKEND="cpu", NAIAD_INTERPRET=None):
        assert not testing.is_interpreter()


def test_run_in_process_reports_the_exception():
    def fails(value):
        raise ValueError(value)

    result = testing.run_in_process(fails, ("boom",))
    assert isinstance(result.exc, ValueError) and str(result.exc) == "boom"
    assert testing.run_in_process(lambda: None).exc is None


def test_run_in_process_captures_stderr_and_sets_the_environment():
    def writes():
        print("from python", file=sys.stderr)
        os.write(2, b"from the descriptor\n")
        return os.environ["NAIAD_TEST_SETTING"]

    result = testing.run_in_process(writes, env={"NAIAD_TEST_SETTING": "on"})
    assert result.exc is None and "NAIAD_TEST_SETTING" not in os.environ
    assert "from python" in result.driver_stderr_output
    assert "from the descriptor" in result.driver_stderr_output


def test_a_tensor_wrapper_has_its_base_s_tensor_surface():
    base = torch.arange(12, dtype=torch.int32).reshape(3, 4)
    wrapped = testing.to_triton(base.numpy().astype(np.uint32), device="cpu")
    assert wrapped.stride() == (4, 1) and wrapped.stride(0) == 4 and wrapped.shape == (3, 4)
    assert wrapped.element_size() == 4 and wrapped.device.type == "cpu"
    copy = wrapped.clone()
    assert isinstance(copy, TensorWrapper) and copy.dtype is tl.uint32
    assert str(wrapped).startswith(f"TensorWrapper[{tl.uint32}](")


def test_the_null_allocator_resets_and_refuses():
    from naiad.runtime import allocator
    from naiad.triton.runtime._allocation import NullAllocator

    allocator.set_allocator(NullAllocator())
    try:
        with pytest.raises(RuntimeError, match="no allocator was set"):
            allocator.get_allocator()(16, 16, None)
    finally:
        allocator.set_allocator(None)


def test_assigning_a_wrappers_data_narrows_what_a_kernel_reads():
    import naiad

    @naiad.jit
    def copy_rows(dst, src, n_cols, stride_row, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        values = tl.load(src + row * stride_row + cols, mask=cols < n_cols)
        tl.store(dst + row * n_cols + cols, values, mask=cols < n_cols)

    full = np.random.RandomState(5).randint(1, 2**32 - 1, size=(6, 40), dtype=np.uint64)
    wrapped = testing.to_triton(full.astype(np.uint32), device="cpu")
    wrapped.data = wrapped.data[:4, :27]
    assert wrapped.shape == (4, 27) and wrapped.stride() == (40, 1)
    out = wrapped.new_empty((4, 27))
    copy_rows[(4,)](out, wrapped, 27, wrapped.stride(0), BLOCK=32)
    np.testing.assert_array_equal(testing.to_numpy(out), full[:4, :27].astype(np.uint32))
