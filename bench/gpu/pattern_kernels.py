"""Memory-bound patterns beyond the tutorials, for bench/gpu/patterns.py: a scan, a column
reduction carried through a loop, a tiled transposition, an argmax, an fp8 cast, unpacking
pairs with reshape and split, an RMS norm, a histogram, a sort, a gather, int8
dequantization and a masked tail. Written with `naiad` imports, as the examples are; the bench
compiles this file through Triton too, its two imports swapped."""

import naiad as triton
import naiad.language as tl


@triton.jit
def row_cumsum(x_ptr, y_ptr, N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + row * N + offs)
    tl.store(y_ptr + row * N + offs, tl.cumsum(x, axis=0))


@triton.jit
def column_sums(x_ptr, y_ptr, M, N: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    cols = tl.program_id(0) * BN + tl.arange(0, BN)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for m in range(0, M, BM):
        rows = m + tl.arange(0, BM)
        acc += tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    tl.store(y_ptr + cols, tl.sum(acc, axis=0))


@triton.jit
def transpose(x_ptr, y_ptr, M, N, B: tl.constexpr):
    rm = tl.program_id(0) * B + tl.arange(0, B)
    rn = tl.program_id(1) * B + tl.arange(0, B)
    tile = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    tl.store(y_ptr + rn[:, None] * M + rm[None, :], tl.trans(tile))


@triton.jit
def row_argmax(x_ptr, y_ptr, N: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * N + tl.arange(0, N))
    tl.store(y_ptr + row, tl.argmax(x, axis=0))


@triton.jit
def to_fp8(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask).to(tl.float8e4nv), mask=mask)


@triton.jit
def unpack_pairs(x_ptr, a_ptr, b_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a, b = tl.split(tl.reshape(tl.load(x_ptr + offs), (BLOCK // 2, 2)))
    half = tl.program_id(0) * (BLOCK // 2) + tl.arange(0, BLOCK // 2)
    tl.store(a_ptr + half, a)
    tl.store(b_ptr + half, b)


@triton.jit
def rms_norm(x_ptr, w_ptr, y_ptr, N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + row * N + offs).to(tl.float32)
    scale = tl.rsqrt(tl.sum(x * x, axis=0) / N + 1e-6)
    w = tl.load(w_ptr + offs).to(tl.float32)
    tl.store(y_ptr + row * N + offs, (x * scale * w).to(tl.float16))


@triton.jit
def histogram(x_ptr, y_ptr, BLOCK: tl.constexpr, BINS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(y_ptr + tl.arange(0, BINS), tl.histogram(tl.load(x_ptr + offs), BINS))


@triton.jit
def sort_rows(x_ptr, y_ptr, N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, N)
    tl.store(y_ptr + row * N + offs, tl.sort(tl.load(x_ptr + row * N + offs)))


@triton.jit
def gather_rows(x_ptr, idx_ptr, y_ptr, N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + row * N + offs)
    idx = tl.load(idx_ptr + row * N + offs)
    tl.store(y_ptr + row * N + offs, tl.gather(x, idx, axis=0))


@triton.jit
def dequantize(q_ptr, scale_ptr, y_ptr, N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, N)
    q = tl.load(q_ptr + row * N + offs).to(tl.float32)
    tl.store(y_ptr + row * N + offs, (q * tl.load(scale_ptr + row)).to(tl.bfloat16))


@triton.jit
def masked_scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask, other=0.0) * 3.0, mask=mask)
