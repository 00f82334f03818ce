"""The CUDA launch hot path without a GPU (cuda_launcher.fast_cuda_launch, driver.fast_launch):
the driver is a stand-in that records each launch with the argument values read back from the
`void**` parameter array, as cuLaunchKernel reads them. The same launches on a GPU are
tests/gpu/test_launch_fast_path_gpu.py's."""

import ctypes
import random
import struct
import threading
import time
from dataclasses import dataclass

import pytest

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.backends import registry
from naiad.backends.nvidia import driver as cuda_driver
from naiad.runtime import cuda_launcher, cuda_native_launch
from naiad.runtime.launch_options import LaunchOptions


@naiad.jit
def axpy(x_ptr: tl.const, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, alpha * tl.load(x_ptr + offs, mask=mask), mask=mask)


@pytest.fixture(autouse=True)
def compiled():
    """Launches on CUDA tensors compile (the test-wide default is the interpreter)."""
    with knobs.override(NAIAD_BACKEND="auto"):
        yield


@dataclass(frozen=True)
class FakeDevice:
    type: str
    index: int

    def __str__(self) -> str:
        return f"{self.type}:{self.index}"


class FakeCudaTensor:
    """What the launchers read of a torch CUDA tensor."""

    def __init__(self, address: int, index: int = 0, dtype: str = "float32"):
        self.device = FakeDevice("cuda", index)
        self.dtype = dtype
        self.address = address
        self.nbytes = 4096

    def data_ptr(self) -> int:
        return self.address


@pytest.fixture
def fake_driver(monkeypatch):
    """Records each launch as (path, grid, stream, argument values as the driver reads them)."""
    launches = []
    kinds = ("*fp32", "*fp32", "*fp32", "i32", "fp32")
    names = tuple(f"argument `{name}`" for name in ("x_ptr", "y_ptr", "out_ptr", "n", "alpha"))
    kernel = cuda_driver.CubinKernel(b"", "axpy", kinds, arg_names=names)
    compiled = cuda_launcher._Compiled(kernel, None, (0, 1, 2), {})
    function = cuda_driver.Function(None, 0, 0, 0, 0, 0)
    monkeypatch.setattr(cuda_launcher, "_arch", lambda device: "cuda:sm_90a")
    monkeypatch.setattr(cuda_launcher.CudaLauncher, "_compile", lambda *args: compiled)
    monkeypatch.setattr(cuda_launcher, "stream_reader", lambda: lambda device: 100 + device)
    monkeypatch.setattr(cuda_driver.CubinKernel, "function", lambda self, device: function)
    monkeypatch.setattr(cuda_driver, "set_current_device", lambda device: None)

    def read(address):
        """The argument values as the driver reads them from a `void**` parameter array."""
        pointers = (ctypes.c_void_p * len(kinds)).from_address(address)
        types = {"*fp32": ctypes.c_uint64, "i32": ctypes.c_int32, "fp32": ctypes.c_float}
        return tuple(types[k].from_address(p).value for k, p in zip(kinds, pointers))

    def slow(function, grid, threads, shared, stream, params):
        launches.append(("slow", grid, stream, read(params.address)))

    def fast_launch(function, threads, shared):
        def launch(gx, gy, gz, stream, address):
            launches.append(("fast", (gx, gy, gz), stream, read(address)))

        return launch

    monkeypatch.setattr(cuda_driver, "launch", slow)
    monkeypatch.setattr(cuda_driver, "fast_launch", fast_launch)
    # bound launches call the stand-in's fast launch too (the native one has a test of its own)
    monkeypatch.setattr(cuda_native_launch, "native_launch", lambda: None)
    axpy.forget_compiled()
    yield launches
    axpy.forget_compiled()


@pytest.fixture
def addresses(fake_driver, monkeypatch):
    """The `void**` array address of each hot-path launch, in order."""
    found, record = [], cuda_driver.fast_launch

    def fast_launch(function, threads, shared):
        launch = record(function, threads, shared)

        def spy(gx, gy, gz, stream, address):
            found.append(address)
            launch(gx, gy, gz, stream, address)

        return spy

    monkeypatch.setattr(cuda_driver, "fast_launch", fast_launch)
    return found


