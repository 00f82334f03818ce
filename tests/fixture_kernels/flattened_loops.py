"""Kernels with `tl.range(..., flatten=True)` nests, shared by the value tests
(tests/language/test_flattened_loops.py) and the checks of the loops the CPU and NVIDIA back
ends compile (tests/backends/cpu/test_flattened_loop_shape.py,
tests/backends/nvidia/test_flattened_loops_ptxas.py), with the values the nests give."""

import numpy as np

import naiad
import naiad.language as tl


def numbered_expected(rows: int, cols: int) -> np.ndarray:
    """The 32 x 32 grid `numbered` leaves in zeros."""
    grid = np.zeros((32, 32), np.int32)
    for row in range(rows):
        for col in range(cols):
            grid[row, col] = row * max(cols, 0) + col + 1
    return grid


def dependent_expected(n: int, ordered: bool) -> tuple[np.ndarray, np.ndarray]:
    """The rows and columns `dependent` lists into two 128-long arrays of -1."""
    rows, cols = np.full(128, -1, np.int32), np.full(128, -1, np.int32)
    at = 0
    for row in range(n):
        for col in range(2 * row, 3 * row + 1 if ordered else 3 * row - 2):
            rows[at], cols[at] = row, col
            at += 1
    return rows, cols


@naiad.jit
def numbered(rows, cols, grid_ptr):
    """Number the cells of a rows x cols window of a 32-wide grid 1, 2, ... row by row (the
    nest of Triton's first flatten test, with its own inner trip count)."""
    counter = 1
    for row in tl.range(0, rows, flatten=True):
        for col in tl.range(0, cols):
            tl.store(grid_ptr + row * 32 + col, counter)
            counter += 1


@naiad.jit
def dependent(n, rows_ptr, cols_ptr, ORDERED: tl.constexpr):
    """List the (row, col) pairs of a triangle whose row r spans columns 2r to 3r (ORDERED:
    assumed non-empty, as Triton's dependent flatten test) or 2r to 3r - 3 (the first rows
    empty)."""
    at = 0
    for row in tl.range(0, n, flatten=True):
        first = 2 * row
        if ORDERED:
            stop = first + row + 1
            tl.assume(stop > first)
        else:
            stop = first + row - 2
        for col in tl.range(first, stop):
            tl.store(rows_ptr + at, row)
            tl.store(cols_ptr + at, col)
            at += 1


@naiad.jit
def row_blocks(x_ptr, y_ptr, out_ptr, rows, cols, BLOCK: tl.constexpr):
    """Per row: a scale loaded before the inner loop, the row's blocks summed by pointers the
    inner loop advances, and the total stored after it."""
    offs = tl.arange(0, BLOCK)
    for r in tl.range(0, rows, flatten=True):
        scale = tl.load(y_ptr + r)
        ptrs = x_ptr + r * cols + offs
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for c in tl.range(0, cols, BLOCK):
            acc += tl.load(ptrs, mask=c + offs < cols, other=0.0) * scale
            ptrs += BLOCK
        tl.store(out_ptr + r * BLOCK + offs, acc)


@naiad.jit
def persistent_matmul(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    PROGRAMS: tl.constexpr,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
):
    """C = A @ B, each program taking every PROGRAMS-th output tile: a flattened nest of tiles and
    K steps, whose pointer blocks into A and B start outside the nest once invariant code leaves
    it, and whose accumulator is carried from the prologue through the K steps to the store."""
    tiles_n = tl.cdiv(N, BN)
    k_steps = tl.cdiv(K, BK)
    for tile in tl.range(tl.program_id(0), tl.cdiv(M, BM) * tiles_n, PROGRAMS, flatten=True):
        rows = (tile // tiles_n) * BM + tl.arange(0, BM)
        cols = (tile % tiles_n) * BN + tl.arange(0, BN)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for step in range(k_steps):
            ks = step * BK + tl.arange(0, BK)
            a = tl.load(
                a_ptr + rows[:, None] * K + ks[None, :],
                mask=(rows[:, None] < M) & (ks[None, :] < K),
                other=0.0,
            )
            b = tl.load(
                b_ptr + ks[:, None] * N + cols[None, :],
                mask=(ks[:, None] < K) & (cols[None, :] < N),
                other=0.0,
            )
            acc = tl.dot(a, b, acc)
        inside = (rows[:, None] < M) & (cols[None, :] < N)
        tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=inside)


@naiad.jit
def persistent_matmul_offsets(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    PROGRAMS: tl.constexpr,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
):
    """`persistent_matmul` in tutorial 09's shape: the tile's rows and columns clamped into the
    matrices by `tl.where` (and said contiguous, as the tutorial says) before the K loop, which
    alone reads them (fused, they are carried from the branch that starts a tile), and the
    epilogue numbering its tile again from a counter of its own."""
    tiles_n = tl.cdiv(N, BN)
    k_steps = tl.cdiv(K, BK)
    tile_c = tl.program_id(0) - PROGRAMS
    for tile in tl.range(tl.program_id(0), tl.cdiv(M, BM) * tiles_n, PROGRAMS, flatten=True):
        rows = (tile // tiles_n) * BM + tl.arange(0, BM)
        cols = (tile % tiles_n) * BN + tl.arange(0, BN)
        rows = tl.max_contiguous(tl.multiple_of(tl.where(rows < M, rows, 0), BM), BM)
        cols = tl.max_contiguous(tl.multiple_of(tl.where(cols < N, cols, 0), BN), BN)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for step in range(k_steps):
            ks = step * BK + tl.arange(0, BK)
            a = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=ks[None, :] < K, other=0.0)
            b = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=ks[:, None] < K, other=0.0)
            acc = tl.dot(a, b, acc)
        tile_c += PROGRAMS
        rows_c = (tile_c // tiles_n) * BM + tl.arange(0, BM)
        cols_c = (tile_c % tiles_n) * BN + tl.arange(0, BN)
        inside = (rows_c[:, None] < M) & (cols_c[None, :] < N)
        tl.store(c_ptr + rows_c[:, None] * N + cols_c[None, :], acc, mask=inside)
