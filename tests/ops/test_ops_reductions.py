"""Reductions and scans of naiad.ops against torch with a float64 reference: over one dim, several
dims, all dims, with keepdim, on non-contiguous input and on empty or one-element shapes; ints
and bools where torch takes them. The default tier runs fp32 in the interpreter (one reduction
compiled); the full tier every dtype, interpreted and compiled."""

import math

import pytest
import torch
from ops_helpers import FLOATS, assert_matches, make, reference
from torch.utils._python_dispatch import TorchDispatchMode

import naiad.ops as ops
from naiad.ops.reduce import grouped

FULL = pytest.mark.full
DTYPES = [torch.float32] + [pytest.param(d, marks=FULL) for d in FLOATS[1:]]

# name -> (ours, torch's, extra keyword arguments, error scale)
REDUCTIONS = {
    "sum": (ops.sum, torch.sum, {}, 1),
    "mean": (ops.mean, torch.mean, {}, 1),
    "prod": (ops.prod, torch.prod, {}, 4),
    "amax": (ops.amax, torch.amax, {}, 1),
    "amin": (ops.amin, torch.amin, {}, 1),
    "norm1": (lambda x, d, k: ops.norm(x, 1, d, k),
              lambda x, d, k: torch.linalg.vector_norm(x, 1, d, k), {}, 1),
    "norm2": (lambda x, d, k: ops.norm(x, 2, d, k),
              lambda x, d, k: torch.linalg.vector_norm(x, 2, d, k), {}, 1),
    "norminf": (lambda x, d, k: ops.norm(x, math.inf, d, k),
                lambda x, d, k: torch.linalg.vector_norm(x, math.inf, d, k), {}, 1),
    "logsumexp": (ops.logsumexp, torch.logsumexp, {}, 1),
    "var": (lambda x, d, k: ops.var(x, d, keepdim=k),
            lambda x, d, k: torch.var(x, d, keepdim=k), {}, 2),
    "std": (lambda x, d, k: ops.std(x, d, correction=0, keepdim=k),
            lambda x, d, k: torch.std(x, d, correction=0, keepdim=k), {}, 2),
}  # fmt: skip

DIMS = [(1, False), ((0, 2), True), (-1, True)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(REDUCTIONS))
def test_reduction(name, dtype, gen, backend):
    ours, theirs, _, scale = REDUCTIONS[name]
    low, high = (0.5, 1.5) if name == "prod" else (-3, 3)
    x = make((4, 9, 6), dtype, gen, low=low, high=high)
    for dim, keepdim in DIMS if name != "prod" else [(1, False), (-1, True)]:
        assert_matches(ours(x, dim, keepdim), reference(theirs, x, dim, keepdim), scale)


@pytest.mark.parametrize("name", ["sum", "mean", "amax", "norm2", "var"])
def test_reduction_of_everything_and_of_strided_input(name, gen, backend):
    ours, theirs, _, scale = REDUCTIONS[name]
    x = make((10, 7), torch.float32, gen)[::2, 1:].t()
    if name in ("sum", "mean", "amax"):
        assert_matches(ours(x), reference(theirs, x), scale)
    assert_matches(ours(x, 0, False), reference(theirs, x, 0, False), scale)


def test_sum_of_long_rows_and_of_integers(gen, backend):
    x = make((3, 3000), torch.float32, gen)
    assert_matches(ops.sum(x, 1), reference(torch.sum, x, 1), 4)
    i = make((5, 8), torch.int32, gen)
    assert_matches(ops.sum(i, 0), torch.sum(i, 0))
    assert_matches(ops.prod(i[:, :3], 1), torch.prod(i[:, :3], 1))
    b = make((5, 8), torch.bool, gen)
    assert_matches(ops.sum(b), torch.sum(b))
    assert_matches(
        ops.sum(x, 1, dtype=torch.float64), reference(torch.sum, x, 1, dtype=torch.float64)
    )


def test_empty_and_single_element(backend):
    empty = torch.empty(3, 0)
    assert_matches(ops.sum(empty, 1), torch.sum(empty, 1))
    assert_matches(ops.prod(empty, 1), torch.prod(empty, 1))
    assert_matches(ops.mean(empty, 1), torch.mean(empty, 1))
    assert ops.sum(torch.empty(0, 4), 1).shape == (0,)
    one = torch.tensor([[2.5]])
    assert_matches(ops.amax(one), torch.amax(one))
    assert_matches(ops.sum(torch.tensor(3.0)), torch.tensor(3.0))
    with pytest.raises(IndexError):
        ops.amax(empty, 1)


