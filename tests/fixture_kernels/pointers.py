"""Kernels that make pointers from integers and integers from pointers, as Triton's programs do
(a grouped GEMM over a table of `data_ptr()`s, pointers carried through loops); run by
tests/language/test_pointers_from_integers.py and compiled for the GPU by
tests/backends/nvidia/test_pointers_from_integers_ptxas.py."""

import naiad
import naiad.language as tl


@naiad.jit
def grouped_matmul(
    a_table, b_table, c_table, sizes, lds, group_size, NUM_SM: tl.constexpr,
    BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
):  # fmt: skip
    tile = tl.program_id(0)
    last_end = 0
    for g in range(group_size):
        gm = tl.load(sizes + g * 3)
        gn = tl.load(sizes + g * 3 + 1)
        gk = tl.load(sizes + g * 3 + 2)
        n_tiles_n = tl.cdiv(gn, BN)
        n_tiles = tl.cdiv(gm, BM) * n_tiles_n
        while tile >= last_end and tile < last_end + n_tiles:
            lda = tl.load(lds + g * 3)
            ldb = tl.load(lds + g * 3 + 1)
            ldc = tl.load(lds + g * 3 + 2)
            a_ptr = tl.load(a_table + g).to(tl.pointer_type(tl.float16))
            b_ptr = tl.load(b_table + g).to(tl.pointer_type(tl.float16))
            c_ptr = tl.load(c_table + g).to(tl.pointer_type(tl.float32))
            rm = (tile - last_end) // n_tiles_n * BM + tl.arange(0, BM)
            rn = (tile - last_end) % n_tiles_n * BN + tl.arange(0, BN)
            rk = tl.arange(0, BK)
            a_ptrs = a_ptr + rm[:, None] * lda + rk[None, :]
            b_ptrs = b_ptr + rk[:, None] * ldb + rn[None, :]
            acc = tl.zeros((BM, BN), dtype=tl.float32)
            for _ in range(0, tl.cdiv(gk, BK)):
                acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs))
                a_ptrs += BK
                b_ptrs += BK * ldb
            tl.store(c_ptr + rm[:, None] * ldc + rn[None, :], acc)
            tile += NUM_SM
        last_end = last_end + n_tiles


@naiad.jit
def round_trip(x_ptr, address, ints, out, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(ints + offs, (x_ptr + offs).to(tl.int64))
    # An integer argument below 2**31 is an int32, as in Triton; only 64-bit integers become
    # pointers, and some allocators place arrays that low.
    address = address.to(tl.int64)
    from_argument = tl.cast(address, tl.pointer_type(tl.float32))
    from_block = tl.cast(address + offs * 4, tl.pointer_type(tl.float32), bitcast=True)
    tl.store(out + offs, tl.load(from_argument + offs) + tl.load(from_block))


@naiad.jit
def lanes_of_many_arrays(table, out, N: tl.constexpr, ROWS: tl.constexpr):
    """Lane i of row r reads element i of the array whose address is table[r]; rows are
    summed into out."""
    rows = tl.arange(0, ROWS)
    offs = tl.arange(0, N)
    starts = tl.load(table + rows)
    ptrs = starts.to(tl.pointer_type(tl.float32))[:, None] + offs[None, :]
    values = tl.load(ptrs, mask=offs[None, :] < N - 3, other=0.0)
    tl.store(out + offs, tl.sum(values, axis=0))
    tl.store(ptrs, values * 2.0)  # scatters into every array


@naiad.jit
def walk(table, x_ptr, out, steps, use_table, N: tl.constexpr):
    """A scalar pointer made from an integer (or the argument, by a run-time choice), advanced
    by two nested loops; each step adds a block it reads."""
    if use_table:
        p = tl.load(table).to(tl.pointer_type(tl.float32))
    else:
        p = x_ptr
    acc = tl.zeros((N,), tl.float32)
    offs = tl.arange(0, N)
    for _i in range(steps):
        q = p
        for _j in range(2):
            acc += tl.load(q + offs)
            q += N
        p += 2 * N
    tl.store(out + offs, acc)


@naiad.jit
def through(table, out, N: tl.constexpr):
    p = tl.load(table).to(tl.pointer_type(tl.float32))
    tl.store(out + tl.arange(0, N), tl.load(p + tl.arange(0, N)))


@naiad.jit
def narrow(x_ptr, out):
    tl.store(out, x_ptr.to(tl.int32))
