"""The native tensor-map encode (runtime/cuda_native_encode.py) on a GPU: for tensor maps of
every element width, rank 2 to 5, every swizzle and both fills, its 128 bytes are those that
cuda-bindings' call of cuTensorMapEncodeTiled makes; and a product by tensor copies whose
operands are new at every call (so each call encodes its maps) matches torch."""

import random

import pytest
import torch

from naiad.runtime import tensor_maps

pytestmark = pytest.mark.gpu

_ELEMENTS = ("fp16", "bf16", "fp32", "fp8e4nv", "i32", "fp64")


def _bindings_encode(maps, address, sizes_and_strides):
    """The map through cuda-bindings alone (the native encoder set aside)."""
    maps.native = False
    try:
        return maps._encode(address, sizes_and_strides)
    finally:
        maps.native = None


def _random_map(rng, element: str):
    """(maps, address, parts) of a random tensor map of `element`: rank 2 to 5, rows of 32 to
    256 bytes (every swizzle), byte strides multiples of 16."""
    nbytes = tensor_maps.TensorMaps("x", element, [8, 64], "zero").nbytes
    rank = rng.randint(2, 5)
    block = [1] * (rank - 2) + [rng.choice([8, 64, 128]), rng.choice([32, 64, 128, 256]) // nbytes]
    padding = "nan" if element in ("fp16", "bf16", "fp32") and rng.random() < 0.5 else "zero"
    shape = [rng.randint(1, 1 << (26 // rank)) for _ in range(rank)]  # strides under 2**40 bytes
    strides, step = [], 1
    for size in reversed(shape):
        strides.insert(0, step)
        row_bytes = -(-size * step * nbytes // 16) * 16 + 16 * rng.randint(0, 3)
        step = row_bytes // nbytes
    address = 256 * rng.randrange(1 << 20, 1 << 36)
    return tensor_maps.TensorMaps("x", element, block, padding), address, (*shape, *strides)


@pytest.mark.parametrize("element", _ELEMENTS)
def test_native_maps_are_the_driver_modules(element):
    torch.cuda.init()  # an encode needs the device's context current, as a launch has it
    torch.empty(1, device="cuda")
    rng = random.Random(element)
    for _ in range(16):
        maps, address, parts = _random_map(rng, element)
        native = maps._encode(address, parts)
        assert maps.native, "no native encoder on a GPU machine"
        assert native == _bindings_encode(maps, address, parts), (element, maps.box, parts)


def test_a_product_with_new_operands_at_each_call():
    """F.linear's product by tensor copies, its activations new at every call: each call
    encodes its a and c maps natively."""
    import naiad.ops as ops

    g = torch.Generator(device="cuda").manual_seed(0)
    weight = torch.randn(1024, 1024, device="cuda", dtype=torch.bfloat16, generator=g)
    for _ in range(4):
        x = torch.randn(4096, 1024, device="cuda", dtype=torch.bfloat16, generator=g)
        ours = ops.mm(x, weight.t())
        expected = (x.double() @ weight.double().t()).float()
        torch.testing.assert_close(ours.float(), expected, rtol=2e-2, atol=2e-1)
