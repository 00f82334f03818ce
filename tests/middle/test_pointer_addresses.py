"""Pointers as addresses (middle/linalg/convert_addresses.py): `tt.ptr_to_int`, `tt.int_to_ptr`
and pointer bitcasts that change the element size.

Kernels that read, write and count through pointers made from integers run compiled for this
CPU and in the interpreter, on the same seeded random inputs, and agree bit for bit; their
Linalg form is upstream MLIR in which only the accesses through addresses are element by
element (the others stay strided views).
"""

import numpy as np
import pytest
from middle.upstream import XDSL_GENERIC_ONLY, XDSL_MISSING, assert_upstream_valid

import naiad
import naiad.language as tl
from naiad.ir.parser import parse_module
from naiad.testing.differential import run_differential

EXECUTORS = ("interpreter", "cpu")


@naiad.jit
def through_addresses(x_ptr, perm_ptr, y_ptr, count_ptr, back_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    perm = tl.load(perm_ptr + offs, mask=inside, other=0)
    addresses = (x_ptr + perm).to(tl.int64)
    x = tl.load(addresses.to(tl.pointer_type(tl.float32)), mask=inside, other=-1.0)
    targets = (y_ptr + offs).to(tl.int64).to(tl.pointer_type(tl.float32))
    tl.store(targets, x * 2.0, mask=inside)
    counters = count_ptr.to(tl.int64).to(tl.pointer_type(tl.int32))
    tl.atomic_add(counters + perm % 4, 1, mask=inside)
    # The address of a pointer made from an address is that address.
    moved = targets.to(tl.int64) - y_ptr.to(tl.int64)
    tl.store(back_ptr + offs, moved, mask=inside)


@pytest.mark.parametrize("n", [5, 100])
def test_loads_stores_and_atomics_through_addresses(n):
    def args(rng):
        return dict(
            x_ptr=rng.standard_normal(n).astype(np.float32),
            perm_ptr=rng.permutation(n).astype(np.int32),
            y_ptr=np.empty(n, np.float32),
            count_ptr=rng.integers(-50, 50, 4).astype(np.int32),
            back_ptr=np.empty(n, np.int64),
            n=n,
            BLOCK=32,
        )

    outputs = {"y_ptr": "store", "back_ptr": "store"}
    got = run_differential(through_addresses, args, (4,), EXECUTORS, outputs, seed=n)
    assert list(got["back_ptr"]) == [4 * i for i in range(n)]


@naiad.jit
def bytes_of_floats(x_ptr, bytes_ptr, shifted_ptr, wide_ptr, N: tl.constexpr):
    k = tl.arange(0, 4 * N)
    raw = x_ptr.to(tl.pointer_type(tl.uint8))  # a narrower pointee: the same address
    tl.store(bytes_ptr + k, tl.load(raw + k))
    j = tl.arange(0, N)
    shifted = (raw + 4).to(tl.pointer_type(tl.float32))  # one float on
    tl.store(shifted_ptr + j, tl.load(shifted + j, mask=j < N - 1, other=0.5))
    pairs = x_ptr.to(tl.pointer_type(tl.int64))  # a wider pointee
    tl.store(wide_ptr + tl.arange(0, N // 2), tl.load(pairs + tl.arange(0, N // 2)))
    tl.store(raw, tl.load(raw + 1), mask=tl.load(x_ptr) > 100.0)  # never: x is small


def test_bitcasts_that_change_the_element_size():
    def args(rng):
        return dict(
            x_ptr=rng.standard_normal(16).astype(np.float32),
            bytes_ptr=np.empty(64, np.uint8),
            shifted_ptr=np.empty(16, np.float32),
            wide_ptr=np.empty(8, np.int64),
            N=16,
        )

    outputs = {"bytes_ptr": "store", "shifted_ptr": "store", "wide_ptr": "store"}
    got = run_differential(bytes_of_floats, args, (1,), EXECUTORS, outputs)
    x = args(np.random.default_rng(0))["x_ptr"]
    assert bytes(got["bytes_ptr"]) == x.tobytes()
    assert list(got["shifted_ptr"][:15]) == list(x[1:]) and got["shifted_ptr"][15] == 0.5
    assert bytes(got["wide_ptr"]) == x.tobytes()


@naiad.jit
def scalar_address(x_ptr, out_ptr):
    p = (x_ptr + 3).to(tl.int64).to(tl.pointer_type(tl.float32))
    tl.store(out_ptr, tl.load(p) + 1.0)
    tl.store(p.to(tl.pointer_type(tl.int32)), 7)


def test_scalar_pointers_from_addresses():
    def args(rng):
        return dict(
            x_ptr=rng.standard_normal(8).astype(np.float32), out_ptr=np.empty(1, np.float32)
        )

    got = run_differential(
        scalar_address, args, (1,), EXECUTORS, {"x_ptr": "store", "out_ptr": "store"}
    )
    assert got["x_ptr"].view(np.int32)[3] == 7


def test_only_the_accesses_through_addresses_are_element_by_element():
    n = 100
    arrays = (np.ones(n, np.float32), np.arange(n, dtype=np.int32), np.empty(n, np.float32))
    counts, back = np.zeros(4, np.int32), np.empty(n, np.int64)
    compiled = through_addresses.warmup(*arrays, counts, back, n, BLOCK=32, grid=(4,), target="cpu")
    module = parse_module(compiled.asm["linalg"])
    ops = [op.name for op in module.walk()]
    assert ops.count("memref.view") == 2  # memory, once per element type (f32, i32)
    assert ops.count("memref.alloca") == 2
    # perm, back: strided views; x, y and the counters: element by element through memory.
    views = [op for op in module.walk() if op.name == "memref.reinterpret_cast"]
    (kernel,) = [op for op in module.regions[0].entry_block if op.regions[0].blocks]
    arguments = kernel.regions[0].entry_block.arguments
    assert {arguments.index(op.operands[0]) for op in views} == {1, 4}
    used = set(ops)
    assert_upstream_valid(
        compiled.asm["linalg"], used & (XDSL_MISSING.keys() | XDSL_GENERIC_ONLY.keys())
    )
