"""flip, repeat, one_hot, scatter/scatter_add/index_add, sort/argsort/topk, nonzero and unique of
naiad.ops against torch (exact, but for added floats): several dims, negative and repeated
indices, non-contiguous inputs, ties kept in order, NaN sorted last, empty and 0-dim inputs;
through the switch."""

import importlib

import pytest
import torch
import torch.nn.functional as F
from ops_helpers import FLOATS, INTS, assert_matches, make, reference

import naiad.ops as ops
from naiad.ops.dtypes import Unsupported


def test_flip_and_repeat(gen, backend):
    x = make((3, 4, 5), torch.float32, gen)
    for dims in [(0,), (2, 0), (-1, 1, 0), ()]:
        assert_matches(ops.flip(x, dims), torch.flip(x, dims))
    assert_matches(ops.flip(x.transpose(0, 2), (1,)), torch.flip(x.transpose(0, 2), (1,)))
    assert_matches(ops.repeat(x, (2, 1, 3)), x.repeat(2, 1, 3))
    assert_matches(ops.repeat(x[:, 1], (2, 1, 2)), x[:, 1].repeat(2, 1, 2))
    assert_matches(ops.repeat(x, (1, 0, 1)), x.repeat(1, 0, 1))


def test_one_hot(gen, backend):
    labels = torch.randint(0, 7, (4, 5), generator=gen)
    assert_matches(ops.one_hot(labels), F.one_hot(labels))
    assert_matches(ops.one_hot(labels, 9), F.one_hot(labels, 9))
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        ops.one_hot(labels, 3)
    negative = labels.clone()
    negative[1, 2] = -1
    for classes in (-1, 9):
        with pytest.raises(RuntimeError, match="must be non-negative"):
            F.one_hot(negative, classes)
        with pytest.raises(RuntimeError, match="must be non-negative"):
            ops.one_hot(negative, classes)
    with pytest.raises(RuntimeError, match="smaller than num_classes"):  # no row to write
        ops.one_hot(labels, 0)


@pytest.mark.parametrize("dim", [0, 2, -2])
def test_scatter_family(dim, gen, backend):
    x = make((4, 5, 6), torch.float32, gen)
    src = make((4, 5, 6), torch.float32, gen)
    index = torch.randint(-x.shape[dim], x.shape[dim], (3, 4, 5), generator=gen)
    positive = index % x.shape[dim]
    added = reference(torch.scatter_add, x, dim, positive, src)
    assert_matches(ops.scatter_add(x, dim, index, src), added, 4)
    unique = torch.rand(3, 4, 5, generator=gen).argsort(dim)  # no index repeats along dim
    assert_matches(ops.scatter(x, dim, unique, src), torch.scatter(x, dim, unique, src))
    assert_matches(ops.scatter(x, dim, unique, 2.5), torch.scatter(x, dim, unique, 2.5))
    vector = torch.tensor([1, -1, 1, 0])
    source = make([4 if d == dim % 3 else n for d, n in enumerate(x.shape)], torch.float32, gen)
    expected = reference(torch.index_add, x, dim, vector % x.shape[dim], source, alpha=0.5)
    assert_matches(ops.index_add(x, dim, vector, source, alpha=0.5), expected, 4)
    with pytest.raises(RuntimeError):
        ops.scatter_add(x, dim, index + 10, src)


def test_scatter_add_over_rows_of_several_programs(gen, backend, monkeypatch):
    """Rows of 8 elements, 1024 elements a program: on the CPU each program adds 128 rows, the
    second one 22."""
    scatter_module = importlib.import_module("naiad.ops.indexing.scatter")  # not the function
    monkeypatch.setattr(scatter_module, "_ADDED_PER_PROGRAM", 1024)
    x, src = make((3, 50, 8), torch.float32, gen), make((3, 50, 8), torch.float32, gen)
    index = torch.randint(0, 8, (3, 50, 8), generator=gen)
    expected = reference(torch.scatter_add, x, 2, index, src)
    assert_matches(ops.scatter_add(x, 2, index, src), expected, 4)