@pytest.mark.parametrize("dtype", [torch.float32, pytest.param(torch.int64, marks=FULL),
                                   pytest.param(torch.bfloat16, marks=FULL)])  # fmt: skip
def test_max_min_with_indices_and_argmax(dtype, gen, backend):
    x = make((5, 40), dtype, gen)
    x[1, 3] = x[1, 30] = x[1].max() + 1  # a tie: the first position wins
    for dim in (0, 1):
        values, indices = ops.max(x, dim)
        expected = torch.max(x, dim)
        assert_matches(values, expected.values)
        assert_matches(indices, expected.indices)
        assert_matches(
            ops.min(x, dim, keepdim=True).indices, torch.min(x, dim, keepdim=True).indices
        )
    assert_matches(ops.argmax(x), torch.argmax(x))
    assert_matches(ops.argmin(x, 1), torch.argmin(x, 1))
    assert_matches(ops.max(x), torch.max(x))


def test_nan_is_the_extreme(backend):
    x = torch.tensor([[1.0, math.nan, 3.0, math.nan], [2.0, -1.0, 0.0, 5.0]])
    assert_matches(ops.argmax(x, 1), torch.argmax(x, 1))
    assert_matches(ops.argmin(x, 1), torch.argmin(x, 1))
    assert_matches(ops.amax(x, 1), torch.amax(x, 1))
    assert_matches(ops.sum(x, 1), torch.sum(x, 1))


def test_all_any(gen, backend):
    x = make((6, 5), torch.float32, gen)
    x[2] = 0.0
    for dim in (None, 0, 1):
        assert_matches(ops.all(x, dim), torch.all(x) if dim is None else torch.all(x, dim))
        assert_matches(
            ops.any(x > 2, dim), torch.any(x > 2) if dim is None else torch.any(x > 2, dim)
        )
    assert_matches(ops.any(x, (0, 1), keepdim=True), torch.any(x, (0, 1), keepdim=True))
    for fn in ("all", "any"):  # over no dims: each element's truth (they reduced every dim)
        for t in (x, (x * 3).to(torch.uint8)):
            assert_matches(getattr(ops, fn)(t, ()), getattr(torch, fn)(t, ()))


def test_var_mean_and_corrections(gen, backend):
    x = make((5, 12), torch.float32, gen)
    var, mean = ops.var_mean(x, 1, correction=0)
    expected = torch.var_mean(x.double(), 1, correction=0)
    assert_matches(var, expected[0].float())
    assert_matches(mean, expected[1].float())
    assert_matches(ops.std(x, (0, 1), correction=3), reference(torch.std, x, (0, 1), correction=3))


@pytest.mark.parametrize("dtype", DTYPES)
def test_cumsum_cumprod(dtype, gen, backend):
    x = make((3, 70, 4), dtype, gen, low=0.9, high=1.1)
    for dim in (1, -1, 0):
        assert_matches(ops.cumsum(x, dim), reference(torch.cumsum, x, dim), 8)
    assert_matches(ops.cumprod(x, 1), reference(torch.cumprod, x, 1), 8)


def test_integer_cumsum(gen, backend):
    i = make((4, 9), torch.int32, gen)
    assert_matches(ops.cumsum(i, 1), torch.cumsum(i, 1))
    assert_matches(ops.cumsum(i.t(), 0), torch.cumsum(i.t(), 0))
    for dtype in (torch.int8, torch.uint8, torch.int16):  # scanned in int32, wrapping as torch
        narrow = (make((4, 300), torch.int32, gen) % 100).to(dtype)
        assert torch.equal(ops.cumsum(narrow, 1, dtype=dtype), torch.cumsum(narrow, 1, dtype=dtype))
        assert torch.equal(
            ops.cumprod(narrow, 1, dtype=dtype), torch.cumprod(narrow, 1, dtype=dtype)
        )


