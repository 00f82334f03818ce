"""Interpreter mode: how kernels run on NumPy, one program at a time, with Python's debugging tools.

(The interpreter's speed goal — a 1024-element add at about 0.5 ms per program — is measured by the
benchmarks, never by a test: timings do not belong in tests.)
"""

import inspect
import sys
import types

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.runtime.host_arrays import HostArray
from naiad.runtime.interpreter.memory import HostCopies


@naiad.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(
        out_ptr + offs,
        tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
        mask=mask,
    )


@naiad.jit(interpret=True)
def add_kernel_interpreted(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(
        out_ptr + offs,
        tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
        mask=mask,
    )


def _check_add(kernel):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(100).astype(np.float32), rng.standard_normal(100).astype(np.float32)
    out = np.full(100, np.nan, np.float32)
    kernel[(naiad.cdiv(100, 32),)](x, y, out, 100, BLOCK=32)
    np.testing.assert_array_equal(out, x + y)


# -- how interpreter mode is chosen --------------------------------------------------------------
def test_interpret_env_variable(monkeypatch):
    monkeypatch.setenv("NAIAD_INTERPRET", "1")
    assert knobs.interpret.get()
    _check_add(add_kernel)


def test_interpret_knob_override():
    with knobs.override(NAIAD_INTERPRET=1):
        assert knobs.interpret.get()
        _check_add(add_kernel)
    with knobs.override(NAIAD_INTERPRET=0):
        assert not knobs.interpret.get()


def test_jit_interpret_true():
    assert add_kernel_interpreted.interpret is True
    _check_add(add_kernel_interpreted)


# -- Python's own tools work inside kernels ------------------------------------------------------
@naiad.jit(interpret=True)
def prints(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    print("pid", tl.program_id(0), "x", x)
    tl.device_print("x=", x)


def test_print_and_device_print(capsys):
    prints[(2,)](np.array([1.5, -2.0], np.float32), BLOCK=2)
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "pid 0 x [ 1.5 -2. ]",
        "pid (0, 0, 0) idx (0) x=: 1.500000",
        "pid (0, 0, 0) idx (1) x=: -2.000000",
        "pid 1 x [ 1.5 -2. ]",
        "pid (1, 0, 0) idx (0) x=: 1.500000",
        "pid (1, 0, 0) idx (1) x=: -2.000000",
    ]


@naiad.jit(interpret=True)
def device_print_forms(x_ptr):
    offs = tl.arange(0, 2)
    x = tl.load(x_ptr + offs)
    tl.device_print("hex", x, hex=True)
    tl.device_print("two ", x, offs)
    tl.device_print("scalar ", tl.program_id(0))


def test_device_print_hex_several_values_and_scalars(capsys):
    device_print_forms[(1,)](np.array([1, -1], np.int32))
    assert capsys.readouterr().out.splitlines() == [
        "pid (0, 0, 0) idx (0) hex: 0x00000001",
        "pid (0, 0, 0) idx (1) hex: 0xffffffff",
        "pid (0, 0, 0) idx (0) two: (operand 0) 1",  # operand by operand, as the GPU prints
        "pid (0, 0, 0) idx (1) two: (operand 0) -1",
        "pid (0, 0, 0) idx (0) two: (operand 1) 0",
        "pid (0, 0, 0) idx (1) two: (operand 1) 1",
        "pid (0, 0, 0) idx () scalar: 0",  # a scalar has an empty index, as the GPU prints it
    ]


@naiad.jit(interpret=True)
def stops_at_breakpoint(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    doubled = x * 2
    breakpoint()  # BREAK
    tl.store(x_ptr + offs, doubled)


def test_breakpoint_reaches_the_kernel_frame_with_its_locals(monkeypatch):
    stops = []

    def hook(*args, **kwargs):
        frame = sys._getframe(1)
        stops.append((frame.f_code.co_filename, frame.f_lineno, dict(frame.f_locals)))

    monkeypatch.setattr(sys, "breakpointhook", hook)
    x = np.array([1, 2, 3, 4], np.int32)
    stops_at_breakpoint[(2,)](x, BLOCK=4)
    assert len(stops) == 2  # once per program
    lines, first = inspect.getsourcelines(stops_at_breakpoint.fn)
    break_line = first + next(i for i, line in enumerate(lines) if "# BREAK" in line)
    filename, lineno, local_vars = stops[0]
    assert (filename, lineno) == (__file__, break_line)
    assert {"x_ptr", "offs", "x", "doubled"} <= set(local_vars)
    # what a debugger shows: the tensors' values (str() asks the running interpreter)
    assert isinstance(local_vars["doubled"], tl.tensor)
    assert local_vars["doubled"].dtype == tl.int32


@naiad.jit(interpret=True)
def inspects_values(out_ptr):
    offs = tl.arange(0, 4)
    values = offs * 3
    tl.store(out_ptr, int(tl.sum(values, 0)) + len(str(values)))
    tl.store(out_ptr + 1, values.numel)


def test_tensor_values_are_visible_to_python():
    out = np.zeros(2, np.int32)
    inspects_values[(1,)](out)
    assert out.tolist() == [18 + len("[0 3 6 9]"), 4]


# -- the compiler's typing of Python code --------------------------------------------------------
@naiad.jit(interpret=True)
def wraps_in_loop(out_ptr, big):
    acc = 0
    for _ in range(3):
        acc += big
    tl.store(out_ptr, acc)
    prod = 1
    for i in range(5):
        prod = prod * (i + 100000)
    tl.store(out_ptr + 1, prod)


def test_int32_loop_accumulator_wraps_as_on_the_gpu():
    out = np.zeros(2, np.int32)
    wraps_in_loop[(1,)](out, 2**30, debug=False)  # debug mode would flag the overflow
    assert out[0] == np.int32(np.uint32(3 * 2**30))  # -2**30, not 3 * 2**30
    expected = 1
    for i in range(5):
        expected = (expected * (i + 100000)) % 2**32
    assert out[1] == np.uint32(expected).view(np.int32)


@naiad.jit(interpret=True)
def loop_variable_type(out_ptr, n, start64):
    for i in range(0, n):  # two bounds, as kernels write them
        tl.static_assert(i.dtype == tl.int32)
        tl.store(out_ptr + i, i * 1000000000)
    for j in range(start64, start64 + 1):
        tl.static_assert(j.dtype == tl.int64)


def test_int32_overflow_is_reported_in_debug_mode():
    with pytest.raises(AssertionError) as info:
        wraps_in_loop[(1,)](np.zeros(2, np.int32), 2**30, debug=True)
    assert isinstance(info.value, naiad.CompilationError)
    assert "overflow" in str(info.value)
    assert info.value.location.source_line.strip() == "acc += big"


def test_loop_variable_is_int32_unless_a_bound_is_wider():
    out = np.zeros(4, np.int32)
    loop_variable_type[(1,)](out, 4, 2**40, debug=False)
    wrapped = (np.arange(4, dtype=np.int64) * 1000000000).astype(np.int32)  # 3e9 wraps
    assert out.tolist() == wrapped.tolist() and out[3] < 0


# -- programs, atomics and memory ----------------------------------------------------------------
@naiad.jit
def record_order(counter_ptr, slot_ptr):
    pid = tl.program_id(0) + tl.num_programs(0) * (
        tl.program_id(1) + tl.num_programs(1) * tl.program_id(2)
    )
    ticket = tl.atomic_add(counter_ptr, 1)
    tl.store(slot_ptr + pid, ticket)


def test_programs_run_in_increasing_linear_pid_order():
    counter = np.zeros(1, np.int32)
    slots = np.full(2 * 3 * 4, -1, np.int32)
    record_order[(2, 3, 4)](counter, slots)
    assert counter[0] == 24
    assert slots.tolist() == list(range(24))


@naiad.jit
def histogram_atomics(x_ptr, bins_ptr, max_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.atomic_add(bins_ptr + (x % 8), 1, mask=mask)
    tl.atomic_max(max_ptr, tl.max(tl.where(mask, x, -1), 0))


def test_atomics_across_programs_are_exact():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 1000, 1000).astype(np.int32)
    bins = np.zeros(8, np.int32)
    top = np.full(1, -5, np.int32)
    histogram_atomics[(naiad.cdiv(1000, 64),)](x, bins, top, 1000, BLOCK=64)
    assert bins.tolist() == np.bincount(x % 8, minlength=8).tolist()
    assert top[0] == x.max()


@naiad.jit
def spin_lock_sum(lock_ptr, total_ptr, x_ptr):
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    tl.store(total_ptr, tl.load(total_ptr) + tl.load(x_ptr + tl.program_id(0)))
    tl.atomic_xchg(lock_ptr, 0)


def test_atomic_cas_spin_lock_across_programs():
    x = np.arange(1, 9, dtype=np.float32)
    lock, total = np.zeros(1, np.int32), np.zeros(1, np.float32)
    spin_lock_sum[(8,)](lock, total, x)
    assert total[0] == x.sum() and lock[0] == 0


@naiad.jit
def masked_far_away(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    keep = offs < 2
    far = tl.where(keep, offs, offs + 1000000000)  # masked-off lanes point far outside
    v = tl.load(x_ptr + far, mask=keep, other=-1.0)
    tl.store(out_ptr + far, v, mask=keep)
    tl.atomic_add(out_ptr + far, 10.0, mask=keep)


def test_masked_off_lanes_never_touch_memory():
    x = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    out = np.full(4, -9.0, np.float32)
    masked_far_away[(1,)](x, out, BLOCK=4)
    assert out.tolist() == [11.0, 12.0, -9.0, -9.0]


@naiad.jit
def masked_everything(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK) - 100
    none = offs > 1000
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=none), mask=none)


def test_fully_masked_access_to_a_read_only_array_is_fine():
    x = np.arange(4, dtype=np.float32)
    x.flags.writeable = False
    masked_everything[(1,)](x, BLOCK=4)
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0]