def test_scatter_of_two_gigaelement_tensors_takes_64_bit_offsets(gen, backend, monkeypatch):
    """A tensor of 2**31 elements or more makes the scatter's offsets 64-bit (stood in for by
    its span); the values are those of the 32-bit kernel's."""
    scatter_module = importlib.import_module("naiad.ops.indexing.scatter")
    monkeypatch.setattr(scatter_module, "_span", lambda t: 2**31)
    x, src = make((4, 6), torch.float32, gen), make((4, 6), torch.float32, gen)
    unique = torch.rand(4, 6, generator=gen).argsort(1)
    assert_matches(ops.scatter(x, 1, unique - 6, src), torch.scatter(x, 1, unique, src))


@pytest.mark.full
@pytest.mark.parametrize("dtype", FLOATS + (torch.int32, torch.int64))
def test_scatter_add_dtypes(dtype, gen, backend):
    x, src = make((6, 7), dtype, gen), make((6, 7), dtype, gen)
    index = torch.randint(0, 6, (6, 7), generator=gen)
    assert_matches(
        ops.scatter_add(x, 0, index, src), reference(torch.scatter_add, x, 0, index, src), 4
    )
    vector = torch.randint(0, 7, (5,), generator=gen)
    source = make((6, 5), dtype, gen)
    expected = reference(torch.index_add, x, 1, vector, source)
    assert_matches(ops.index_add(x, 1, vector, source), expected, 4)


@pytest.mark.parametrize("descending", [False, True])
def test_sort_and_topk(descending, gen, backend):
    x = make((5, 37), torch.float32, gen)
    x[1, 3] = x[1, 9] = float("nan")
    values, indices = ops.sort(x, 1, descending)
    expected = torch.sort(x, dim=1, descending=descending, stable=True)
    assert_matches(values, expected.values)
    assert_matches(indices, expected.indices)
    assert_matches(ops.argsort(x.t(), 0, descending), expected.indices.t())
    ties = torch.randint(-3, 3, (37, 4), generator=gen, dtype=torch.int32)
    expected = torch.sort(ties, dim=0, descending=descending, stable=True)
    for actual, wanted in zip(ops.sort(ties, 0, descending), expected, strict=True):
        assert_matches(actual, wanted)
    y = make((3, 100), torch.float32, gen)
    y[2, 40] = float("nan")
    for k in (7, 3, 1):  # 3 and 1: the row narrowed to groups of 4 and 1 first on the CPU
        expected = torch.topk(y, k, largest=not descending)
        for actual, wanted in zip(ops.topk(y, k, largest=not descending), expected, strict=True):
            assert_matches(actual, wanted)


def _bits(x):
    return x.view({2: torch.int16, 4: torch.int32}[x.element_size()])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_values_bit_for_bit(dtype, descending, gen, backend):
    """The values, read back from the sorted keys, are torch's to the bit: NaNs of either sign
    and any payload (read again from the row) sorted last, -0.0 and +0.0 one value kept in
    their order, ties among random values in order; rows that fill the block (no masks) and
    rows that do not."""
    x = make((4, 256), dtype, gen)
    x[:, 100:150] = x[:, :50]  # ties
    zeros = torch.randint(0, 256, (4, 20), generator=gen)
    x.scatter_(1, zeros, torch.tensor(-0.0, dtype=dtype).expand(4, 20))
    x[:, 7] = x[:, 9] = 0.0
    nans = torch.tensor([0x7FC00001, -0x3FFFFF, 0x7F800001], dtype=torch.int32)
    x[:, 40:43] = nans.view(torch.float32).to(dtype)
    x[:, 200] = nans[1:2].view(torch.float32).to(dtype)
    for rows in (x, x[:, :250]):
        values, indices = ops.sort(rows, 1, descending)
        expected = torch.sort(rows, dim=1, descending=descending, stable=True)
        assert torch.equal(indices, expected.indices)
        assert torch.equal(_bits(values), _bits(expected.values))
    y = make((3, 64), dtype, gen)  # a full row, k a power of 2; torch orders ties its own way
    values, indices = ops.topk(y, 8, 1, largest=descending)
    expected = torch.topk(y, 8, 1, largest=descending)
    assert torch.equal(_bits(values), _bits(expected.values))
    assert torch.equal(_bits(y.gather(1, indices)), _bits(values))