def test_scans_in_place_keep_the_dtype_as_torch(gen, interpreted):
    """cumsum_/cumprod_ scan integers in their own dtype (out of place they scan into int64),
    refuse another `dtype` and bools with torch's errors."""
    i = (make((4, 40), torch.int32, gen) % 50).to(torch.int16)
    with ops.use(include=["cumsum", "cumprod"]):
        ours = i.clone()
        assert ours.cumsum_(1) is ours
        with pytest.raises(RuntimeError, match="Bad in-place call"):
            i.clone().cumprod_(1, dtype=torch.int64)
        with pytest.raises(NotImplementedError, match="Bool"):
            (i > 0).cumsum_(1)
    assert torch.equal(ours, i.clone().cumsum_(1))


def test_reductions_compiled(gen, compiled):
    """The row kernel compiled: several dims, a transposed operand, a column sum."""
    x = make((6, 33, 5), torch.float16, gen)
    assert_matches(ops.sum(x, (0, 2)), reference(torch.sum, x, (0, 2)))
    assert_matches(ops.sum(x.transpose(0, 1), 1, keepdim=True),
                   reference(torch.sum, x.transpose(0, 1), 1, keepdim=True))  # fmt: skip
    assert_matches(ops.amax(x, 1), torch.amax(x, 1))
    y = make((40, 70), torch.float32, gen)  # over the leading dim: tiles along the kept one
    assert_matches(ops.sum(y, 0), reference(torch.sum, y, 0), 2)


class _Copies(TorchDispatchMode):
    """Counts the copies torch makes (a reshape's clone) under it."""

    copies = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.copies += func in (torch.ops.aten.clone.default, torch.ops.aten.copy_.default)
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_middle_dims_read_in_place_compiled(dtype, gen, compiled, monkeypatch):
    """Kept dims on both sides of the reduced ones, whose strides take two or three runs (the
    Llama step's sum over the grouped heads, of a contiguous and of a transposed gradient; a
    permuted operand), are read as they lie (grouped.py): no copy, each reduction against
    float64, twice (the second call by the kept plan). The row form serves GPUs, and the CPU
    reads only a contiguous inner run in place (IN_PLACE, the column form): here the CPU takes
    every operand, the column form where the inner run is contiguous, else the row form."""
    monkeypatch.setitem(grouped.IN_PLACE, "cpu", True)
    x = make((2, 4, 4, 8, 5), dtype, gen)
    operands = [(x, [2]), (x.transpose(3, 4), [2]), (x.permute(3, 0, 1, 2, 4), [3])]
    operands.append((make((3, 70, 6), dtype, gen), [1]))  # rows of several blocks on a GPU
    for operand, dims in operands:
        for keepdim in (True, False):
            for _ in range(2):
                with _Copies() as mode:
                    results = [ours(operand, dims, keepdim) for ours in (ops.sum, ops.amin)]
                    results.append(ops.norm(operand, 2, dims, keepdim))
                assert mode.copies == 0
                expected = [
                    reference(torch.sum, operand, dims, keepdim),
                    torch.amin(operand, dims, keepdim),
                    reference(torch.linalg.vector_norm, operand, 2, dims, keepdim),
                ]
                for ours, theirs in zip(results, expected, strict=True):
                    assert_matches(ours, theirs)


def test_extremes_of_long_rows_with_nan_and_infinities_compiled(gen, compiled):
    """Rows of 300 take a program each on the CPU, whose lanes keep their extreme by a compare
    and a select: a NaN first, last (in the block's masked tail) or alone in a lane wins over
    every value after it, and rows of -inf and with +inf keep them."""
    x = make((6, 300), torch.float32, gen)
    x[0, 0] = x[1, 299] = x[2, 150] = math.nan
    x[3] = -math.inf
    x[4, 7], x[5, 290] = math.inf, -math.inf
    for ours, theirs in ((ops.amax, torch.amax), (ops.amin, torch.amin)):
        assert_matches(ours(x, 1), theirs(x, 1))
        assert_matches(ours(x.t(), 0), theirs(x.t(), 0))  # the same rows, read as columns
    assert_matches(ops.norm(x[3:], math.inf, 1), torch.linalg.vector_norm(x[3:], math.inf, 1))