@naiad.jit
def writes_first(x_ptr):
    tl.store(x_ptr, 1.0)


def test_store_to_a_read_only_array_is_an_error():
    x = np.zeros(4, np.float32)
    x.flags.writeable = False
    with pytest.raises(naiad.CompilationError, match=r"read-only"):
        writes_first[(1,)](x)


@naiad.jit
def load_other_dtype_fill(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < 3, other=7)
    tl.store(out_ptr + offs, v)


def test_masked_load_takes_other():
    x = np.array([1, 2, 3, 4], np.int16)
    out = np.zeros(4, np.int16)
    load_other_dtype_fill[(1,)](x, out, BLOCK=4)
    assert out.tolist() == [1, 2, 3, 7]


# -- GPU arrays: copied to the host and back (unit-tested with a fake storage) -------------------
class FakeHostBuffer:
    def __init__(self, array):
        self.array = array

    def data_ptr(self):
        return self.array.ctypes.data


class FakeDeviceStorage:
    """Records what the interpreter asks of a GPU storage: one `.cpu()`, one `.copy_()` back."""

    def __init__(self, values, device_base=0x7000_0000):
        self.values = np.array(values, np.float32)
        self.calls = []
        self.host = None
        self.device_base = device_base

    def data_ptr(self):
        return self.device_base

    def nbytes(self):
        return self.values.nbytes

    def cpu(self):
        self.calls.append("cpu")
        self.host = FakeHostBuffer(self.values.copy())
        return self.host

    def copy_(self, source):
        self.calls.append("copy_")
        assert source is self.host
        self.values[:] = source.array


