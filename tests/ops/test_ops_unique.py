"""unique along a dim and unique_consecutive of naiad.ops against torch's ATen kernels (exact:
values, inverse, counts, dtypes and shapes): slices drawn from a few so that they repeat, several
dims and dtypes, a row longer than one block, empty inputs; through the switch."""

import pytest
import torch
from ops_helpers import assert_matches

import naiad.ops as ops


def _repeating(shape, dim, dtype, gen):
    """A tensor whose slices along `dim` are drawn from four random ones (so most repeat and
    several share their first elements, which the lexicographic order must look past)."""
    moved = list(shape)
    n = moved.pop(dim)
    pool = torch.randint(-2, 3, (4, *moved), generator=gen)
    pool[1] = pool[0]
    pool[1].view(-1)[-1] += 1  # equal to the first but in its last element
    x = pool[torch.randint(0, 4, (n,), generator=gen)].movedim(0, dim)
    return (x > 0) if dtype == torch.bool else (x * 1.5 if dtype.is_floating_point else x).to(dtype)


def _same(actual, expected):
    for a, e in zip(actual, expected, strict=True):
        assert a.dtype == e.dtype and a.shape == e.shape
        assert_matches(a, e)


@pytest.mark.parametrize(
    ("shape", "dim"), [((9, 3), 0), ((9, 3), 1), ((5, 4, 3), 1), ((6, 1), 0), ((7, 5, 2), -1)]
)
def test_unique_dim(shape, dim, gen, backend):
    for dtype in (torch.float32, torch.bfloat16, torch.int64, torch.int8, torch.bool):
        x = _repeating(shape, dim, dtype, gen)
        _same(ops.unique_dim(x, dim, True, True, True), torch.ops.aten.unique_dim(x, dim))
        _same(ops.unique_dim(x, dim), torch.ops.aten.unique_dim(x, dim))
        expected = torch.unique(x, dim=dim, return_inverse=True, return_counts=True)
        _same(ops.unique(x, dim=dim, return_inverse=True, return_counts=True), expected)
        _same([ops.unique(x, dim=dim)], [torch.unique(x, dim=dim)])


def test_unique_dim_many_slices(gen, interpreted):
    """1500 slices: the rank kernel's row is a block of 2048, the pair kernel's two blocks; 9
    elements a slice take four rounds of pairing."""
    x = _repeating((1500, 9), 0, torch.float32, gen)
    x[::7, 4] = torch.rand(len(x[::7]), generator=gen)  # some distinct slices among them
    _same(ops.unique_dim(x, 0, True, True, True), torch.ops.aten.unique_dim(x, 0))
    _same(ops.unique_dim(x.t(), 1), torch.ops.aten.unique_dim(x.t(), 1))


def test_unique_dim_empty(interpreted):
    for shape, dim in (((0, 3), 0), ((3, 0), 1), ((2, 0, 3), 1)):
        x = torch.empty(shape)
        _same(ops.unique_dim(x, dim), torch.ops.aten.unique_dim(x, dim))
    with pytest.raises(RuntimeError, match="0 sized dimensions"):
        ops.unique_dim(torch.empty(3, 0), 0)


@pytest.mark.parametrize(("shape", "dim"), [((9, 3), 0), ((4, 8), 1), ((5, 2, 3), 1)])
def test_unique_consecutive(shape, dim, gen, backend):
    for dtype in (torch.float32, torch.int64, torch.bool):
        x = _repeating(shape, dim, dtype, gen)
        x = x.index_select(dim, torch.arange(x.shape[dim]).repeat_interleave(2)[1:])  # runs
        for flags in ((True, True), (False, False), (True, False)):
            _same(ops.unique_dim_consecutive(x, dim, *flags),
                  torch.ops.aten.unique_dim_consecutive(x, dim, *flags))  # fmt: skip
            _same(ops.unique_consecutive(x, *flags, dim),
                  torch.ops.aten.unique_consecutive(x, *flags, dim))  # fmt: skip
            _same(ops.unique_consecutive(x, *flags),
                  torch.ops.aten.unique_consecutive(x, *flags))  # fmt: skip
    empty = torch.empty(0, 2)
    _same(
        ops.unique_consecutive(empty, True, True),
        torch.ops.aten.unique_consecutive(empty, True, True),
    )


def test_unique_through_the_switch(gen, interpreted):
    x = _repeating((12, 3, 2), 1, torch.float32, gen).transpose(0, 2)
    calls = (
        lambda: torch.unique(x, dim=1, return_inverse=True, return_counts=True),
        lambda: torch.unique_consecutive(x, return_inverse=True, return_counts=True, dim=0),
        lambda: torch.unique_consecutive(x, return_counts=True),
    )
    for call in calls:
        expected = call()
        with ops.use(include=["unique_dim", "unique_consecutive", "unique_dim_consecutive"]):
            actual = call()
        _same(actual, expected)
