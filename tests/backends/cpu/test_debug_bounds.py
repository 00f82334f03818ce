"""Debug mode compiled for the CPU: every access checked against its argument's extent.

Each kernel runs compiled (`NAIAD_BACKEND=cpu`: nothing falls back to the interpreter) with
`debug=True`. An access one element past either end of its argument's storage raises an
IndexError after the launch, at the user's file:line with the source line; masked-off lanes are
never checked; views into larger buffers (offsets, negative strides) are judged by the storage
underneath; a kernel that stays inside its arguments gives the same bits as without debug mode.
"""

import inspect

import numpy as np
import pytest
import torch
from middle.upstream import XDSL_GENERIC_ONLY, XDSL_MISSING, assert_upstream_valid

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.errors import KernelIndexError
from naiad.ir.parser import parse_module


@pytest.fixture(autouse=True)
def compiled():
    with knobs.override(NAIAD_BACKEND="cpu"):
        yield


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def random_floats(shape, gen, dtype=np.float32) -> np.ndarray:
    return (gen.standard_normal(shape) + 2.0).astype(dtype)  # never zero in practice


def line_of(kernel, text: str) -> int:
    """The absolute line of the first line of `kernel`'s source holding `text`."""
    lines, first = inspect.getsourcelines(kernel.fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def assert_upstream(text: str) -> None:
    """`text` is upstream MLIR, as xDSL checks it (tests/middle/upstream.py)."""
    used = {op.name for op in parse_module(text).walk()}
    assert_upstream_valid(text, used & (XDSL_MISSING.keys() | XDSL_GENERIC_ONLY.keys()))


def out_of_bounds(what: str, name: str):
    return pytest.raises(KernelIndexError, match=f"out-of-bounds {what} through argument `{name}`")


# -- loads, stores and atomics one element outside, on each side
@naiad.jit
def _copy(src, dst, start, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(src + start + offs, mask=offs < n)
    tl.store(dst + start + offs, x, mask=offs < n)


@pytest.mark.parametrize("start, n", [(0, 11), (-1, 10), (1, 10)])
def test_load_one_element_outside(start, n):
    src, dst = random_floats(10, rng(1)), np.full(16, np.nan, np.float32)
    with out_of_bounds("load", "src") as info:
        _copy[(1,)](src, dst, start, n, 16, debug=True)
    assert info.value.location.lineno == line_of(_copy, "tl.load")
    assert "tl.load(src + start + offs, mask=offs < n)" in info.value.location.source_line


@pytest.mark.parametrize("start, n", [(0, 11), (-1, 10), (1, 10)])
def test_store_one_element_outside_writes_nothing(start, n):
    gen = rng(2)
    src = random_floats(20, gen)
    dst = np.full(10, np.nan, np.float32)
    with out_of_bounds("store", "dst") as info:
        _copy[(1,)](src[5:], dst, start, n, 16, debug=True)
    assert info.value.location.lineno == line_of(_copy, "tl.store")
    assert np.isnan(dst).all()


def test_in_bounds_with_masked_off_lanes_past_the_end():
    gen = rng(3)
    src, dst = random_floats(10, gen), np.full(10, np.nan, np.float32)
    _copy[(1,)](src, dst, 0, 10, 16, debug=True)  # lanes 10..15 are masked off
    np.testing.assert_array_equal(dst, src)


@naiad.jit
def _add_atomically(p, start, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.atomic_add(p + start + offs, 1, mask=offs < n)


@pytest.mark.parametrize("start, n", [(0, 5), (-1, 4), (1, 4)])
def test_atomic_one_element_outside_updates_nothing(start, n):
    p = rng(4).integers(1, 100, 4).astype(np.int32)
    before = p.copy()
    with out_of_bounds("atomic", "p") as info:
        _add_atomically[(1,)](p, start, n, 8, debug=True)
    assert info.value.location.lineno == line_of(_add_atomically, "tl.atomic_add")
    np.testing.assert_array_equal(p, before)
    _add_atomically[(1,)](p, 0, 4, 8, debug=True)
    np.testing.assert_array_equal(p, before + 1)


@naiad.jit
def _swap_one(p, i):
    tl.atomic_cas(p + i, 0, 1)


@pytest.mark.parametrize("i", [-1, 4])
def test_scalar_compare_and_swap_outside(i):
    p = np.zeros(4, np.int64)
    with out_of_bounds("atomic", "p"):
        _swap_one[(1,)](p, i, debug=True)
    _swap_one[(1,)](p, 3, debug=True)
    np.testing.assert_array_equal(p, [0, 0, 0, 1])


@naiad.jit
def _scalar_copy(src, dst, i):
    tl.store(dst, tl.load(src + i))


@pytest.mark.parametrize("dtype", [np.uint8, np.float16, np.float64])
def test_scalar_load_outside_for_each_element_size(dtype):
    src = (rng(5).integers(1, 50, 6)).astype(dtype)
    dst = np.zeros(1, dtype)
    for i in (-1, 6):
        with out_of_bounds("load", "src"):
            _scalar_copy[(1,)](src, dst, i, debug=True)
    _scalar_copy[(1,)](src, dst, 5, debug=True)
    assert dst[0] == src[5]


# -- views: the storage underneath decides
def test_numpy_view_may_reach_its_base_buffer():
    gen = rng(6)
    base = random_floats(20, gen)
    view, out = base[4:14], np.full(32, np.nan, np.float32)
    _copy[(1,)](view, out[4:], -4, 8, 8, debug=True)  # reads base[0:8] through the view
    np.testing.assert_array_equal(out[:8], base[:8])
    with out_of_bounds("load", "src"):
        _copy[(1,)](view, out[5:], -5, 8, 8, debug=True)  # base[-1]
    _copy[(1,)](view, out, 6, 10, 16, debug=True)  # up to base[19], the last element
    np.testing.assert_array_equal(out[6:16], base[10:20])
    with out_of_bounds("load", "src"):
        _copy[(1,)](view, out, 6, 11, 16, debug=True)  # base[20]: one past the end


def test_torch_view_inside_a_larger_storage():
    gen = rng(7)
    base = torch.from_numpy(random_floats(12, gen))
    out = torch.full((12,), float("nan"))
    _copy[(1,)](base[3:], out[3:], -3, 12, 16, debug=True)
    torch.testing.assert_close(out, base, rtol=0, atol=0)
    with out_of_bounds("load", "src"):
        _copy[(1,)](base[3:], out[4:], -4, 4, 16, debug=True)


@naiad.jit
def _strided_copy(src, dst, stride, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(src + offs * stride, mask=offs < n)
    tl.store(dst + offs, x, mask=offs < n)


def test_negative_strides():
    gen = rng(8)
    base = random_floats(10, gen)
    backwards = base[::-1]  # its data pointer is the last element of `base`
    stride = backwards.strides[0] // backwards.itemsize
    dst = np.full(10, np.nan, np.float32)
    _strided_copy[(1,)](backwards, dst, stride, 10, 16, debug=True)
    np.testing.assert_array_equal(dst, backwards)
    with out_of_bounds("load", "src"):
        _strided_copy[(1,)](backwards, dst, stride, 11, 16, debug=True)  # base[-1]
    with out_of_bounds("load", "src"):
        _strided_copy[(1,)](backwards, dst, 1, 2, 16, debug=True)  # base[10]


# -- 2-D blocks and block pointers
@naiad.jit
def _tile(src, dst, row0, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    rows = row0 + tl.arange(0, BM)[:, None]
    cols = tl.arange(0, BN)[None, :]
    mask = (rows < M) & (cols < N)
    x = tl.load(src + rows * stride + cols, mask=mask)
    tl.store(dst + (rows - row0) * BN + cols, x, mask=mask)


def test_2d_block():
    gen = rng(9)
    src = random_floats((6, 8), gen)
    dst = np.full((4, 8), np.nan, np.float32)
    _tile[(1,)](src, dst, 2, 6, 8, 8, 4, 8, debug=True)
    np.testing.assert_array_equal(dst, src[2:6])
    _tile[(1,)](src, dst, 3, 6, 8, 8, 4, 8, debug=True)  # row 6 is masked off
    with out_of_bounds("load", "src"):
        _tile[(1,)](src, dst, 3, 7, 8, 8, 4, 8, debug=True)
    with out_of_bounds("load", "src"):
        _tile[(1,)](src, dst, -1, 6, 8, 8, 4, 8, debug=True)
    # A column past N is still inside the storage (the next row): legal, as in the interpreter.
    wide = np.full((4, 16), np.nan, np.float32)
    _tile[(1,)](src, wide, 0, 6, 9, 8, 4, 16, debug=True)
    np.testing.assert_array_equal(wide[:, 8], src.reshape(-1)[8:40:8])
    with out_of_bounds("load", "src"):
        _tile[(1,)](src, wide, 2, 6, 9, 8, 4, 16, debug=True)  # row 5, column 8


@naiad.jit
def _block_pointer_copy(
    src, dst, M, N, row0, BM: tl.constexpr, BN: tl.constexpr, CHECK: tl.constexpr
):
    s = tl.make_block_ptr(src, (M, N), (N, 1), (row0, 0), (BM, BN), (1, 0))
    d = tl.make_block_ptr(dst, (BM, BN), (BN, 1), (0, 0), (BM, BN), (1, 0))
    tl.store(d, tl.load(s, boundary_check=CHECK, padding_option="zero"))


def test_block_pointers():
    gen = rng(10)
    src = random_floats((6, 8), gen)
    dst = np.full((4, 8), np.nan, np.float32)
    _block_pointer_copy[(1,)](src, dst, 6, 8, 3, 4, 8, (0, 1), debug=True)
    expected = np.zeros((4, 8), np.float32)
    expected[:3] = src[3:]
    np.testing.assert_array_equal(dst, expected)
    with out_of_bounds("load", "src"):
        _block_pointer_copy[(1,)](src, dst, 6, 8, 3, 4, 8, (1,), debug=True)


@naiad.jit
def _column_block(src, dst, M, N, col0, BM: tl.constexpr, BN: tl.constexpr):
    s = tl.make_block_ptr(src, (M, N), (1, M), (0, col0), (BM, BN), (0, 1))
    d = tl.make_block_ptr(dst, (BM, BN), (BN, 1), (0, 0), (BM, BN), (1, 0))
    tl.store(d, tl.load(s))


@pytest.mark.parametrize("col0", [5, -2])
def test_a_views_report_lists_its_lanes_in_order(col0):
    """A view's failing lanes are counted out of line (codegen/failures.py): the count and the
    first eight offsets, in the block's row-major lane order, as NumPy enumerates them."""
    gen = rng(14)
    m, n, bm, bn = 6, 8, 8, 4
    src = random_floats(m * n, gen)  # column-major M x N: element (i, j) at i + M j
    dst = np.full((bm, bn), np.nan, np.float32)
    i, j = np.meshgrid(np.arange(bm), col0 + np.arange(bn), indexing="ij")
    offsets = (i + m * j).reshape(-1)
    bad = offsets[(offsets < 0) | (offsets >= src.size)]
    listed = ", ".join(map(str, bad[:8])) + (", ..." if bad.size > 8 else "")
    expected = f"{bad.size} active lane(s) address element offset(s) [{listed}] outside"
    with out_of_bounds("load", "src") as info:
        _column_block[(1,)](src, dst, m, n, col0, bm, bn, debug=True)
    assert expected in str(info.value)
    assert np.isnan(dst).all()


# -- the element-by-element path
@naiad.jit
def _gather_scatter(src, idx, dst, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    i = tl.load(idx + offs, mask=offs < n, other=0)
    x = tl.load(src + i, mask=(offs < n) & (i != 99))
    tl.store(dst + i, x + 1, mask=(offs < n) & (i != 99))


@pytest.mark.parametrize("bad", [-1, 10])
def test_gather_and_scatter_check_each_active_element(bad):
    gen = rng(11)
    src = random_floats(10, gen)
    idx = gen.permutation(10).astype(np.int32)
    dst = np.full(10, np.nan, np.float32)
    _gather_scatter[(1,)](src, idx, dst, 10, 16, debug=True)
    np.testing.assert_array_equal(dst, src + 1)
    idx[3] = 99  # out of bounds, but masked off
    _gather_scatter[(1,)](src, idx, dst, 10, 16, debug=True)
    idx[5] = bad
    with out_of_bounds("load", "src") as info:
        _gather_scatter[(1,)](src, idx, dst, 10, 16, debug=True)
    assert info.value.location.lineno == line_of(_gather_scatter, "x = tl.load")


@naiad.jit
def _scatter(dst, idx, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    i = tl.load(idx + offs, mask=offs < n, other=0)
    tl.store(dst + i, offs.to(tl.float32), mask=offs < n)


def test_scatter_outside_writes_nothing():
    idx = rng(12).permutation(8).astype(np.int32)
    idx[6] = 8
    dst = np.full(8, np.nan, np.float32)
    with out_of_bounds("store", "dst"):
        _scatter[(1,)](dst, idx, 8, 8, debug=True)
    assert np.isnan(dst).all()


# -- the report, and what is not reported
@naiad.jit
def _per_program(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)


def test_the_failing_program_is_named_and_the_process_goes_on():
    gen = rng(13)
    src = random_floats(60, gen)
    dst = np.full(64, np.nan, np.float32)
    with out_of_bounds("load", "src") as info:
        _per_program[(4,)](src, dst, 61, 16, debug=True)
    assert "in program (3, 0, 0)" in str(info.value)
    _per_program[(4,)](src, dst, 60, 16, debug=True)
    np.testing.assert_array_equal(dst[:60], src)


@naiad.jit
def _softmax_rows(x, y, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    v = tl.load(x + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y + row * stride + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)


@naiad.jit
def _wrapped_rows(a, out, M, K, BM: tl.constexpr, BK: tl.constexpr):
    rows = (tl.program_id(0) * BM + tl.arange(0, BM)) % M  # the tutorial matmul's wrap
    ks = tl.arange(0, BK)
    x = tl.load(a + rows[:, None] * K + ks[None, :])
    tl.store(out + tl.program_id(0) * BM * BK + tl.arange(0, BM)[:, None] * BK + ks[None, :], x)


def test_correct_kernels_give_the_same_bits_in_debug_mode():
    gen = rng(14)
    x = random_floats((7, 50), gen)
    results = []
    for debug in (False, True):
        y = np.full_like(x, np.nan)
        _softmax_rows[(7,)](x, y, 50, 50, 64, debug=debug)
        results.append(y)
    np.testing.assert_array_equal(results[0], results[1])
    a = random_floats((10, 4), gen)
    wrapped = []
    for debug in (False, True):
        out = np.full((3 * 4, 4), np.nan, np.float32)
        _wrapped_rows[(3,)](a, out, 10, 4, 4, 4, debug=debug)
        wrapped.append(out)
    np.testing.assert_array_equal(wrapped[0], wrapped[1])
    np.testing.assert_array_equal(wrapped[1], a[np.arange(12) % 10])


def test_wrapped_rows_are_checked_run_by_run():
    a = random_floats((10, 4), rng(16))
    out = np.full((12, 4), np.nan, np.float32)
    with out_of_bounds("load", "a"):
        _wrapped_rows[(3,)](a, out, 11, 4, 4, 4, debug=True)  # row 10 of 10
    _wrapped_rows[(3,)](a, out, 9, 4, 4, 4, debug=True)
    np.testing.assert_array_equal(out, a[np.arange(12) % 9])


@naiad.jit
def _positive(x, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs, mask=offs < n, other=1.0)
    tl.device_assert(v > 0, "v > 0")


def test_device_assert_is_on_in_debug_mode_only():
    x = random_floats(8, rng(15))
    x[5] = -1.0
    _positive[(1,)](x, 8, 8)  # asserts are off outside debug mode
    with pytest.raises(AssertionError, match="v > 0") as info:
        _positive[(1,)](x, 8, 8, debug=True)
    assert info.value.location.lineno == line_of(_positive, "device_assert")


def test_views_are_checked_once_with_or_without_debug_mode():
    src, dst = np.ones(8, np.float32), np.zeros(8, np.float32)
    for debug in (False, True):
        checked = _copy.warmup(src, dst, 0, 8, 8, grid=(1,), target="cpu", debug=debug)
        linalg = checked.asm["linalg"]
        assert linalg.count("naiad.bounds_check") == 2  # one view each
        # Views are checked once, not per element, and no loop counts their failing lanes:
        # the branch taken when a check fails describes the view to the back end.
        assert "scf.for" not in linalg and "call @naiad_bounds_info" not in linalg
        assert linalg.count("call @naiad_bounds_view") == 2
        assert_upstream(linalg)


def test_element_checks_are_upstream_mlir():
    src, idx, dst = np.ones(8, np.float32), np.zeros(8, np.int32), np.zeros(8, np.float32)
    checked = _gather_scatter.warmup(src, idx, dst, 8, 8, grid=(1,), target="cpu", debug=True)
    assert checked.asm["linalg"].count("naiad.bounds_check") == 3  # idx's view, src, dst
    assert_upstream(checked.asm["linalg"])
