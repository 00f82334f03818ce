"""Indexing and data movement of naiad.ops against torch (exact): index_select along each dim
with negative indices, gather and take_along_dim, cat (mixed dtypes, empty inputs, strided
inputs) and stack; through the switch with autograd."""

import re

import pytest
import torch
from ops_helpers import assert_matches, check_tiles_spanning_rows, make

import naiad.ops as ops
from naiad.ops.indexing import joined


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_select(dim, gen, backend):
    x = make((4, 5, 6), torch.float32, gen)
    index = torch.tensor([3, 0, -1, 2])
    expected = torch.index_select(x, dim, index % x.shape[dim])
    assert_matches(ops.index_select(x, dim, index), expected)
    with pytest.raises(IndexError):
        ops.index_select(x, dim, torch.tensor([9]))
    with pytest.raises(RuntimeError, match="int64 or int32"):  # not truncated to an index
        ops.index_select(x, dim, torch.tensor([1.0]))


def test_gather_and_take_along_dim(gen, backend):
    x = make((4, 5, 6), torch.float32, gen)
    index = torch.randint(0, 5, (3, 4, 6), generator=gen)
    assert_matches(ops.gather(x, 1, index), torch.gather(x, 1, index))
    index = torch.randint(0, 6, (2, 3, 3), generator=gen)
    assert_matches(
        ops.gather(x.transpose(0, 1), 2, index), torch.gather(x.transpose(0, 1), 2, index)
    )
    indices = torch.randint(0, 5, (4, 2, 1), generator=gen)
    assert_matches(ops.take_along_dim(x, indices, 1), torch.take_along_dim(x, indices, 1))
    flat = torch.randint(0, 120, (3, 7), generator=gen)  # no dim: x flattened
    assert_matches(ops.take_along_dim(x, flat), torch.take_along_dim(x, flat))
    for bad in (indices.int(), indices[0]):  # torch's checks: int64 indices, x's rank
        with pytest.raises(RuntimeError) as expected:
            torch.take_along_dim(x, bad, 1)
        said = expected.value.args[0].split(" but ")[0]  # (torch names dtypes its own way)
        with pytest.raises(RuntimeError, match=re.escape(said)):
            ops.take_along_dim(x, bad, 1)
    for empty in (torch.empty(0, dtype=torch.uint8), torch.empty(2, 0, 6, 1, dtype=torch.int64)):
        assert ops.gather(x, 1, empty).shape == torch.gather(x, 1, empty).shape  # unchecked
    # gather's shape checks, as torch words them: index of x's rank, no larger but along dim
    for bad in (index[0], torch.randint(0, 5, (3, 4, 7), generator=gen)):
        with pytest.raises(RuntimeError) as expected:
            torch.gather(x, 1, bad)
        with pytest.raises(RuntimeError, match=re.escape(expected.value.args[0])):
            ops.gather(x, 1, bad)


def test_cat_and_stack(gen, backend):
    a, b = make((2, 3), torch.float32, gen), make((4, 3), torch.float16, gen)
    assert_matches(ops.cat([a, b], 0), torch.cat([a, b], 0))
    c = make((3, 2), torch.float32, gen).t()
    assert_matches(ops.cat([a, c, a], 1), torch.cat([a, c, a], 1))
    assert_matches(ops.cat([torch.empty(0), a], 0), torch.cat([torch.empty(0), a], 0))
    assert_matches(ops.stack([a, a * 2], 1), torch.stack([a, a * 2], 1))


def test_cat_and_stack_refuse_what_does_not_join(gen, interpreted):
    """Sizes that differ off the joined dim (a result of the first input's sizes came back
    before), ranks that differ, no input, and stack's unequal shapes raise as torch does."""
    a, b = make((2, 3), torch.float32, gen), make((2, 4), torch.float32, gen)
    cases = [
        (RuntimeError, "must match except in dimension 0", lambda f: f.cat([a, b])),
        (RuntimeError, "same number of dimensions", lambda f: f.cat([a, a[None]])),
        (ValueError, "non-empty list of Tensors", lambda f: f.cat([])),
        (RuntimeError, "stack expects each tensor to be equal size", lambda f: f.stack([a, b])),
    ]  # fmt: skip
    for error, words, call in cases:
        for calls in (torch, ops):
            with pytest.raises(error, match=words):
                call(calls)
    assert_matches(ops.cat([a, b], 1), torch.cat([a, b], 1))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool])
