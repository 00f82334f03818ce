"""Pointers made from integers and integers made from pointers, as Triton makes them:
`int64.to(tl.pointer_type(T))` / `tl.cast(..., bitcast=True)` (`tt.int_to_ptr`) and
`ptr.to(tl.int64)` (`tt.ptr_to_int`); pointers loaded from a table of addresses, carried through
nested loops, a while loop and an if (a grouped GEMM over a table of `data_ptr()`s). The arrays
such pointers reach are not arguments of the kernel: the interpreter finds them alive in the
process, compiled code reads them through memory. Addresses are host addresses, so none of this
runs where the arrays travel to a GPU for the launch (the `cuda` back end of these tests)."""

import numpy as np
import pytest
from fixture_kernels.pointers import (
    grouped_matmul,
    lanes_of_many_arrays,
    narrow,
    round_trip,
    through,
    walk,
)

import naiad
import naiad.language as tl


@pytest.fixture(autouse=True)
def _host_addresses_only(backend):
    if backend == "cuda":
        pytest.skip("the tables hold host addresses; the arrays travel to the GPU")


def addresses(*arrays) -> np.ndarray:
    return np.array([a.ctypes.data for a in arrays], np.int64)


def test_a_grouped_matmul_reads_its_operands_through_a_table_of_addresses(gen):
    shapes = [(32, 32, 32), (16, 48, 64), (48, 16, 16)]  # (M, N, K), multiples of the tiles
    a = [gen.standard_normal((m, k)).astype(np.float16) for m, n, k in shapes]
    b = [gen.standard_normal((k, n)).astype(np.float16) for m, n, k in shapes]
    c = [np.full((m, n), np.nan, np.float32) for m, n, k in shapes]
    sizes = np.array([v for shape in shapes for v in shape], np.int32)
    lds = np.array([v for x, y, z in zip(a, b, c) for v in (x.shape[1], y.shape[1], z.shape[1])])
    grouped_matmul[(3,)](
        addresses(*a), addresses(*b), addresses(*c), sizes, lds.astype(np.int32), len(shapes),
        NUM_SM=3, BM=16, BN=16, BK=16,
    )  # fmt: skip
    for x, y, z in zip(a, b, c):
        want = x.astype(np.float32) @ y.astype(np.float32)
        np.testing.assert_allclose(z, want, rtol=1e-3, atol=1e-3)


def test_pointers_become_addresses_and_addresses_pointers(gen):
    x = gen.standard_normal(64).astype(np.float32)
    ints = np.zeros(64, np.int64)
    out = np.full(64, np.nan, np.float32)
    round_trip[(1,)](x, x.ctypes.data, ints, out, N=64)
    np.testing.assert_array_equal(ints, x.ctypes.data + 4 * np.arange(64))
    np.testing.assert_array_equal(out, 2 * x)


def test_a_block_of_addresses_reaches_several_arrays(gen):
    arrays = [gen.standard_normal(32).astype(np.float32) for _ in range(4)]
    before = [x.copy() for x in arrays]
    out = np.full(32, np.nan, np.float32)
    lanes_of_many_arrays[(1,)](addresses(*arrays), out, N=32, ROWS=4)
    kept = np.arange(32) < 29
    want = np.where(kept, np.sum(before, axis=0, dtype=np.float32), 0)
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)
    for x, old in zip(arrays, before):
        np.testing.assert_array_equal(x, np.where(kept, old * 2, 0))


@pytest.mark.parametrize("use_table", [True, False])
def test_a_pointer_from_an_integer_is_carried_through_nested_loops_and_an_if(gen, use_table):
    x = gen.standard_normal(6 * 16).astype(np.float32)
    out = np.full(16, np.nan, np.float32)
    walk[(1,)](addresses(x), x, out, 3, use_table, N=16)
    want = x.reshape(6, 16).sum(axis=0, dtype=np.float32)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


@pytest.mark.interpreter_only("compiled code is not given the arrays it does not check")
def test_an_address_inside_no_array_is_an_error_in_the_interpreter():
    out = np.zeros(16, np.float32)
    with pytest.raises(IndexError, match="inside no argument of the kernel and no live host"):
        through[(1,)](np.array([64], np.int64), out, N=16)