@pytest.fixture
def bound_driver(fake_driver, monkeypatch):
    """`fake_driver` with axpy's every parameter taken, as a bound launch's kernel has them."""
    kinds = ("*fp32", "*fp32", "*fp32", "i32", "fp32")
    kernel = cuda_driver.CubinKernel(b"", "axpy", kinds)
    compiled = cuda_launcher._Compiled(kernel, None, (0, 1, 2), {}, taken=(0, 1, 2, 3, 4))
    monkeypatch.setattr(cuda_launcher.CudaLauncher, "_compile", lambda *args: compiled)
    return fake_driver


def test_cuda_hot_path_writes_the_arguments_and_reads_the_stream(fake_driver):
    x, y, out = FakeCudaTensor(4096), FakeCudaTensor(8192), FakeCudaTensor(12288)
    axpy[(3,)](x, y, out, 100, 2.5, BLOCK=64)
    axpy[(5, 2)](x, y, out, 100, 0.25, BLOCK=64)
    x.address = 4096 + 64  # still aligned: the same prepared launch, a new address
    axpy[(1,)](x, y, out, 200, -1.0, BLOCK=64)
    assert fake_driver == [
        ("slow", (3, 1, 1), 100, (4096, 8192, 12288, 100, 2.5)),
        ("fast", (5, 2, 1), 100, (4096, 8192, 12288, 100, 0.25)),
        ("fast", (1, 1, 1), 100, (4160, 8192, 12288, 200, -1.0)),
    ]


def test_each_thread_packs_its_own_parameter_block(fake_driver, addresses):
    rng = random.Random(5)
    x, y, out = (FakeCudaTensor(4096 * rng.randint(1, 99)) for _ in range(3))
    n, alpha = rng.randint(2, 999), rng.uniform(-2, 2)
    axpy[(1,)](x, y, out, n, alpha, BLOCK=64)  # slow: prepares the launch
    axpy[(2,)](x, y, out, n, alpha, BLOCK=64)
    worker = threading.Thread(target=lambda: axpy[(3,)](x, y, out, n + 16, -alpha, BLOCK=64))
    worker.start()
    worker.join()
    axpy[(4,)](x, y, out, n, alpha, BLOCK=64)
    pointers = (x.address, y.address, out.address)
    assert [entry[1:] for entry in fake_driver] == [
        ((1, 1, 1), 100, (*pointers, n, pytest.approx(alpha))),
        ((2, 1, 1), 100, (*pointers, n, pytest.approx(alpha))),
        ((3, 1, 1), 100, (*pointers, n + 16, pytest.approx(-alpha))),
        ((4, 1, 1), 100, (*pointers, n, pytest.approx(alpha))),
    ]
    assert addresses[0] == addresses[2] != addresses[1]  # the worker's block is its own


