"""The native tensor-map encode (runtime/cuda_native_encode.py), without a GPU: a ctypes
callback stands for the driver's cuTensorMapEncodeTiled, records the arguments the native
function passes (the arrays read where they point) and writes a map; the encode must hand it
every field of the kind and the call, and return the 128 bytes written. The same encode against
cuda-bindings' on a GPU is tests/gpu/test_native_encode_gpu.py's."""

import ctypes
import random

import pytest

from naiad.backends.nvidia import driver as cuda_driver
from naiad.runtime import cuda_native_encode, tensor_maps


@pytest.fixture
def fake_encode(monkeypatch):
    """(calls, result): the callback's records and the CUresult it returns (a list of one)."""
    calls, result = [], [0]

    def encode(out, data_type, rank, address, sizes, strides, box, element_strides, interleave,
               swizzle, promotion, fill):  # fmt: skip
        def read(pointer, kind, count):
            return list((kind * count).from_address(pointer)) if count else []

        calls.append({
            "aligned": out % 64 == 0, "type": data_type, "rank": rank, "address": address,
            "sizes": read(sizes, ctypes.c_uint64, rank),
            "strides": read(strides, ctypes.c_uint64, rank - 1),
            "box": read(box, ctypes.c_uint32, rank),
            "element_strides": read(element_strides, ctypes.c_uint32, rank),
            "rest": (interleave, swizzle, promotion, fill),
        })  # fmt: skip
        ctypes.memmove(out, bytes((address + i) % 256 for i in range(128)), 128)
        return result[0]

    u32, u64, vp, i32 = ctypes.c_uint32, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_int32
    callback = ctypes.CFUNCTYPE(i32, vp, i32, u32, u64, vp, vp, vp, vp, i32, i32, i32, i32)(encode)
    address = ctypes.cast(callback, vp).value
    monkeypatch.setattr(cuda_driver, "encode_entry_point", lambda: address)
    yield calls, result
    del callback  # alive until the last encode


def _expected_map(address: int) -> bytes:
    return bytes((address + i) % 256 for i in range(128))


@pytest.mark.parametrize("rank", [1, 2, 3, 5])
def test_native_encode_passes_every_field(fake_encode, rank):
    calls, _ = fake_encode
    rng = random.Random(rank)
    box = tuple(rng.choice([1, 8, 16, 64]) for _ in range(rank))
    encode = cuda_native_encode.encoder(9, box, 3, 2, 1)
    for _ in range(3):
        address = 16 * rng.randrange(1, 1 << 40)
        sizes = [rng.randint(1, 5000) for _ in range(rank)]
        strides = [2 * rng.randint(1, 1 << 20) * 16 for _ in range(rank - 1)]
        assert encode(address, sizes, strides) == _expected_map(address)
        assert calls.pop() == {
            "aligned": True, "type": 9, "rank": rank, "address": address, "sizes": sizes,
            "strides": strides, "box": list(box), "element_strides": [1] * rank,
            "rest": (0, 3, 2, 1),
        }  # fmt: skip


def test_a_failed_native_encode_gives_none(fake_encode):
    _, result = fake_encode
    encode = cuda_native_encode.encoder(7, (32, 16), 2, 2, 0)
    result[0] = 1  # CUDA_ERROR_INVALID_VALUE
    assert encode(4096, [100, 70], [400]) is None
    result[0] = 0
    assert encode(4096, [100, 70], [400]) == _expected_map(4096)


def test_tensor_maps_encode_natively(fake_encode):
    """TensorMaps hands the native encode its sizes and byte strides innermost first, and the
    kind's box, swizzle and fill."""
    calls, _ = fake_encode
    maps = tensor_maps.TensorMaps("a_desc", "bf16", [64, 128], "nan")
    found = maps.encode((1 << 20, 300, 1000, 1024, 1))
    assert found == _expected_map(1 << 20)
    (call,) = calls
    assert call["sizes"] == [1000, 300] and call["strides"] == [2048]
    assert call["type"] == 9 and call["box"] == list(maps.box)
    assert call["rest"] == (0, maps.swizzle, 2, 1)


def test_without_the_entry_point_there_is_no_native_encoder(monkeypatch):
    monkeypatch.setattr(cuda_driver, "encode_entry_point", lambda: None)
    assert cuda_native_encode.encoder(7, (32, 16), 2, 2, 0) is None
