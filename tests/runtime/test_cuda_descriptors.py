"""Host `TensorDescriptor` arguments on the CUDA launcher, without a GPU: the kernel is compiled
for real (TTIR -> ... -> cubin, where a linker is present) and the driver is a stand-in that
records each launch with the parameters read back from the `void**` array as cuLaunchKernel
reads them. A descriptor must arrive as the frontend expands it (base pointer, shape, strides),
on the slow path and the hot path alike, after its tensor map where the kernel reads it by
tensor copies (sm_90; the driver's encoder is a stand-in too); its errors name it. The same
kernels on a GPU are tests/gpu/test_descriptor_gpu.py's."""

import ctypes
import random
from dataclasses import dataclass

import pytest
from fixture_kernels.made_descriptors import scale_made_tiles

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.backends.nvidia import driver as cuda_driver
from naiad.backends.nvidia import link
from naiad.runtime import cuda_launcher, cuda_parameters, tensor_maps
from naiad.runtime.binder import make_binder
from naiad.tools.tensor_descriptor import TensorDescriptor
from naiad.triton.runtime._allocation import NullAllocator

needs_linker = pytest.mark.skipif(link.linker_version() is None, reason="no nvJitLink")


@naiad.jit
def scale_tiles(src, dst, factor, BM: tl.constexpr, BN: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    dst.store([pm * BM, pn * BN], src.load([pm * BM, pn * BN]) * factor)


@dataclass(frozen=True)
class FakeDevice:
    type: str
    index: int | None

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"


class FakeTensor:
    """What the launcher and the binder read of a torch tensor."""

    def __init__(self, address: int, device: str = "cuda:0", dtype: str = "float32"):
        kind, _, index = device.partition(":")
        self.device = FakeDevice(kind, int(index) if index else None)
        self.dtype = dtype
        self.address = address
        self.nbytes = 1 << 20

    def data_ptr(self) -> int:
        return self.address


_CTYPES = {"i32": ctypes.c_int32, "i64": ctypes.c_int64, "fp32": ctypes.c_float}


def _read(kinds, address):
    """The parameters as the driver reads them from a `void**` array."""
    pointers = (ctypes.c_void_p * len(kinds)).from_address(address)
    return tuple(
        ctypes.string_at(p, 128)
        if k == "tensormap"
        else (ctypes.c_uint64 if k.startswith("*") else _CTYPES[k]).from_address(p).value
        for k, p in zip(kinds, pointers)
    )


@pytest.fixture
def fake_driver(monkeypatch):
    """Records each launch as (path, grid, kernel signature, parameters)."""
    launches = []
    monkeypatch.setattr(cuda_launcher, "_arch", lambda device: "cuda:sm_80")
    monkeypatch.setattr(cuda_launcher, "stream_reader", lambda: lambda device: 7)
    monkeypatch.setattr(  # the handle is the kernel itself, so a launch knows its signature
        cuda_driver.CubinKernel,
        "function",
        lambda self, device: cuda_driver.Function(self, device, 0, 0, 0, 0),
    )

    def slow(function, grid, threads, shared, stream, params):
        launches.append(("slow", grid, params.signature, _read(params.signature, params.address)))

    def fast_launch(function, threads, shared):
        kinds = function.handle.signature

        def launch(gx, gy, gz, stream, address):
            launches.append(("fast", (gx, gy, gz), kinds, _read(kinds, address)))

        return launch

    monkeypatch.setattr(cuda_driver, "launch", slow)
    monkeypatch.setattr(cuda_driver, "fast_launch", fast_launch)
    scale_tiles.forget_compiled()
    with knobs.override(NAIAD_BACKEND="auto"):
        yield launches
    scale_tiles.forget_compiled()


def _fake_tensor_map(self, address: int, sizes_and_strides: tuple) -> bytes:
    """A stand-in for the driver's encoding: the fields it is made from, padded to 128 bytes."""
    text = f"{self.name} {address} {sizes_and_strides} {self.box} {self.swizzle} {self.fill}"
    return text.encode().ljust(128, b"\0")


@pytest.fixture
def fake_hopper(fake_driver, monkeypatch):
    """`fake_driver` on an sm_90a device, whose kernels read aligned descriptors by tensor
    copies; tensor maps are encoded by `_fake_tensor_map`."""
    monkeypatch.setattr(cuda_launcher, "_arch", lambda device: "cuda:sm_90a")
    monkeypatch.setattr(tensor_maps.TensorMaps, "_encode", _fake_tensor_map)
    return fake_driver


def _descriptor(address, rows, cols, block=(16, 32), device="cuda:0", dtype="float32"):
    return TensorDescriptor(FakeTensor(address, device, dtype), [rows, cols], [cols, 1], block)


DESCRIPTOR_KINDS = ("*fp32", "i64", "i64", "i64", "i64")


@needs_linker
def test_descriptors_reach_the_kernel_as_the_frontend_expands_them(fake_driver):
    rng = random.Random(3)
    launches = []
    for _ in range(3):
        rows, cols = rng.randint(1, 300), rng.randint(1, 300)
        src, dst = rng.randrange(1, 99) * 4096, rng.randrange(100, 199) * 4096
        factor = rng.uniform(-2, 2)
        scale_tiles[(3, 2)](_descriptor(src, rows, cols), _descriptor(dst, rows, cols), factor,
                            BM=16, BN=32)  # fmt: skip
        part = (rows, cols, cols, 1)
        launches.append(((3, 2, 1), (src, *part, dst, *part, pytest.approx(factor))))
    assert [path for path, *_ in fake_driver] == ["slow", "fast", "fast"]
    assert {kinds for _, _, kinds, _ in fake_driver} == {(*DESCRIPTOR_KINDS * 2, "fp32")}
    assert [(grid, values) for _, grid, _, values in fake_driver] == launches


@needs_linker
def test_a_new_block_shape_or_padding_is_a_new_specialization(fake_driver):
    tiles = _descriptor(4096, 40, 64), _descriptor(8192, 40, 64)
    scale_tiles[(1,)](*tiles, 2.0, BM=16, BN=32)
    scale_tiles[(1,)](*tiles, 2.0, BM=16, BN=32)
    wide = _descriptor(4096, 40, 64, (16, 64)), _descriptor(8192, 40, 64, (16, 64))
    scale_tiles[(1,)](*wide, 2.0, BM=16, BN=64)
    nan = TensorDescriptor(FakeTensor(4096), [40, 64], [64, 1], [16, 32], padding="nan")
    scale_tiles[(1,)](nan, tiles[1], 2.0, BM=16, BN=32)
    assert [path for path, *_ in fake_driver] == ["slow", "fast", "slow", "slow"]
    assert len(scale_tiles._launchers["cuda"].kernels) == 3


@needs_linker
def test_a_descriptor_of_a_cpu_tensor_is_named(fake_driver):
    on_cpu = _descriptor(4096, 40, 64, device="cpu")
    with pytest.raises(ValueError, match=r"tensor of descriptor `src` of `scale_tiles`.* on cpu"):
        scale_tiles[(1,)](on_cpu, _descriptor(8192, 40, 64), 2.0, BM=16, BN=32)
    assert fake_driver == []


@pytest.mark.parametrize(
    "block, match",
    [
        ((16, 2), r"`src`: descriptor blocks need at least 16 bytes .* 2 x 4 bytes"),
        ((16, 24), r"descriptor `src`: block sizes must be powers of 2, got \[16, 24\]"),
    ],
)
def test_a_block_shape_the_rules_refuse_is_a_launch_error(fake_driver, block, match):
    src = _descriptor(4096, 40, 64, block)
    with pytest.raises(ValueError, match=match):
        scale_tiles[(1,)](src, _descriptor(8192, 40, 64, block), 2.0, BM=16, BN=block[1])
    assert fake_driver == []


def test_a_block_shape_not_matching_the_shape_is_named():
    src = _descriptor(4096, 40, 64)
    src.block_shape = [16, 32, 2]  # changed after it was made
    with pytest.raises(ValueError, match=r"`src`: block shape \[16, 32, 2\] does not match"):
        cuda_parameters.descriptor_parts("src", src)


def test_the_binder_keys_a_descriptor_by_what_specializes_it():
    """Shape, strides and address are launch values; dtype, device, block shape, padding,
    the base's alignment and which sizes and strides are divisible by 16 are the key, as they
    are what the kernel specializes on."""
    binder = make_binder(scale_tiles.params)

    def key_and_values(desc):
        key, dims, values = binder(None, (2, 3), desc, desc, 1.5, BM=16, BN=32)
        assert dims == (2, 3, 1)
        return key, values[0]

    base, base_values = key_and_values(_descriptor(4096, 40, 64))
    other, values = key_and_values(_descriptor(8192, 56, 96))  # other sizes, as divisible
    assert other == base
    assert (base_values, values) == ((4096, 40, 64, 64, 1), (8192, 56, 96, 96, 1))
    changed = [
        _descriptor(4100, 40, 64),  # misaligned
        _descriptor(4096, 48, 64),  # a size divisible by 16
        _descriptor(4096, 40, 72),  # a stride not divisible by 16
        _descriptor(4096, 40, 64, (16, 64)),
        _descriptor(4096, 40, 64, dtype="float16"),
        _descriptor(4096, 40, 64, device="cuda:1"),
        TensorDescriptor(FakeTensor(4096), [40, 64], [64, 1], [16, 32], padding="nan"),
    ]
    assert all(key_and_values(desc)[0] != base for desc in changed)


def test_a_descriptors_key_follows_its_geometry_when_it_changes():
    """The key's block and divisibility are kept by geometry (argument_keys._GEOMETRIES): a
    descriptor changed after it was keyed keys by its new sizes, strides and block, and a block
    of constexprs keys as its ints; where the alignment is not specialized, neither the base's
    alignment nor the divisibility is in the key."""
    binder = make_binder(scale_tiles.params)
    rng = random.Random(7)

    def key(desc):
        return binder(None, (1,), desc, desc, 1.5, BM=16, BN=32)[0]

    for _ in range(20):
        rows, cols = rng.randrange(1, 20) * 8, rng.randrange(1, 20) * 8
        desc = _descriptor(4096, rows, cols)
        first = key(desc)
        assert key(_descriptor(8192, rows, cols)) == first
        desc.shape = [rows + 8, cols]  # the first size's divisibility by 16 flips
        desc.strides = [cols + 8, 1]
        assert key(_descriptor(4096, rows + 8, cols)) != first
        fresh_strides = TensorDescriptor(FakeTensor(4096), [rows + 8, cols], [cols + 8, 1],
                                         [16, 32])  # fmt: skip
        assert key(desc) == key(fresh_strides) != first
        desc.block_shape = [tl.constexpr(16), tl.constexpr(64)]
        assert key(desc) == key(TensorDescriptor(FakeTensor(4096), [rows + 8, cols],
                                                 [cols + 8, 1], [16, 64]))  # fmt: skip
    free = make_binder(scale_tiles.params, ("src", "dst"))  # no alignment nor divisibility
    keys = {free(None, (1,), d, d, 1.5, BM=16, BN=32)[0] for d in
            (_descriptor(4096, 48, 64), _descriptor(4100, 40, 72))}  # fmt: skip
    assert len(keys) == 1


def test_the_selector_spreads_descriptors_and_drops_constants():
    select = cuda_parameters.selector([0, 2, 3], 4, {2: None})
    values = ("x", "one", (4096, 40, 64, 64, 1), 2.5)
    assert list(select(values)) == ["x", 4096, 40, 64, 64, 1, 2.5]
    assert cuda_parameters.selector([0, 1], 2, {}) is None


def test_the_selector_puts_each_tensor_map_before_its_descriptors_parts():
    """Descriptors with and without a tensor map among other values, in the kernel's order; a
    map kept by the descriptor's parts (`TensorMaps.by_parts`) is taken as it is."""

    class Maps:
        def __init__(self, name):
            self.name = name
            self.by_parts = {}

        def encode(self, parts):
            return (self.name, *parts)

    rng = random.Random(11)
    parts = [(rng.randrange(1, 99) * 4096, rng.randint(1, 99), 64, 64, 1) for _ in range(3)]
    values = (parts[0], 7, parts[1], 2.5, parts[2], "dropped")
    first, last = Maps("a"), Maps("c")
    last.by_parts[parts[2]] = "kept"
    select = cuda_parameters.selector([0, 1, 2, 3, 4], 6, {0: first, 2: None, 4: last})
    assert list(select(values)) == [
        ("a", *parts[0]),
        *parts[0],
        7,
        *parts[1],
        2.5,
        "kept",
        *parts[2],
    ]


def test_a_tensor_map_is_kept_by_its_descriptors_parts(monkeypatch):
    """`TensorMaps.encode`: a map is encoded once per address, sizes and strides, kept by the
    parts as the hot path gives them (an address) whether they first came with the address or
    the tensor (the slow path's); a full table is emptied, and its maps encoded again."""
    encoded = []

    def fake_encode(self, address, sizes_and_strides):
        encoded.append(address)
        return _fake_tensor_map(self, address, sizes_and_strides)

    monkeypatch.setattr(tensor_maps.TensorMaps, "_encode", fake_encode)
    maps = tensor_maps.TensorMaps("src", "fp32", [16, 32], "zero")
    rng = random.Random(5)
    addresses = [rng.randrange(1, 999) * 4096 for _ in range(3)]
    first = maps.encode((FakeTensor(addresses[0]), 40, 64, 64, 1))
    assert maps.encode((addresses[0], 40, 64, 64, 1)) is first
    assert maps.by_parts == {(addresses[0], 40, 64, 64, 1): first}
    for address in addresses[1:]:
        assert maps.encode((address, 40, 64, 64, 1)).startswith(f"src {address} ".encode())
    assert encoded == addresses
    monkeypatch.setattr(tensor_maps, "_CACHED_MAPS", 3)
    fresh = tensor_maps.TensorMaps("src", "fp32", [16, 32], "zero")
    for address in [*addresses, addresses[0], 4096 * 1000]:
        fresh.encode((address, 40, 64, 64, 1))
    assert list(fresh.by_parts) == [(4096 * 1000, 40, 64, 64, 1)]


@needs_linker
def test_an_aligned_descriptor_on_hopper_arrives_with_its_tensor_map(fake_hopper):
    """Aligned rows: the kernel takes the descriptor's tensor map, then its parts; a map is
    encoded per tensor (address, shape, strides) with the block's box and swizzle (16 x 32
    fp32: rows of 128 bytes), on the slow path and the hot path alike. Rows of 40 elements
    (160 bytes) are not 16-element aligned: that descriptor keeps the pointer ABI."""
    src, dst = _descriptor(4096, 48, 64), _descriptor(8192, 48, 64)
    scale_tiles[(3, 2)](src, dst, 2.0, BM=16, BN=32)
    scale_tiles[(3, 2)](_descriptor(12288, 32, 64), dst, 2.0, BM=16, BN=32)
    kinds = ("tensormap", *DESCRIPTOR_KINDS)
    assert [path for path, *_ in fake_hopper] == ["slow", "fast"]
    assert {k for _, _, k, _ in fake_hopper} == {(*kinds * 2, "fp32")}
    maps = [(values[0], values[6]) for _, _, _, values in fake_hopper]
    assert maps[0][0].rstrip(b"\0") == b"src 4096 (48, 64, 64, 1) (32, 16) 3 0"
    assert maps[1][0].rstrip(b"\0") == b"src 12288 (32, 64, 64, 1) (32, 16) 3 0"
    assert maps[0][1] == maps[1][1] and maps[0][1].startswith(b"dst 8192 (48, 64, 64, 1)")
    assert fake_hopper[1][3][1:6] == (12288, 32, 64, 64, 1)
    fake_hopper.clear()
    scale_tiles[(1,)](_descriptor(4096, 48, 40), _descriptor(8192, 48, 40), 2.0, BM=16, BN=32)
    assert [k for _, _, k, _ in fake_hopper] == [(*DESCRIPTOR_KINDS * 2, "fp32")]


@needs_linker
def test_a_debug_launch_passes_the_extent_of_each_descriptors_tensor(fake_driver):
    src, dst = _descriptor(4096, 40, 64), _descriptor(1 << 24, 40, 64)
    scale_tiles[(1,)](src, dst, 2.0, BM=16, BN=32, debug=True)
    ((path, _, kinds, values),) = fake_driver
    assert path == "slow" and kinds == (*DESCRIPTOR_KINDS * 2, "fp32", "i64", "i64", "i64", "i64")
    # each tensor's storage, as describe() sees a stand-in: [0, its bytes) around its pointer
    assert values[-4:] == (0, 1 << 20, 0, 1 << 20)


@needs_linker
def test_descriptors_made_in_the_kernel_get_the_launchs_global_scratch(fake_hopper):
    """A kernel that makes two tensor maps takes, last, the address of 2 x 128 bytes per program
    from the allocator `naiad.set_allocator` set (called as Triton calls it: size, alignment,
    stream), on the slow path and the hot path; Triton's `NullAllocator` raises its error."""
    calls = []

    def allocator(size, alignment, stream):
        calls.append((size, alignment, stream))
        return 1 << 32

    src, dst = FakeTensor(4096), FakeTensor(8192)
    scale_made_tiles.forget_compiled()
    naiad.set_allocator(allocator)
    try:
        for _ in range(2):
            scale_made_tiles[(3, 2)](src, dst, 48, 64, 2.0, BM=16, BN=32, PADDING="zero")
        naiad.set_allocator(NullAllocator())
        with pytest.raises(RuntimeError, match="no allocator was set"):
            scale_made_tiles[(3, 2)](src, dst, 48, 64, 2.0, BM=16, BN=32, PADDING="zero")
    finally:
        naiad.set_allocator(None)
        scale_made_tiles.forget_compiled()
    assert [path for path, *_ in fake_hopper] == ["slow", "fast"]
    assert {kinds for _, _, kinds, _ in fake_hopper} == {
        ("*fp32", "*fp32", "i32", "i32", "fp32", "*i8")
    }
    assert [values[-1] for *_, values in fake_hopper] == [1 << 32] * 2
    assert calls == [(6 * 256, 128, 7)] * 2


@needs_linker
def test_a_bound_launch_takes_described_descriptors_as_their_tensors(fake_hopper):
    """`bind_launch(described=...)`: each call passes a descriptor's tensor alone and the
    sample's descriptor fixes its geometry. The kernel gets what the launch entry gives it for
    the same descriptors (tensor maps of each call's addresses); a call keys the tensor's
    alignment alone, so a misaligned one takes the normal path once and is kept; anything but
    a torch tensor takes the normal path. Its argument errors are named."""
    rows, cols = 40, 64
    calls = [(4096, 8192), (12288, 16384), (4104, 8192), (4104, 24576), (20480, 28672)]
    for src, dst in calls:
        scale_tiles[(3, 2)](_descriptor(src, rows, cols), _descriptor(dst, rows, cols), 2.0,
                            BM=16, BN=32)  # fmt: skip
    direct = [values for *_, values in fake_hopper]
    fake_hopper.clear()
    sample = _descriptor(4096, rows, cols), _descriptor(8192, rows, cols)
    launch = scale_tiles.bind_launch(("src", "dst"), (3, 2), *sample, 2.0, BM=16, BN=32,
                                     described=("src", "dst"))  # fmt: skip
    launch.__globals__["__Tensor"] = FakeTensor  # what the call checks it is given
    normal, full = [], launch.__globals__["__full"]
    launch.__globals__["__full"] = lambda *values: normal.append(1) or full(*values)
    for src, dst in calls:
        launch(FakeTensor(src), FakeTensor(dst))
    assert [values for *_, values in fake_hopper] == direct
    assert len(normal) == 1  # the first misaligned source (the entry prepared both launches)

    class Subclass(FakeTensor):
        pass

    launch(Subclass(4096), FakeTensor(8192))  # not exactly a tensor: the normal path
    assert len(normal) == 2
    with pytest.raises(TypeError, match="is not a tensor descriptor"):
        scale_tiles.bind_launch(("src", "dst"), (3, 2), FakeTensor(4096), sample[1], 2.0, BM=16,
                                BN=32, described=("src",))  # fmt: skip
    with pytest.raises(TypeError, match="described parameter must be a varying one"):
        scale_tiles.bind_launch(("dst",), (3, 2), *sample, 2.0, BM=16, BN=32, described=("src",))
