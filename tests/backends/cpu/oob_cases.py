"""Out-of-bounds kernels for tests/backends/cpu/test_out_of_bounds.py, run in a process of
their own: before bounds checks were always on, 8 of them killed the process (SIGSEGV) and the
others silently read or wrote the memory next to their arrays.

    python oob_cases.py [CASE ...]

runs each case (all by default) in order, in this one process, and prints one JSON object per
case: its name, the class and message of the error the launch raised (None: none), whether
the memory around the arrays stayed untouched, and whether the same kernel, launched right
after with in-bounds arguments, computed the right values (the process stays usable).
"""

from __future__ import annotations

import ctypes
import json
import mmap
import sys

import numpy as np
import torch

import naiad
import naiad.language as tl

FAR = 2**40  # elements: far outside any allocation


# -- kernels ------------------------------------------------------------------------------------
@naiad.jit
def copy_unmasked(src, dst, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs))  # the forgotten mask


@naiad.jit
def add_unmasked(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + tl.load(y_ptr + offs))


@naiad.jit
def store_block(dst, start, BLOCK: tl.constexpr):
    offs = start + tl.arange(0, BLOCK)
    tl.store(dst + offs, offs.to(tl.float32))


@naiad.jit
def gather(src, idx, dst, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + tl.load(idx + offs)))


