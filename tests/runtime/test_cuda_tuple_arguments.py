"""Tuple arguments on the CUDA launcher, without a GPU: the kernel is compiled for real (to a
cubin, where a linker is present) and the stand-in driver of test_cuda_descriptors.py reads the
parameters back as cuLaunchKernel would. A tuple arrives as its leaves, in order, constants
(None, `tl.constexpr`, integers equal to 1) left out, on the slow path and the hot path alike;
a descriptor among them as its parts after its tensor map (the slow path). The values on a GPU:
tests/language/test_tuple_arguments.py with `-m gpu`."""

import random
from typing import NamedTuple

import pytest
import test_cuda_descriptors as stand_in
from test_cuda_descriptors import DESCRIPTOR_KINDS, FakeTensor, _descriptor, needs_linker

import naiad
import naiad.language as tl
from naiad.runtime import cuda_launcher


class Scaled(NamedTuple):
    ptr: object
    scale: float


@naiad.jit
def weighted(out_ptr, inputs, counts, extra, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < counts[0]
    acc = tl.load(inputs[0].ptr + offs, mask=mask) * inputs[0].scale
    acc += tl.load(inputs[1].ptr + offs, mask=mask) * inputs[1].scale
    tl.store(out_ptr + offs, acc * counts[1] + extra[1], mask=mask)


@naiad.jit
def copy_pair(descs, factor, BM: tl.constexpr, BN: tl.constexpr):
    src, dst = descs
    dst.store([0, 0], src.load([0, 0]) * factor)


# The stand-in driver's fixtures, found by pytest under these names: each records the launches
# as (path, grid, kinds, parameters); on an sm_90a device, with tensor maps encoded.
fake_driver = stand_in.fake_driver
fake_hopper = stand_in.fake_hopper


@pytest.fixture(autouse=True)
def forget_kernels():
    for kernel in (weighted, copy_pair):
        kernel.forget_compiled()
    yield
    for kernel in (weighted, copy_pair):
        kernel.forget_compiled()


@needs_linker
def test_tuple_leaves_arrive_in_order_without_the_constants(fake_driver):
    rng = random.Random(16)
    expected = []
    for m in (7, 1, 5):
        out, x, y = (rng.randrange(1, 99) * 4096 for _ in range(3))
        a, b = rng.uniform(-2, 2), rng.uniform(-2, 2)
        n, bias = 2 * rng.randint(1, 100) + 1, rng.uniform(-1, 1)  # n % 16: one key
        inputs = (Scaled(FakeTensor(x), a), Scaled(FakeTensor(y), b))
        weighted[(1,)](FakeTensor(out), inputs, (n, m), (None, bias, tl.constexpr(2)), BLOCK=64)
        m_kinds, m_values = ((), ()) if m == 1 else (("i32",), (m,))
        kinds = ("*fp32", "*fp32", "fp32", "*fp32", "fp32", "i32", *m_kinds, "fp32")
        values = (out, x, pytest.approx(a), y, pytest.approx(b), n, *m_values)
        expected.append((kinds, (*values, pytest.approx(bias))))
    assert [(kinds, values) for _, _, kinds, values in fake_driver] == expected
    # m = 5 has m = 7's facts: the binder keys tuples, and the prepared launch spreads them
    assert [path for path, *_ in fake_driver] == ["slow", "slow", "fast"]


@needs_linker
def test_a_descriptor_in_a_tuple_arrives_with_its_tensor_map(fake_hopper):
    src, dst = _descriptor(4096, 48, 64), _descriptor(8192, 48, 64)
    for _ in range(2):  # a descriptor in a tuple: the slow path every time
        copy_pair[(1,)]((src, dst), 2.5, BM=16, BN=32)
    assert [path for path, *_ in fake_hopper] == ["slow", "slow"]
    (_, _, kinds, values) = fake_hopper[0]
    assert kinds == ("tensormap", *DESCRIPTOR_KINDS) * 2 + ("fp32",)
    assert values[0].rstrip(b"\0") == b"descs.0 4096 (48, 64, 64, 1) (32, 16) 3 0"
    assert values[1:6] == (4096, 48, 64, 64, 1)
    assert values[6].startswith(b"descs.1 8192 (48, 64, 64, 1)")
    assert values[7:] == (8192, 48, 64, 64, 1, 2.5)


@naiad.jit
def scaled_add(y_ptr, x_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(y_ptr + offs, mask=mask) + alpha * tl.load(x_ptr + offs), mask)


@needs_linker
def test_parameters_keep_their_order_when_the_kernel_comes_from_the_disk_cache(
    fake_driver, monkeypatch
):
    """A compiled kernel read back from the disk cache lists its signature sorted by name
    (alpha, n, x_ptr, y_ptr), as the stand-in compile below does; the launch still passes the
    parameters in the order the kernel declares them."""
    compile_specialization = cuda_launcher.compile_specialization

    def as_read_from_disk(*args):
        compiled = compile_specialization(*args)
        compiled.metadata["signature"] = dict(sorted(compiled.metadata["signature"].items()))
        return compiled

    monkeypatch.setattr(cuda_launcher, "compile_specialization", as_read_from_disk)
    scaled_add[(1,)](FakeTensor(4096 * 3), FakeTensor(4096 * 5), 37, 0.5, BLOCK=64)
    expected = (("*fp32", "*fp32", "i32", "fp32"), (4096 * 3, 4096 * 5, 37, 0.5))
    assert [(kinds, values) for _, _, kinds, values in fake_driver] == [expected]