def test_threads_launching_at_once_compile_once_and_pass_their_own_arguments(
    fake_driver, monkeypatch
):
    """Slow-path launches from 8 threads of a kernel never launched: one launcher and one
    compile for them all, and each launch's parameters its own (the slow path's parameter
    block is one per kernel: a launch holds it until the driver has read it)."""
    compiles, launched = [], []
    compile_stand_in = cuda_launcher.CudaLauncher._compile

    def slow_compile(self, *args):
        compiles.append(self)
        time.sleep(0.05)  # every thread asks while the first compile runs
        return compile_stand_in(self, *args)

    def slow_launch(function, grid, threads, shared, stream, params):
        time.sleep(0.001)  # where another thread's launch would overwrite the parameters
        values = tuple(slot.value for slot in params.slots)
        launched.append((threading.current_thread().name, values))

    monkeypatch.setattr(cuda_launcher.CudaLauncher, "_compile", slow_compile)
    monkeypatch.setattr(cuda_driver, "launch", slow_launch)

    def arguments(i):
        x = 4096 * (i + 1)
        return x, x + (1 << 20), x + (2 << 20), 32 * (i + 1), float(i)

    barrier, errors = threading.Barrier(8), []

    def work(i):
        x, y, out, n, alpha = arguments(i)
        tensors = [FakeCudaTensor(address) for address in (x, y, out)]
        bound = dict(zip(("x_ptr", "y_ptr", "out_ptr"), tensors), n=n, alpha=alpha, BLOCK=64)
        launcher = axpy.launcher(registry.lookup("cuda:sm_90a")[0])
        barrier.wait()
        try:
            for _ in range(5):
                launcher.launch(bound, (1, 1, 1), LaunchOptions(), False)
        except Exception as error:  # reported below: pytest does not see other threads' errors
            errors.append(error)

    workers = [threading.Thread(target=work, args=(i,), name=str(i)) for i in range(8)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    assert len(compiles) == 1 and len(axpy._launchers["cuda"].kernels) == 1
    assert len(launched) == 40
    for thread, values in launched:
        assert values == arguments(int(thread))


def test_threads_load_a_kernels_module_once_per_device(monkeypatch):
    loads = []

    def load_function(cubin, entry, device, shared, ptx=None):
        loads.append(device)
        time.sleep(0.02)  # every thread asks while the first load runs
        return cuda_driver.Function(object(), device, 0, 0, 0, 0)

    monkeypatch.setattr(cuda_driver, "load_function", load_function)
    kernel = cuda_driver.CubinKernel(b"", "axpy", ("*fp32",))
    barrier, found = threading.Barrier(8), []

    def work(i):
        barrier.wait()
        found.append(kernel.function(i % 2))

    workers = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert sorted(loads) == [0, 1]
    assert len({id(function) for function in found}) == 2


def test_cuda_hot_path_keeps_the_slow_paths_checks(fake_driver):
    x, y, out = FakeCudaTensor(4096), FakeCudaTensor(8192), FakeCudaTensor(12288)
    axpy[(1,)](x, y, out, 100, 2.5, BLOCK=64)
    axpy[(1,)](x, y, out, 100, 2.5, BLOCK=64)
    with pytest.raises(ValueError, match="grid dimension 1 is 70000"):
        axpy[(1, 70000)](x, y, out, 100, 2.5, BLOCK=64)
    with pytest.raises(ValueError, match=r"y_ptr` of `axpy` is on cuda:1"):
        axpy[(1,)](x, FakeCudaTensor(8192, index=1), out, 100, 2.5, BLOCK=64)
    assert [path for path, *_ in fake_driver] == ["slow", "fast"]


def test_packed_parameters_are_where_the_pointers_say():
    c = ctypes
    types = {"i1": c.c_int8, "*fp16": c.c_uint64, "i16": c.c_int16, "fp64": c.c_double}
    types |= {"i32": c.c_int32, "u8": c.c_uint8, "fp32": c.c_float, "u64": c.c_uint64}
    kinds = tuple(types)
    values = (True, 2**40 + 16, -3, 2.5, -7, 200, 0.75, 2**64 - 1)
    params = cuda_launcher.PackedParams(cuda_launcher.PackedParams.layout(kinds))
    params.pack(params.buffer, 0, *values)
    pointers = (c.c_void_p * len(kinds)).from_address(params.address)
    assert tuple(types[k].from_address(p).value for k, p in zip(kinds, pointers)) == values
    assert all(p % c.sizeof(types[k]) == 0 for k, p in zip(kinds, pointers))


def test_cuda_hot_path_leaves_an_integer_that_does_not_fit_to_the_slow_path(
    fake_driver, monkeypatch
):
    paths = []
    monkeypatch.setattr(cuda_driver, "launch", lambda *args: paths.append("slow"))
    monkeypatch.setattr(
        cuda_driver, "fast_launch", lambda *args: lambda *args: paths.append("fast")
    )

    @naiad.jit
    def takes_a_byte(x_ptr, n: tl.int8):
        tl.store(x_ptr, n)

    kinds = ("*fp32", "i8")
    kernel = cuda_driver.CubinKernel(b"", "takes_a_byte", kinds)
    compiled = cuda_launcher._Compiled(kernel, None, (0,), {})
    launcher = cuda_launcher.CudaLauncher(takes_a_byte)
    launcher._compile = lambda *args: compiled
    takes_a_byte._launchers["cuda"] = launcher
    x = FakeCudaTensor(4096)
    for n in (5, 7, 300):  # 300 wraps around in the slow path's ctypes slot, as before
        takes_a_byte[(1,)](x, n)
    assert paths == ["slow", "fast", "slow"]


class FakeCudaDriver:
    """cuda.bindings.driver as driver.fast_launch uses it: contexts are ints (1000 + device)."""

    class CUresult:
        CUDA_SUCCESS = 0

    def __init__(self):
        self.current = 0
        self.calls = []

    def cuDeviceGetCount(self):
        return 0, 2

    def cuDeviceGet(self, index):
        return 0, index

    def cuDevicePrimaryCtxRetain(self, device):
        return 0, 1000 + device

    def cuCtxGetCurrent(self):
        return 0, self.current

    def cuCtxSetCurrent(self, context):
        self.current = int(context)
        self.calls.append(("set", self.current))
        return (0,)

    def cuLaunchKernel(self, function, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        self.calls.append(("launch", self.current, (gx, gy, gz), bx, shared, stream, params))
        return (0,)


@pytest.mark.parametrize("current", [1001, 1000, 0])
def test_fast_launch_runs_in_the_devices_context_and_gives_the_callers_back(monkeypatch, current):
    fake = FakeCudaDriver()
    monkeypatch.setattr(cuda_driver, "_cuda", lambda: fake)
    monkeypatch.setattr(cuda_driver, "_contexts", {})
    launch = cuda_driver.fast_launch(cuda_driver.Function("f", 1, 0, 0, 0, 0), 128, 64)
    fake.current = current  # device 1's context, device 0's, none
    launch(3, 2, 1, 77, 4096)
    launched = ("launch", 1001, (3, 2, 1), 128, 64, 77, 4096)
    expected = {
        1001: [launched],
        1000: [("set", 1001), launched, ("set", 1000)],
        0: [("set", 1001), launched],
    }
    assert fake.calls == expected[current]


def test_cuda_launches_are_checked_as_on_every_back_end(fake_driver):
    """A grid beyond CUDA's limits and a string argument are refused before the CUDA launcher
    sees them, with the errors of the interpreter and the CPU (tests/runtime/
    test_launch_checks.py), whether the hot path was prepared or not: nothing is launched."""
    x, y, out = FakeCudaTensor(4096), FakeCudaTensor(8192), FakeCudaTensor(12288)
    axpy[(3,)](x, y, out, 100, 2.5, BLOCK=64)  # prepares the hot path
    with pytest.raises(ValueError, match=r"grid dimension 1 is 65536 \(y\): at most 65535"):
        axpy[(1, 65536)](x, y, out, 100, 2.5, BLOCK=64)
    with pytest.raises(ValueError, match=r"grid dimension 0 is 2147483648 \(x\): at most"):
        axpy[(2**31,)](x, y, out, 100, 2.5, BLOCK=64)
    with pytest.raises(TypeError, match=r"axpy: argument `alpha`: expected .*, got str"):
        axpy[(1,)](x, y, out, 100, "2.5", BLOCK=64)
    with pytest.raises(TypeError, match=r"axpy: argument `x_ptr`: expected .*, got str"):
        axpy[(1,)]("*fp32", y, out, 100, 2.5, BLOCK=64)
    assert [entry[0] for entry in fake_driver] == ["slow"]


def test_a_bound_launch_packs_its_fixed_parameters_once(bound_driver, monkeypatch):
    """A bound launch of a prepared CUDA launch (cuda_bound_params.py): the fixed parameters
    (n, alpha) are packed once into a block of their own, each call packs its tensors; the
    driver reads every value where the `void**` array points, as on the prepared launch."""
    rng = random.Random(7)
    n, alpha = rng.randint(2, 999), rng.uniform(-2, 2)
    tensors = [[FakeCudaTensor(4096 * rng.randint(1, 99)) for _ in "xyo"] for _ in range(4)]
    launch = axpy.bind_launch(("x_ptr", "y_ptr", "out_ptr"), (3,), *tensors[0], n, alpha,
                              BLOCK=64)  # fmt: skip
    blocks = []
    record = cuda_launcher.bind_parameters

    def spy(*args):
        blocks.append(record(*args))
        return blocks[-1]

    monkeypatch.setattr(cuda_launcher, "bind_parameters", spy)
    for x, y, out in tensors:
        launch(x, y, out)
    expected = [(t.address for t in group) for group in tensors]
    assert [entry[1:] for entry in bound_driver] == [
        ((3, 1, 1), 100, (*addresses, n, pytest.approx(alpha))) for addresses in expected
    ]
    assert [path for path, *_ in bound_driver] == ["slow", "fast", "fast", "fast"]
    assert len(blocks) == 1  # the fixed block, made once


def test_a_bound_launch_packs_each_threads_tensors_in_its_own_block(bound_driver, addresses):
    """The fixed block is shared; each thread's varying values go into a block of its own,
    which its `void**` array points to (another thread's launch must not overwrite them)."""
    rng = random.Random(11)
    n, alpha = rng.randint(2, 999), rng.uniform(-2, 2)
    groups = [[FakeCudaTensor(4096 * rng.randint(1, 99)) for _ in "xyo"] for _ in range(4)]
    launch = axpy.bind_launch(("x_ptr", "y_ptr", "out_ptr"), (2,), *groups[0], n, alpha,
                              BLOCK=64)  # fmt: skip
    launch(*groups[0])  # the normal path: prepares the launch
    launch(*groups[1])
    worker = threading.Thread(target=lambda: launch(*groups[2]))
    worker.start()
    worker.join()
    launch(*groups[3])
    assert [entry[3] for entry in bound_driver] == [
        (*(t.address for t in group), n, pytest.approx(alpha)) for group in groups
    ]
    assert addresses[0] == addresses[2] != addresses[1]  # the worker's array is its own


@pytest.fixture
def native_driver(fake_driver, monkeypatch):
    """The native launch (cuda_native_launch.py) over ctypes callbacks that stand for the
    driver's cuCtxGetCurrent and cuLaunchKernel and record each launch with the values read
    where the `void**` array points: `(current, result, native)`, the context the first
    reports (a list of one), the CUresult the second returns (the same) and the records."""
    current, result, native = [0x1000], [0], []
    kinds = {0: ctypes.c_uint64, 1: ctypes.c_uint64, 2: ctypes.c_uint64, 3: ctypes.c_int32}

    def get_current(slot):
        ctypes.c_void_p.from_address(slot).value = current[0]
        return 0

    def launch_kernel(function, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        pointers = (ctypes.c_void_p * 5).from_address(params)
        values = [
            kinds.get(i, ctypes.c_float).from_address(p).value for i, p in enumerate(pointers)
        ]
        native.append((function, (gx, gy, gz), (bx, by, bz), shared, stream, extra, tuple(values)))
        return result[0]

    vp, u32, i32 = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int32
    callbacks = (
        ctypes.CFUNCTYPE(i32, vp)(get_current),
        ctypes.CFUNCTYPE(i32, vp, *[u32] * 7, vp, vp, vp)(launch_kernel),
    )
    addresses = tuple(ctypes.cast(c, vp).value for c in callbacks)
    monkeypatch.setattr(cuda_native_launch, "native_launch", _real_native_launch)
    monkeypatch.setattr(cuda_driver, "entry_points", lambda: addresses)
    monkeypatch.setattr(cuda_driver, "launch_handles", lambda function: (77, 0x1000))
    monkeypatch.setattr(cuda_driver, "raise_launch_error", lambda code: _raise(code))
    yield current, result, native
    del callbacks  # alive until the last launch


def test_a_bound_launch_through_the_native_launch(bound_driver, native_driver):
    """A bound launch's driver calls are the native launch's; where another context is current
    the launch goes through the driver module's (which switches); a failing launch raises its
    CudaError."""
    rng = random.Random(13)
    n, alpha = rng.randint(2, 999), rng.uniform(-2, 2)
    groups = [[FakeCudaTensor(4096 * rng.randint(1, 99)) for _ in "xyo"] for _ in range(4)]
    current, result, native = native_driver
    launch = axpy.bind_launch(("x_ptr", "y_ptr", "out_ptr"), (3,), *groups[0], n, alpha,
                              BLOCK=64)  # fmt: skip
    launch(*groups[0])  # the normal path: prepares the launch
    launch(*groups[1])
    current[0] = 0x2000  # another device's context: the driver module's launch
    launch(*groups[2])
    current[0], result[0] = 0x1000, 700
    with pytest.raises(cuda_driver.CudaError, match="700"):
        launch(*groups[3])
    expected = [(*(t.address for t in g), n, pytest.approx(alpha)) for g in groups]
    assert [entry[0] for entry in bound_driver] == ["slow", "fast"]
    assert [entry[3] for entry in bound_driver] == [expected[0], expected[2]]
    threads = 32 * 4  # axpy's default num_warps
    assert native == [
        (77, (3, 1, 1), (threads, 1, 1), 0, 100, None, expected[1]),
        (77, (3, 1, 1), (threads, 1, 1), 0, 100, None, expected[3]),
    ]


def test_a_prepared_launch_through_the_native_launch(fake_driver, native_driver):
    """A launch that is not bound (`kernel[grid](...)`) makes its driver calls natively too,
    its grid, stream and every value packed per call; another context current: the driver
    module's launch, with the same values; a failing launch raises its CudaError."""
    rng = random.Random(17)
    current, result, native = native_driver
    calls = []
    for _ in range(5):
        x, y, out = (FakeCudaTensor(4096 * rng.randint(1, 99)) for _ in "xyo")
        grid = (rng.randint(1, 9), rng.randint(1, 9))
        n, alpha = rng.randint(2, 999), rng.uniform(-2, 2)
        calls.append((grid, (x, y, out, n, alpha)))
    for grid, args in calls[:3]:
        axpy[grid](*args, BLOCK=64)
    current[0] = 0x2000
    axpy[calls[3][0]](*calls[3][1], BLOCK=64)
    current[0], result[0] = 0x1000, 700
    with pytest.raises(cuda_driver.CudaError, match="700"):
        axpy[calls[4][0]](*calls[4][1], BLOCK=64)
    expected = [
        ((*grid, 1), (*(t.address for t in args[:3]), args[3], pytest.approx(args[4])))
        for grid, args in calls
    ]
    assert [(path, grid, values) for path, grid, _, values in fake_driver] == [
        ("slow", *expected[0]),
        ("fast", *expected[3]),
    ]
    threads = 32 * 4
    assert native == [
        (77, grid, (threads, 1, 1), 0, 100, None, values)
        for grid, values in (expected[1], expected[2], expected[4])
    ]


_real_native_launch = cuda_native_launch.native_launch


def _raise(code: int):
    raise cuda_driver.CudaError(f"cuLaunchKernel failed: {code}")


def test_a_native_block_starts_the_values_64_byte_aligned(monkeypatch):
    """A prepared launch's native block (cuda_native_launch.unbound_block) holds the header the
    native function reads, and each parameter's value where the `void**` array points: a
    tensor map's (its fields) 64-byte aligned; one pack writes the grid, the stream and the
    values."""
    monkeypatch.setattr(cuda_driver, "entry_points", lambda: (0x11, 0x22))
    monkeypatch.setattr(cuda_driver, "launch_handles", lambda function: (0x33, 0x44))
    layout = cuda_launcher.PackedParams.layout(("i32", "tensormap", "*fp32", "fp32"))
    rng = random.Random(19)
    for _ in range(8):  # buffers at several addresses
        pack, buffer, offset, base, array = cuda_native_launch.unbound_block(None, 96, 512, layout)
        tensor_map = rng.randbytes(128)
        values = (rng.randint(-99, 99), tensor_map, 4096 * rng.randint(1, 99), 0.5)
        pack(buffer, offset, 3, 2, 1, 7, *values)
        pointers = list(array)
        assert pointers[1] % 64 == 0
        header = cuda_native_launch.HEADER.unpack_from(ctypes.string_at(base, 48))
        assert header == (0x11, 0x22, 0x44, 0x33, 96, 512, ctypes.addressof(array))
        grid_and_stream = ctypes.string_at(base + cuda_native_launch.GRID, 24)
        assert struct.unpack("<IIIxxxxQ", grid_and_stream) == (3, 2, 1, 7)
        assert ctypes.c_int32.from_address(pointers[0]).value == values[0]
        assert ctypes.string_at(pointers[1], 128) == tensor_map
        assert ctypes.c_uint64.from_address(pointers[2]).value == values[2]
        assert ctypes.c_float.from_address(pointers[3]).value == 0.5