@naiad.jit
def scatter(dst, idx, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(dst + tl.load(idx + offs), offs.to(tl.float32))


@naiad.jit
def histogram(bins, idx, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.atomic_add(bins + tl.load(idx + offs), 1)


@naiad.jit
def claim(flags, i):
    tl.atomic_cas(flags + i, 0, 1)


@naiad.jit
def shifted_load(x_ptr, out, shift, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x_ptr - shift + offs))


@naiad.jit
def scalar_copy(src, dst, i):
    tl.store(dst, tl.load(src + i))


@naiad.jit
def tile_copy(src, dst, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)[:, None]
    cols = tl.arange(0, BN)[None, :]
    tl.store(dst + rows * N + cols, tl.load(src + rows * N + cols), mask=cols < N)


@naiad.jit
def block_pointer_copy(src, dst, M, N, BM: tl.constexpr, BN: tl.constexpr):
    row0 = tl.program_id(0) * BM
    s = tl.make_block_ptr(src, (M, N), (N, 1), (row0, 0), (BM, BN), (1, 0))
    d = tl.make_block_ptr(dst, (M, N), (N, 1), (row0, 0), (BM, BN), (1, 0))
    tl.store(d, tl.load(s))  # no boundary_check


@naiad.jit
def row_sums(x_ptr, out, K, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for k in range(0, K, BLOCK):  # K not a multiple of BLOCK, and no mask
        acc += tl.load(x_ptr + row * K + k + tl.arange(0, BLOCK))
    tl.store(out + row, tl.sum(acc, axis=0))


@naiad.jit
def through_table(table, x, out, n, BLOCK: tl.constexpr):
    p = tl.load(table).to(tl.pointer_type(tl.float32))  # as Triton's grouped GEMM does
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(p + offs, mask=offs < n), mask=offs < n)


# -- memory with guards around it ----------------------------------------------------------
class Guarded:
    """An array of `n` elements in the middle of an anonymous mapping whose other bytes are a
    known pattern, so that a case can tell whether a kernel wrote next to it. A NumPy array
    made over a mapping is its own storage: the bytes around it are outside its extent.
    `at_page_end` puts its last element at the end of a page whose next page is unreadable
    (any read past it faults)."""

    def __init__(self, n, dtype=np.float32, at_page_end=False, seed=0):
        dtype = np.dtype(dtype)
        page = mmap.PAGESIZE
        nbytes = n * dtype.itemsize
        pages = 2 + -(-nbytes // page)  # a guard page at least before and after
        self._map = mmap.mmap(-1, (pages + 1) * page)
        self._pattern = 0x50 + seed  # arrays of different seeds differ around them too
        self._map.write(bytes([self._pattern]) * len(self._map))
        offset = (pages - 1) * page - nbytes if at_page_end else page + (page - nbytes % page) // 2
        self.array = np.frombuffer(self._map, dtype, n, offset)
        self.array[:] = np.random.default_rng(seed).integers(1, 100, n).astype(dtype)
        self._bytes = np.frombuffer(self._map, np.uint8)
        self._outside = np.ones(len(self._map), bool)
        self._outside[offset : offset + nbytes] = False
        if at_page_end:
            self._outside[(pages - 1) * page :] = False
            base = ctypes.addressof(ctypes.c_char.from_buffer(self._map))
            libc = ctypes.CDLL(None, use_errno=True)
            libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
            if libc.mprotect(base + (pages - 1) * page, 2 * page, 0) != 0:
                raise OSError(ctypes.get_errno(), "mprotect")

    def untouched(self) -> bool:
        return bool((self._bytes[self._outside] == self._pattern).all())


# -- the cases ------------------------------------------------------------------------------------
def mask_numpy():
    """The forgotten mask on NumPy arrays: 1000 elements, one block of 1024."""
    src, dst = Guarded(1000), Guarded(1000, seed=1)
    yield lambda: copy_unmasked[(1,)](src.array, dst.array, 1024), (src, dst)
    n = 1024
    a, b = np.arange(n, dtype=np.float32), np.zeros(n, np.float32)
    copy_unmasked[(1,)](a, b, 1024)
    yield np.array_equal(a, b)


def mask_torch():
    """The forgotten mask on torch CPU tensors: 2^22 + 1 elements (torch maps such tensors
    whole: the last block of 4096 reads and writes 16 KiB past the mapping)."""
    n = 2**22 + 1
    x, y = torch.rand(n), torch.rand(n)
    out = torch.empty(n)
    grid = (triton_cdiv(n, 4096),)
    yield lambda: add_unmasked[grid](x, y, out, 4096), ()
    n = 4096
    x, y, out = torch.rand(n), torch.rand(n), torch.empty(n)
    add_unmasked[(4,)](x, y, out, 1024)
    yield torch.equal(out, x + y)


def mask_torch_small():
    """The forgotten mask on small torch tensors (the caching allocator's neighbours)."""
    x, y, out = torch.rand(100), torch.rand(100), torch.empty(100)
    yield lambda: add_unmasked[(1,)](x, y, out, 128), ()
    x, y, out = torch.rand(128), torch.rand(128), torch.empty(128)
    add_unmasked[(1,)](x, y, out, 128)
    yield torch.equal(out, x + y)


def page_end_read():
    """A read one block past an array whose next page is unreadable."""
    src, dst = Guarded(1000, at_page_end=True), Guarded(1024)
    yield lambda: copy_unmasked[(1,)](src.array, dst.array, 1024), (dst,)
    a = Guarded(1024, at_page_end=True)
    b = np.zeros(1024, np.float32)
    copy_unmasked[(1,)](a.array, b, 1024)
    yield np.array_equal(a.array, b)


def store_past_end():
    """A store of 16 elements starting 8 before the end."""
    dst = Guarded(100)
    yield lambda: store_block[(1,)](dst.array, 92, 16), (dst,)
    store_block[(1,)](dst.array, 84, 16)
    yield bool((dst.array[84:] == np.arange(84, 100)).all())


def store_before_start():
    """A store of 16 elements starting 4 before the first."""
    dst = Guarded(100)
    yield lambda: store_block[(1,)](dst.array, -4, 16), (dst,)
    store_block[(1,)](dst.array, 0, 16)
    yield bool((dst.array[:16] == np.arange(16)).all())


def far_gather():
    src, dst = Guarded(64), Guarded(64, seed=1)
    idx = np.arange(64, dtype=np.int64)
    idx[17] = FAR
    yield lambda: gather[(1,)](src.array, idx, dst.array, 64), (src, dst)
    yield _gather_works()


def negative_gather():
    src, dst = Guarded(64), Guarded(64, seed=1)
    idx = np.arange(64, dtype=np.int32)
    idx[5] = -1
    yield lambda: gather[(1,)](src.array, idx, dst.array, 64), (src, dst)
    yield _gather_works()


def _gather_works() -> bool:
    src, dst = np.random.default_rng(2).random(64).astype(np.float32), np.zeros(64, np.float32)
    idx = np.random.default_rng(3).permutation(64).astype(np.int32)
    gather[(1,)](src, idx, dst, 64)
    return bool(np.array_equal(dst, src[idx]))


def far_scatter():
    dst = Guarded(64)
    idx = np.arange(64, dtype=np.int64)
    idx[40] = FAR
    yield lambda: scatter[(1,)](dst.array, idx, 64), (dst,)
    out = np.zeros(64, np.float32)
    scatter[(1,)](out, np.arange(64)[::-1].copy(), 64)
    yield bool(np.array_equal(out, np.arange(64)[::-1]))


def far_atomic():
    bins = Guarded(16, np.int32)
    idx = np.zeros(32, np.int32)
    idx[3] = 2**31 - 1
    yield lambda: histogram[(1,)](bins.array, idx, 32), (bins,)
    counts = np.zeros(16, np.int32)
    histogram[(1,)](counts, np.arange(32, dtype=np.int32) % 16, 32)
    yield bool((counts == 2).all())


def far_compare_and_swap():
    flags = Guarded(8, np.int32)
    yield lambda: claim[(1,)](flags.array, -FAR), (flags,)
    ok = np.zeros(8, np.int32)
    claim[(1,)](ok, 3)
    yield bool(ok[3] == 1 and ok.sum() == 1)


def negative_pointer_offset():
    """`x_ptr - 2**30`, as a kernel that forgot which way an offset goes."""
    x, out = Guarded(64), Guarded(64, seed=1)
    yield lambda: shifted_load[(1,)](x.array, out.array, 2**30, 64), (x, out)
    a, b = np.arange(128, dtype=np.float32), np.zeros(64, np.float32)
    shifted_load[(1,)](a[64:], b, 64, 64)
    yield bool(np.array_equal(a[:64], b))


def scalar_past_end():
    src, dst = Guarded(10), Guarded(1, seed=1)
    yield lambda: scalar_copy[(1,)](src.array, dst.array, FAR), (src, dst)
    scalar_copy[(1,)](src.array, dst.array, 9)
    yield bool(dst.array[0] == src.array[9])


def rows_past_end():
    """A 2-D block of 8 rows over a 6 x 16 matrix: the rows are not masked."""
    src, dst = Guarded(6 * 16), Guarded(6 * 16, seed=1)
    yield lambda: tile_copy[(1,)](src.array, dst.array, 16, 8, 16), (src, dst)
    a, b = np.arange(8 * 16, dtype=np.float32), np.zeros(8 * 16, np.float32)
    tile_copy[(1,)](a, b, 16, 8, 16)
    yield bool(np.array_equal(a, b))


def block_pointer_past_end():
    src, dst = Guarded(6 * 16), Guarded(6 * 16, seed=1)
    yield lambda: block_pointer_copy[(1,)](src.array, dst.array, 6, 16, 8, 16), (src, dst)
    a, b = np.arange(8 * 16, dtype=np.float32), np.zeros(8 * 16, np.float32)
    block_pointer_copy[(1,)](a, b, 8, 16, 8, 16)
    yield bool(np.array_equal(a, b))


def loop_past_end():
    """Row sums over K = 100 in blocks of 64, unmasked: each row reads 28 elements past it."""
    x, out = Guarded(4 * 100), Guarded(4, seed=1)
    yield lambda: row_sums[(4,)](x.array, out.array, 100, 64), (out,)
    a, s = np.ones(4 * 128, np.float32), np.zeros(4, np.float32)
    row_sums[(4,)](a, s, 128, 64)
    yield bool((s == 128).all())


def table_pointer_past_end():
    """A pointer loaded from a table of addresses, pointing into argument `x`, read past x."""
    x, out = Guarded(16), Guarded(64, seed=1)
    table = np.array([x.array.ctypes.data], np.int64)
    yield lambda: through_table[(1,)](table, x.array, out.array, 40, 64), (out,)
    through_table[(1,)](table, x.array, out.array, 16, 64)
    yield bool(np.array_equal(out.array[:16], x.array))


def triton_cdiv(a, b):
    return -(-a // b)


CASES = {
    f.__name__: f
    for f in (
        mask_numpy,
        mask_torch,
        mask_torch_small,
        page_end_read,
        store_past_end,
        store_before_start,
        far_gather,
        negative_gather,
        far_scatter,
        far_atomic,
        far_compare_and_swap,
        negative_pointer_offset,
        scalar_past_end,
        rows_past_end,
        block_pointer_past_end,
        loop_past_end,
        table_pointer_past_end,
    )
}


def run(name: str) -> dict:
    steps = CASES[name]()
    launch, guarded = next(steps)
    error = None
    try:
        launch()
    except Exception as e:  # the report says which
        error = e
    untouched = all(g.untouched() for g in guarded)
    usable = next(steps)
    return {
        "case": name,
        "error": None if error is None else type(error).__name__,
        "message": None if error is None else str(error),
        "untouched": untouched,
        "usable": bool(usable),
    }


def main(names) -> None:
    for name in names or CASES:
        print(json.dumps(run(name)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
