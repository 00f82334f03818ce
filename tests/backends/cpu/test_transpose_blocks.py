"""2-d transposes on the CPU in square blocks of vectors (codegen/transpose_blocks.py): exact
against NumPy for 8- to 64-bit elements, from a tile read in place (a dynamic row stride) and
from a padded partial tile, and through the element loop where the sizes are smaller than a
block (issue 18: `k.T` was a scalar loop, a ninth of naiad.ops' f32 attention)."""

import numpy as np
import pytest

import naiad
import naiad.language as tl


@naiad.jit
def transpose_tile(x_ptr, out_ptr, n_rows, stride, R: tl.constexpr, C: tl.constexpr):
    """out[C, R] = x[:R, :C].T, rows of x `stride` elements apart; rows past n_rows read 0."""
    rows = tl.arange(0, R)
    cols = tl.arange(0, C)
    tile = tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=rows[:, None] < n_rows,
                   other=0)  # fmt: skip
    tl.store(out_ptr + cols[:, None] * R + rows[None, :], tl.trans(tile))


def _random(rng, shape, dtype):
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.float64, np.int16])
@pytest.mark.parametrize("rows, cols", [(64, 64), (16, 32), (2, 64)])
@pytest.mark.parametrize("partial", [False, True], ids=["whole", "partial"])
def test_transposed_tiles_are_exact(cpu_fresh_cache, dtype, rows, cols, partial):
    rng = np.random.default_rng(rows * 131 + cols)
    stride = cols + 24  # the tile is a window of a wider array, read in place
    x = _random(rng, (rows + 3, stride), dtype)
    n_rows = rows - 1 if partial else rows
    out = _random(rng, (cols, rows), dtype)
    kernel = transpose_tile[(1,)](x, out, n_rows, stride, R=rows, C=cols)
    want = x[:rows, :cols].copy()
    want[n_rows:] = 0
    np.testing.assert_array_equal(out.view(np.uint8), want.T.copy().view(np.uint8))
    if rows >= 8 and cols >= 8:  # a block fits whatever the vector width (at most 8 rows)
        assert "shufflevector" in kernel.asm["llir"]