@pytest.mark.interpreter_only("the check is the interpreter's (compiled code reads on)")
def test_an_access_past_a_live_array_names_that_array(gen):
    x = gen.standard_normal(8).astype(np.float32)
    with pytest.raises(IndexError, match=r"through argument `<live array of 8 fp32 at 0x"):
        through[(1,)](addresses(x), np.zeros(16, np.float32), N=16)


def test_a_pointer_converts_to_64_bits_only():
    with pytest.raises(naiad.CompilationError, match="pointers are 64-bit"):
        narrow[(1,)](np.zeros(1, np.float32), np.zeros(1, np.int32))


@naiad.jit
def choose_addresses(c_ptr, a_ptr, b_ptr, chosen_ptr, back_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs).to(tl.pointer_type(tl.int32))
    b = tl.load(b_ptr + offs).to(tl.pointer_type(tl.int32))
    tl.store(chosen_ptr + offs, tl.where(tl.load(c_ptr + offs), a, b))
    tl.store(back_ptr + offs, a.to(tl.int64))


def test_integers_through_a_pointer_type_keep_every_bit(gen):
    """Never dereferenced, any 64-bit integer, unaligned too, survives the pointer type, also
    chosen by a `where` (as Triton's test_where stores pointers)."""
    condition = gen.integers(0, 2, 64).astype(bool)
    a, b = (gen.integers(-(2**63), 2**63 - 1, 64, dtype=np.int64) for _ in range(2))
    chosen, back = np.zeros(64, np.int64), np.zeros(64, np.int64)
    choose_addresses[(1,)](condition, a, b, chosen, back, N=64)
    np.testing.assert_array_equal(chosen, np.where(condition, a, b))
    np.testing.assert_array_equal(back, a)


@naiad.jit
def either_argument(choice_ptr, x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    inside = offs < n
    whole = tl.where(tl.load(choice_ptr) != 0, x_ptr, y_ptr)  # one choice for the block
    lanes = tl.where(tl.load(choice_ptr + 1 + offs, mask=inside, other=0) != 0, x_ptr, y_ptr)
    tl.store(out_ptr + offs, tl.load(whole + offs, mask=inside), mask=inside)
    tl.store(out_ptr + n + offs, tl.load(lanes + offs, mask=inside), mask=inside)


@pytest.mark.parametrize("first", [0, 1])
def test_a_where_between_two_arguments_reads_the_chosen_one(gen, first):
    """Compiled for the CPU, the pointer chosen between two arguments is an address (as one
    made from an integer)."""
    x, y = (gen.standard_normal(40).astype(np.float32) for _ in range(2))
    choice = np.concatenate([[first], gen.integers(0, 2, 40)]).astype(np.int32)
    out = np.full(80, np.nan, np.float32)
    either_argument[(1,)](choice, x, y, out, 40, BLOCK=64)
    np.testing.assert_array_equal(out[:40], x if first else y)
    np.testing.assert_array_equal(out[40:], np.where(choice[1:] != 0, x, y))


@naiad.jit
def pick_addresses(choice_ptr, a_ptr, b_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs).to(tl.pointer_type(tl.int32))
    b = tl.load(b_ptr + offs).to(tl.pointer_type(tl.int32))
    tl.store(out_ptr + offs, tl.where(tl.load(choice_ptr + offs) != 0, a, b).to(tl.int64))


@pytest.mark.interpreter_only("the live arrays are the interpreter's")
def test_integers_made_pointers_and_never_read_through_look_for_no_live_array(gen, monkeypatch):
    """Integers that are no address, made pointers, chosen between and stored as integers (as
    Triton's test_where does): nothing reads through them, so the interpreter never walks the
    process's objects for the arrays they might reach."""
    from naiad.runtime.interpreter import memory

    searches = []
    monkeypatch.setattr(memory, "live_host_arrays", lambda: searches.append(1) or [])
    a, b = (gen.integers(1, 1 << 40, 32) * 4 for _ in range(2))
    choice = gen.integers(0, 2, 32).astype(np.int32)
    out = np.zeros(32, np.int64)
    pick_addresses[(1,)](choice, a, b, out, BLOCK=32)
    np.testing.assert_array_equal(out, np.where(choice != 0, a, b))
    assert searches == []