@pytest.mark.parametrize("n", [1024, 2100])
def test_extremes_and_products_of_rows_of_several_blocks_compiled(n, gen, compiled):
    """Rows of several of the kernel's blocks, each block reduced in the loop on the CPU
    (cpu-carried-reductions) and a float extremum folded on its bits (lower_reduce.py): NaNs
    of either sign, signed zeros and infinities in some rows; integers and truth values too."""
    x = make((7, n), torch.float32, gen)
    negative_nan = torch.tensor([0xFFC00001], dtype=torch.int64).to(torch.int32).view(torch.float32)
    x[0, 5], x[1, n - 1], x[2, 300] = math.nan, negative_nan, negative_nan
    x[2] = -x[2].abs()
    x[3] = torch.where(torch.arange(n) % 2 == 0, 0.0, -0.0)
    x[4, 1000], x[5, n // 2] = math.inf, -math.inf
    for ours, theirs in ((ops.amax, torch.amax), (ops.amin, torch.amin)):
        assert_matches(ours(x, 1), theirs(x, 1))
    assert_matches(ops.norm(x, math.inf, 1), torch.linalg.vector_norm(x, math.inf, 1))
    near_one = make((3, n), torch.float32, gen, low=0.99, high=1.01)
    assert_matches(ops.prod(near_one, 1), reference(torch.prod, near_one, 1), 4)
    i = make((5, n), torch.int32, gen)
    assert_matches(ops.amax(i, 1), torch.amax(i, 1))
    assert_matches(ops.amin(i, 1), torch.amin(i, 1))
    flags = i % 7 != 0
    flags[1] = True
    assert_matches(ops.all(flags, 1), torch.all(flags, 1))
    assert_matches(ops.any(~flags, 1), torch.any(~flags, 1))


@pytest.mark.parametrize("where", ["interpreter", "cpu"])
def test_few_long_rows_scan_in_parts(where, gen, monkeypatch):
    """cumsum and cumprod of rows too few for the device, each scanned in parts (scans.py):
    each part's running total starts from its row's earlier parts' total. Sums of floats
    against float64, of integers and booleans exactly, products through a zero and a NaN.
    Made here with 8 threads and parts of 16 elements at least: 3 rows in 4 parts."""
    from naiad import knobs
    from naiad.ops.reduce import split_rows
    from naiad.ops.reduce.rows import as_rows

    monkeypatch.setattr(split_rows, "LEAST_PART", 16)
    x = make((3, 1024), torch.float32, gen)
    near_one = make((3, 256), torch.float32, gen, 0.9, 1.1)
    near_one[0, 100], near_one[1, 200] = 0.0, math.nan
    ints, flags = make((3, 512), torch.int32, gen), make((3, 512), torch.bool, gen)
    with knobs.override(NAIAD_BACKEND=where, NAIAD_NUM_THREADS=8):
        assert split_rows.split_parts(as_rows(x, [1]), x.device) == 4
        assert_matches(ops.cumsum(x, 1), reference(torch.cumsum, x, 1), 32, normwise=True)
        assert_matches(ops.cumsum(x[0], 0), reference(torch.cumsum, x[0], 0), 32, normwise=True)
        assert_matches(ops.cumprod(near_one, 1), reference(torch.cumprod, near_one, 1), 16)
        assert_matches(ops.cumsum(ints, 1), torch.cumsum(ints, 1))
        assert_matches(ops.cumsum(flags, 1), torch.cumsum(flags, 1))


@pytest.mark.parametrize("n", [10, 300, 2100])
def test_first_positions_of_the_extremes_compiled(n, gen, compiled):
    """argmax / argmin / max with indices: each lane's extreme and its first column, then the
    extreme and the least column holding it. Ties in other lanes and in later blocks, a NaN
    (of either sign) before and after a tie, signed zeros, rows all -inf or +inf, and integer
    rows of their type's extremes give torch's first positions."""
    x = make((8, n), torch.float32, gen)
    x[0, n // 2] = x[0, 3] = x[0, n - 1] = 9.0  # ties: the first wins
    negative_nan = torch.tensor([0xFFC00001], dtype=torch.int64).to(torch.int32).view(torch.float32)
    x[1, n - 1], x[1, 1] = math.nan, negative_nan
    x[2, 0] = x[2, n - 2] = math.nan
    x[3] = torch.where(torch.arange(n) % 3 == 0, 0.0, -0.0)
    x[4] = -math.inf
    x[5] = math.inf
    x[6, n - 1] = -9.0
    x[7, 2], x[7, n - 3] = math.inf, -math.inf
    for dim in (1, 0):
        operand = x if dim == 1 else x.t().contiguous()
        assert_matches(ops.argmax(operand, dim), torch.argmax(operand, dim))
        assert_matches(ops.argmin(operand, dim), torch.argmin(operand, dim))
    values, indices = ops.min(x, 1)
    assert_matches(values, torch.min(x, 1).values)
    assert_matches(indices, torch.min(x, 1).indices)
    i = make((3, n), torch.int32, gen)
    i[0] = torch.iinfo(torch.int32).min
    i[1, 1] = i[1, n - 1] = torch.iinfo(torch.int32).max
    assert_matches(ops.argmax(i, 1), torch.argmax(i, 1))
    assert_matches(ops.argmin(i, 1), torch.argmin(i, 1))


def test_registered_reductions_reach_naiad(gen, interpreted):
    x = make((4, 6), torch.float32, gen)
    with ops.use(include=["sum", "mean", "max", "var", "cumsum"]):
        results = [x.sum(1), x.mean(), torch.max(x, 0), x.var(1), x.cumsum(0)]
    expected = [x.sum(1), x.mean(), torch.max(x, 0), x.var(1), x.cumsum(0)]
    for ours, theirs in zip(results, expected, strict=True):
        if isinstance(ours, torch.Tensor):
            assert_matches(ours, theirs)
        else:
            assert_matches(ours.values, theirs.values)
            assert_matches(ours.indices, theirs.indices)


@pytest.mark.full
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_scans_of_rows_longer_than_a_block(dtype, gen, backend):
    """Several chunks per row: the carried total crosses chunk boundaries, and the loop keeps
    one type per variable in the half-precision dtypes (the interpreter checks it)."""
    x = make((3, 2500), dtype, gen, low=0, high=0.01)
    assert_matches(ops.cumsum(x, 1), reference(torch.cumsum, x, 1), 16, normwise=True)


@pytest.mark.parametrize("where", ["interpreter", "cpu"])
def test_few_long_rows_reduce_in_parts(where, gen, monkeypatch):
    """Rows too few for the device's parallel units, each reduced in parts and the partials
    folded (reduce/split_rows.py by the same reduction; var and std by their parts' means
    and deviations, split_moments.py; the extremes' positions by the least column holding
    the extreme, split_extremes.py): every op's value, NaN included, as torch's; integers,
    booleans and half precision accumulate as unsplit. Made here with 8 threads and parts of
    16 elements at least."""
    import sys

    from naiad import knobs
    from naiad.ops.kept import KeptTable
    from naiad.ops.reduce import split_rows
    from naiad.ops.reduce.rows import as_rows

    monkeypatch.setattr(split_rows, "LEAST_PART", 16)
    for planned in ("naiad.ops.reduce.extrema", "naiad.ops.reduce.statistics"):
        monkeypatch.setattr(sys.modules[planned], "_PLANS", KeptTable(16))  # none of a run before
    split = []
    for module, name in (("naiad.ops.reduce.statistics", "split_moments"),
                         ("naiad.ops.reduce.extrema", "split_extremes")):  # fmt: skip
        taken = getattr(sys.modules[module], name)

        def recorded(rows, parts, *rest, _taken=taken, _name=name):
            split.append(_name)
            return _taken(rows, parts, *rest)

        monkeypatch.setattr(sys.modules[module], name, recorded)
    x = make((3, 256), torch.float32, gen)
    x[1, 200] = float("nan")
    near_one = make((2, 128), torch.float32, gen, 0.9, 1.1)
    ints, flags = make((2, 96), torch.int32, gen), make((2, 96), torch.bool, gen)
    half = make((1, 512), torch.float16, gen)
    with knobs.override(NAIAD_BACKEND=where, NAIAD_NUM_THREADS=8):
        rows = as_rows(x, [1])
        assert split_rows.split_parts(rows, x.device) == 4  # 3 rows x 4 parts >= 8 threads
        for name, (ours, theirs, _, scale) in REDUCTIONS.items():
            operand = near_one if name == "prod" else x
            expected = reference(theirs, operand, 1, False)
            assert_matches(ours(operand, 1, False), expected, scale)
        assert_matches(ops.sum(ints, 1), torch.sum(ints, 1))
        assert_matches(ops.amax(ints), torch.amax(ints))
        assert_matches(ops.all(flags, 1), torch.all(flags, 1))
        assert_matches(ops.any(flags), torch.any(flags))
        assert_matches(ops.sum(half), reference(torch.sum, half), 4)
        x[0, 9] = x[0, 200] = 7.0  # a tie across parts: the first wins
        for ours, theirs in ((ops.argmax, torch.argmax), (ops.argmin, torch.argmin)):
            assert_matches(ours(x, 1), theirs(x, 1))
            assert_matches(ours(ints, 1), theirs(ints, 1))
        values, indices = ops.max(half, 1)
        assert_matches(values, torch.max(half, 1).values)
        assert_matches(indices, torch.max(half, 1).indices)
    assert split.count("split_moments") == 2 and split.count("split_extremes") == 5


@pytest.mark.parametrize(
    ("rows", "n", "dtype", "least", "parts"),
    [
        (128, 131072, torch.float32, None, 8),  # 32 programs for 132 multiprocessors
        (16, 1 << 20, torch.float32, None, 64),
        (1, 1 << 24, torch.float32, None, 1024),  # at most MOST_PARTS
        (8, 128256, torch.bfloat16, None, 2),  # 2 programs -> 4
        (1, 128256, torch.float32, None, 1),  # 4 parts would still be one program
        (1024, 16384, torch.float32, 8192, 1),  # 256 programs: every multiprocessor busy
        (512, 32768, torch.float32, 8192, 4),  # softmax's and the scans' smaller parts
    ],
)
def test_a_gpu_splits_only_rows_too_few_for_it(rows, n, dtype, least, parts, monkeypatch):
    """split_rows.split_parts on a GPU of 132 multiprocessors (an H200), without one: the
    parts the rule measured there gives (the module's comments hold the measurements)."""
    from naiad.ops.reduce import split_rows
    from naiad.ops.reduce.rows import Rows

    monkeypatch.setattr(split_rows, "multiprocessors", lambda device: 132)
    data = torch.empty(1, dtype=dtype)
    extra = () if least is None else (least,)
    found = split_rows.split_parts(Rows(data, rows, n, n, 1, None, None), torch.device("cuda"),
                                   *extra)  # fmt: skip
    assert found == parts


@pytest.mark.parametrize(
    "shape, dims",
    [((4, 70, 33), [1]), ((2, 3, 4, 5, 6), [2]), ((2, 3, 4, 5, 6), [1, 2]), ((3, 300, 2), [1])],
)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32])
def test_reductions_over_middle_dims_read_the_operand_in_place(shape, dims, dtype, gen, compiled):
    """Kept dims on both sides of the reduced ones, the inner ones contiguous: the CPU reads the
    operand where it lies (grouped.py's column form, no copy), with torch's values."""
    from naiad.ops.reduce.grouped import in_place_groups

    x = make(shape, dtype, gen, low=-3, high=3)
    assert in_place_groups(x, dims) is not None
    names = ["sum", "amax", "amin"] + (["mean"] if dtype.is_floating_point else [])
    for name in names:
        ours, theirs = getattr(ops, name), getattr(torch, name)
        assert_matches(ours(x, dims), reference(theirs, x, dims), 4)


@pytest.mark.parametrize("dtype", [torch.bool, torch.uint8, torch.int8, torch.int32])
def test_logsumexp_of_integers_pads_no_lane(dtype, gen, backend):
    """Integers and bools have no -inf to fill the lanes past a row's end with: those lanes
    had added e^0 to rows whose length is no power of two, and won the max of negative rows."""
    x = make((3, 5), torch.int32, gen)
    x = (x > 0) if dtype == torch.bool else (x.abs() if dtype == torch.uint8 else x).to(dtype)
    for dim in (0, 1):
        assert_matches(ops.logsumexp(x, dim), reference(torch.logsumexp, x, dim))
    negative = torch.tensor([[-22, -30, -25]], dtype=torch.int8)
    assert_matches(ops.logsumexp(negative, 1), reference(torch.logsumexp, negative, 1))