@pytest.mark.full
@pytest.mark.parametrize("dtype", FLOATS + tuple(t for t in INTS if t != torch.int64))
def test_sort_dtypes(dtype, gen, backend):
    x = make((3, 300), dtype, gen)
    expected = torch.sort(x, dim=1, stable=True)
    for actual, wanted in zip(ops.sort(x, 1), expected, strict=True):
        assert_matches(actual, wanted)


def test_sort_int64_by_range(gen, backend):
    """int64 values within int16 sort 32-bit keys, within int32 64-bit ones: both torch's, ties
    in order; beyond int32 the op hands the call to torch (Unsupported)."""
    for low, high in ((-5, 9), (-(2**15), 2**15), (-(2**31), 2**31)):
        x = torch.randint(low, high, (3, 70), generator=gen, dtype=torch.int64)
        for descending in (False, True):
            expected = torch.sort(x, dim=1, descending=descending, stable=True)
            for actual, wanted in zip(ops.sort(x, 1, descending), expected, strict=True):
                assert_matches(actual, wanted)
    with pytest.raises(Unsupported):
        ops.sort(torch.tensor([2**40, 1]))


def test_nonzero_and_unique(gen, backend):
    x = torch.randint(-1, 2, (4, 5, 3), generator=gen).float()
    for operand in (x, x.transpose(0, 2), torch.zeros(2, 3), torch.tensor(2.0)):
        assert_matches(ops.nonzero(operand), torch.nonzero(operand))
    labels = torch.randint(-3, 9, (5, 8), generator=gen)
    expected = torch.unique(labels, return_inverse=True, return_counts=True)
    actual = ops.unique(labels, return_inverse=True, return_counts=True)
    for a, e in zip(actual, expected, strict=True):
        assert_matches(a, e)
    rounded = make((40,), torch.float32, gen).round()
    assert_matches(ops.unique(rounded), torch.unique(rounded))
    assert_matches(ops.unique(torch.empty(0)), torch.unique(torch.empty(0)))


def test_movement_through_the_switch(gen, interpreted):
    x = make((4, 6), torch.float32, gen).requires_grad_()
    index = torch.randint(0, 4, (4, 6), generator=gen)

    def step():
        y = torch.flip(x, (1,)).repeat(2, 1).scatter_add(0, index.repeat(2, 1), x.repeat(2, 1))
        values, _ = torch.sort(y, 1)
        top, _ = torch.topk(y, 3)
        loss = values.sum() + (top * top).sum() + y.index_add(0, torch.tensor([1, 1]), y[:2]).sum()
        return [values, top, *torch.autograd.grad(loss, x)]

    expected = step()
    with ops.use(include=["flip", "repeat", "scatter_add", "sort", "topk", "index_add"]):
        actual = step()
    for a, e in zip(actual, expected, strict=True):
        assert_matches(a, e, 4)
    labels = torch.randint(0, 5, (30,), generator=gen)
    expected = [torch.nonzero(labels), *torch.unique(labels, return_counts=True)]
    with ops.use(include=["nonzero", "unique2"]):
        actual = [torch.nonzero(labels), *torch.unique(labels, return_counts=True)]
    for a, e in zip(actual, expected, strict=True):
        assert_matches(a, e)


def test_gpu_sort_code():
    """Compiled for an H200 without one, a sort of 4096 fp32 keys a row: one shuffle per 32-bit
    word of a key and compare-and-swap across lanes (40 such steps, 8 keys a thread of 16
    warps: 640), the row read 16 bytes a thread at a time, 64 registers, no spills."""
    import numpy as np

    sort_module = importlib.import_module("naiad.ops.indexing.sort")
    x, values = np.zeros((2, 4096), np.float32), np.zeros((2, 4096), np.float32)
    options = sort_module._options(torch.device("cuda"), 4096, 4096)
    compiled = sort_module._sort_kernel.warmup(
        x, values, np.zeros((2, 4096), np.int64), 4096, 4096, 4096, 1, True, False, 4096, 4096,
        False, True, 32, grid=(2,), target="cuda:sm_90a", **options,
    )  # fmt: skip
    ptx = compiled.asm["ptx"]
    assert ptx.count("shfl.sync") == 640
    assert ptx.count("ld.global.v4.b32") == 2
    assert compiled.n_spills in (0, None) and (compiled.n_regs or 0) <= 64