def test_cat_in_one_launch_per_four_inputs(dtype, gen, backend, monkeypatch):
    """Inputs of the result's dtype whose dims before and after the joined one fold are copied
    by joined.py's kernel, four inputs a launch: the Llama step's transposed gradients joined
    along a middle dim (stack), one to nine inputs of other sizes along the dim, sliced, permuted
    and empty ones, rows of several blocks (1500 and 500 elements, along dims 1 and 0); inputs
    whose leading dims do not fold (copied one by one); exact, twice (the second call by the
    plan). The kernel serves GPUs (ONE_LAUNCH): here the CPU stands in."""
    monkeypatch.setitem(joined.ONE_LAUNCH, "cpu", True)
    x = make((2, 4, 8, 5), dtype, gen)
    halves = [x.transpose(1, 2), make((2, 4, 8, 5), dtype, gen).transpose(1, 2)]
    sized = [make((3, n, 4), dtype, gen) for n in (1, 5, 2, 7, 3, 1, 6, 2, 4)]
    sliced = make((3, 9, 8), dtype, gen)[:, 2:7, ::2]
    cases = [(halves, 2), (halves, -1), (sized[:1], 1), (sized, 1), (sized[:5], -2)]
    permuted = make((4, 5, 3), dtype, gen).permute(2, 1, 0)
    empty = torch.empty(3, 0, 4, dtype=dtype)
    cases += [([sized[1], sliced, empty, permuted], 1), ([s.transpose(0, 2) for s in sized], 1)]
    long = [make((2, 300, 5), dtype, gen), make((2, 100, 5), dtype, gen)]  # rows of blocks
    cases += [(long, 1), ([long[0][0].t().contiguous().t(), long[1][1]], 0)]
    unfolded = make((3, 2, 2, 5, 4), dtype, gen).transpose(0, 1)  # its leading dims do not fold
    cases.append(([unfolded, make((2, 3, 2, 2, 4), dtype, gen)], 3))  # a copy per input
    for tensors, dim in cases:
        for _ in range(2):
            assert_matches(ops.cat(tensors, dim), torch.cat(tensors, dim))
    assert_matches(ops.stack(halves, 2), torch.stack(halves, 2))


def test_indexing_through_the_switch(gen, interpreted):
    x = make((3, 4), torch.float32, gen).requires_grad_()
    index = torch.tensor([[0, 3]] * 6)

    def step():
        y = torch.cat([x, x * 2], 0).gather(1, index).index_select(0, torch.tensor([5, 0]))
        return [y, *torch.autograd.grad(y.sum(), x)]

    expected = step()
    with ops.use():
        actual = step()
    for a, e in zip(actual, expected, strict=True):
        assert_matches(a, e)


# Targets of triu_/tril_ as torch leaves them in place, each made anew for both sides.
_TRIANGLE_TARGETS = {
    "overlapping": lambda: torch.as_strided(torch.arange(1.0, 9.0), (3, 3), (1, 1)),
    "expanded rows": lambda: torch.arange(1.0, 5.0).reshape(1, 4).expand(3, 4),
    "expanded batch": lambda: torch.arange(1.0, 61.0).reshape(3, 4, 5).expand(2, 3, 4, 5),
    "transposed batch": lambda: torch.arange(1.0, 121.0).reshape(2, 3, 5, 4).transpose(-1, -2),
    "strided": lambda: torch.arange(1.0, 25.0).reshape(4, 6)[:, ::2],
    "bool": lambda: torch.arange(15).reshape(3, 5) % 3 > 0,
}


@pytest.mark.parametrize("target", list(_TRIANGLE_TARGETS))
@pytest.mark.parametrize("name", ["triu_", "tril_"])
def test_triu_tril_in_place_zero_the_other_triangle_where_the_target_lies(name, target, backend):
    """In place, only the other triangle is written (zeros), in the target's own memory: views
    whose elements share memory end as torch leaves them, where a copy back was refused or
    wrote the kept triangle over the zeros."""
    for diagonal in (-1, 0, 2):
        ours, theirs = _TRIANGLE_TARGETS[target](), _TRIANGLE_TARGETS[target]()
        getattr(theirs, name)(diagonal)
        with ops.use(include=[name]):
            assert getattr(ours, name)(diagonal) is ours
        memory = ours if ours._base is None else ours._base
        assert torch.equal(memory, theirs if theirs._base is None else theirs._base)


@pytest.mark.parametrize("diagonal", [0, 2, -1])
def test_triu_tril(diagonal, gen, backend):
    x = make((2, 5, 7), torch.float32, gen)
    assert_matches(ops.triu(x, diagonal), torch.triu(x, diagonal))
    assert_matches(ops.tril(x.transpose(1, 2), diagonal), torch.tril(x.transpose(1, 2), diagonal))
    mask = torch.ones(4, 4, dtype=torch.bool)
    assert_matches(ops.triu(mask, 1), torch.triu(mask, 1))
    for empty in (torch.empty(2, 0, 7), torch.empty(2, 5, 0), torch.empty(0, 3, 3)):
        assert ops.tril(empty, diagonal).shape == empty.shape  # an empty batch: no reshape to -1


@pytest.mark.parametrize("where", ["interpreter", "cpu"])
def test_tiles_spanning_rows_and_matrices(where, gen):
    """Tiles that span several rows (row_blocks.py) against torch, on both CPU back ends (the
    CPU's tiles span one dim: rows of one element, or a row)."""
    from naiad import knobs

    with knobs.override(NAIAD_BACKEND=where):
        check_tiles_spanning_rows(ops, gen)