def _gpu_array(storage, device_base, offset_elems, n):
    return HostArray(
        data_ptr=device_base + 4 * offset_elems,
        dtype=tl.float32,
        storage_base=device_base,
        storage_nbytes=4 * n,
        device="cuda",
        writable=True,
        owner=storage,
    )


def test_host_copies_copy_each_storage_once_and_write_back():
    storage = FakeDeviceStorage([1, 2, 3, 4])
    copies = HostCopies()
    whole = _gpu_array(storage, 0x7000_0000, 0, 4)
    tail = _gpu_array(storage, 0x7000_0000, 2, 4)  # another view of the same storage
    data, base = copies.host_address(whole)
    data2, base2 = copies.host_address(tail)
    assert storage.calls == ["cpu"]  # aliasing views share one host copy
    assert base == base2 == storage.host.data_ptr() == data and data2 == data + 8
    storage.host.array[:] = [10, 20, 30, 40]  # what the kernel wrote on the host
    assert storage.values.tolist() == [1, 2, 3, 4]
    copies.write_back()
    assert storage.calls == ["cpu", "copy_"]
    assert storage.values.tolist() == [10, 20, 30, 40]


def test_host_copies_keep_storages_apart():
    first, second = FakeDeviceStorage([1]), FakeDeviceStorage([2])
    copies = HostCopies()
    copies.host_address(_gpu_array(first, 0x1000, 0, 1))
    copies.host_address(_gpu_array(second, 0x2000, 0, 1))
    copies.write_back()
    assert first.calls == ["cpu", "copy_"] and second.calls == ["cpu", "copy_"]