def test_scatter_and_index_add_refuse_shapes_torch_refuses(gen, interpreted):
    """An index space larger than src, or than self off the scattered dim, and index_add's
    source unlike self off its dim or of another length than the index, raise as torch does
    (the kernels read src and write self at the index's positions)."""
    x = make((4, 6), torch.float32, gen)
    long_index = torch.zeros(5, 3, dtype=torch.long)
    cases = [
        ("no larger than self", lambda m: m.scatter(x, 1, torch.zeros(4, 3, dtype=torch.long),
                                                    make((4, 2), torch.float32, gen))),
        ("no larger than self", lambda m: m.scatter(x, 1, long_index,
                                                    make((5, 3), torch.float32, gen))),
        ("no larger than self", lambda m: m.scatter_add(x, 1, long_index,
                                                        make((5, 3), torch.float32, gen))),
        ("should be equal to source.size", lambda m: m.index_add(x, 0, torch.tensor([0, 1]),
                                                                 make((3, 6), torch.float32, gen))),
        ("excluding the specified dimension", lambda m: m.index_add(
            x, 0, torch.tensor([0, 1]), make((2, 5), torch.float32, gen))),
    ]  # fmt: skip
    for words, call in cases:
        for module in (torch, ops):
            with pytest.raises(RuntimeError, match=words):
                call(module)


def test_scatter_and_index_add_indices_outside_raise_torchs_errors(gen, interpreted):
    """An index outside the dim: scatter's and scatter_add's RuntimeError naming it,
    index_add's IndexError (torch's along a dim before the last; along the last its CPU
    kernel words it as scatter's)."""
    x, ones = make((2, 4), torch.float32, gen), torch.ones(1, 2)
    cases = [
        (RuntimeError, "index 4 is out of bounds for dimension 1 with size 4",
         lambda m: m.scatter_add(x, 1, torch.tensor([[0, 4]]), ones)),
        (RuntimeError, "index -5 is out of bounds for dimension 1 with size 4",
         lambda m: m.scatter(x, 1, torch.tensor([[0, -5]]), ones)),
        (IndexError, "index out of range in self",
         lambda m: m.index_add(x[..., None], 1, torch.tensor([0, 4]), torch.ones(2, 2, 1))),
    ]  # fmt: skip
    for error, words, call in cases:
        for module in (torch, ops):
            with pytest.raises(error, match=words):
                call(module)


def test_scatters_take_int32_indices_as_torch(gen, backend):
    """torch takes int32 indices for scatter, scatter with a value and scatter_add too."""
    x, src = make((3, 4), torch.float32, gen), make((2, 4), torch.float32, gen)
    index = torch.randint(0, 3, (2, 4), generator=gen).int()
    assert_matches(ops.scatter(x, 0, index, src), torch.scatter(x, 0, index, src))
    assert_matches(ops.scatter(x, 0, index, 2.5), torch.scatter(x, 0, index, 2.5))
    assert_matches(
        ops.scatter_add(x, 0, index, src), reference(torch.scatter_add, x, 0, index, src)
    )
    with pytest.raises(RuntimeError, match="int32/int64"):
        ops.scatter(x, 0, index.short(), src)


def test_scatters_of_an_empty_index_leave_its_dtype_and_shape_unchecked(gen, interpreted):
    """As torch: an empty index of any dtype or shape scatters nothing (gather's gradient
    scatters such an index); src must still be self's dtype."""
    x = make((3, 4), torch.float32, gen)
    for index in (torch.empty(0, dtype=torch.uint8), torch.empty(5, 0, 2, dtype=torch.int64)):
        for name in ("scatter", "scatter_add"):
            assert_matches(getattr(ops, name)(x, 1, index, torch.empty(0)), x)
        with pytest.raises(RuntimeError, match="to be equal to src"):
            ops.scatter_add(x, 1, index, torch.empty(0, dtype=torch.float64))
    y = x.clone().requires_grad_()
    with ops.use():
        (grad,) = torch.autograd.grad(y.gather(1, torch.empty(3, 0, dtype=torch.uint8)).sum(), y)
    assert_matches(grad, torch.zeros_like(x))