def test_host_copies_write_back_nothing_when_unused():
    copies = HostCopies()
    copies.write_back()
    assert copies.by_storage == {}


class FakeCudaTensor:
    """Looks like a torch tensor on a GPU to the launcher (module, storage, device, dtype)."""

    __module__ = "torch.fake_cuda"

    def __init__(self, storage, offset=0):
        self.storage, self.offset = storage, offset
        self.dtype = "torch.float32"
        self.device = types.SimpleNamespace(type="cuda")

    def untyped_storage(self):
        return self.storage

    def data_ptr(self):
        return self.storage.device_base + 4 * self.offset


@naiad.jit
def scale_in_place(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 10 + tl.load(y_ptr + offs))


def test_gpu_tensor_is_copied_to_the_host_and_back_around_the_launch():
    storage = FakeDeviceStorage([1, 2, 3, 4, 5, 6])
    # two arguments viewing one storage share one host copy, so the kernel sees its own writes
    scale_in_place[(1,)](FakeCudaTensor(storage, offset=2), FakeCudaTensor(storage), BLOCK=4)
    assert storage.calls == ["cpu", "copy_"]
    assert storage.values.tolist() == [1, 2, 31, 42, 53, 64]


@naiad.jit
def writes_then_fails(x_ptr):
    tl.store(x_ptr, 99.0)
    tl.store(x_ptr + 100, 1.0)


def test_gpu_tensor_is_written_back_even_when_the_kernel_fails():
    storage = FakeDeviceStorage([1, 2])
    with pytest.raises(IndexError, match=r"`x_ptr`"):
        writes_then_fails[(1,)](FakeCudaTensor(storage))
    assert storage.calls == ["cpu", "copy_"] and storage.values.tolist() == [99, 2]


@naiad.jit
def _expect_zero_kernel(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.expect_zero(x, offs >= N // 2))


def test_expect_zero_returns_x_and_asserts_only_in_debug_mode():
    x = np.concatenate([np.arange(1, 9, dtype=np.float32), np.zeros(8, np.float32)])
    out = np.full_like(x, np.nan)
    _expect_zero_kernel[(1,)](x, out, N=16, debug=True)
    np.testing.assert_array_equal(out, x)
    x[12] = 3.0
    _expect_zero_kernel[(1,)](x, out, N=16)  # not checked outside debug mode
    np.testing.assert_array_equal(out, x)
    with pytest.raises(AssertionError, match="expect_zero"):
        _expect_zero_kernel[(1,)](x, out, N=16, debug=True)
