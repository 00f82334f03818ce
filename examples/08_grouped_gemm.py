"""Tutorial 08 — grouped GEMM (what Triton's `python/tutorials/08-grouped-gemm.py` shows).

One launch computes a group of matrix products C_g = A_g @ B_g of different sizes. The kernel
gets no tensors of the group as arguments: their addresses, their sizes (M, N, K) and their row
strides sit in device arrays that the host fills, and the kernel loads each address as an int64
and casts it to a pointer (`.to(tl.pointer_type(tl.float16))`). The launch is persistent: a fixed
number of programs (the GPU's multiprocessors, or the CPU's cores) shares the output tiles of all
the products, scheduled on the device without a host round trip.

The kernel and host code are Naiad's own. Every tile of every product is numbered in one
sequence (products in order, tiles row by row in each); program p computes the tiles whose number
is p modulo the number of programs, so in each product it starts at a tile it computes from the
product's first number and steps by the number of programs. Unlike the tutorial, tiles at the
products' edges (M, N and K not multiples of the blocks) are masked, so any sizes work. fp16
operands, fp32 accumulation, fp16 results, checked against float64 NumPy. Run alone:
`python examples/08_grouped_gemm.py`.
"""

import os

import numpy as np
import torch

import naiad as triton
import naiad.language as tl

# The device the tensors are made on: the GPU where one is present, else the CPU.
DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def grouped_matmul_kernel(addresses, shapes, group_size, NUM_PROGRAMS: tl.constexpr,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # addresses: [group_size, 3] int64 (A, B, C); shapes: [group_size, 6] int32
    # (M, N, K, A's row stride, B's row stride, C's row stride). Columns are contiguous.
    pid = tl.program_id(0)
    first_tile = 0  # the number of product g's first tile in the whole sequence
    for g in range(group_size):
        M = tl.load(shapes + g * 6)
        N = tl.load(shapes + g * 6 + 1)
        K = tl.load(shapes + g * 6 + 2)
        tiles_n = tl.cdiv(N, BLOCK_N)
        tiles = tl.cdiv(M, BLOCK_M) * tiles_n
        # The first tile of this product that is this program's: number = pid (mod programs).
        mine = (pid - first_tile % NUM_PROGRAMS + NUM_PROGRAMS) % NUM_PROGRAMS
        if mine < tiles:
            a = tl.load(addresses + g * 3).to(tl.pointer_type(tl.float16))
            b = tl.load(addresses + g * 3 + 1).to(tl.pointer_type(tl.float16))
            c = tl.load(addresses + g * 3 + 2).to(tl.pointer_type(tl.float16))
            stride_a = tl.load(shapes + g * 6 + 3)
            stride_b = tl.load(shapes + g * 6 + 4)
            stride_c = tl.load(shapes + g * 6 + 5)
            for tile in range(mine, tiles, NUM_PROGRAMS):
                rows = (tile // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)
                cols = (tile % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)
                acc = matmul_tile(a, b, rows, cols, M, N, K, stride_a, stride_b,
                                  BLOCK_M, BLOCK_N, BLOCK_K)
                out = c + rows[:, None] * stride_c + cols[None, :]
                tl.store(out, acc.to(tl.float16), mask=(rows[:, None] < M) & (cols[None, :] < N))
        first_tile += tiles


@triton.jit
def matmul_tile(a, b, rows, cols, M, N, K, stride_a, stride_b,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """The fp32 [BLOCK_M, BLOCK_N] block of A @ B at `rows` x `cols`; what lies past M, N or K
    reads as zero."""
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        ks = k + tl.arange(0, BLOCK_K)
        a_block = tl.load(a + rows[:, None] * stride_a + ks[None, :],
                          mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        b_block = tl.load(b + ks[:, None] * stride_b + cols[None, :],
                          mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a_block, b_block, acc)
    return acc


# ---------------------------------------------------------------------------------------------
# Host side
# ---------------------------------------------------------------------------------------------

def default_programs() -> int:
    """One program per multiprocessor on the GPU, per core on the CPU."""
    if DEVICE.type == "cuda":
        return torch.cuda.get_device_properties(DEVICE).multi_processor_count
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def grouped_matmul(group_a, group_b, num_programs=None, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32):
    """[A_g @ B_g for each g] in one launch, for fp16 matrices A_g (M_g, K_g) and B_g (K_g, N_g)
    whose rows may be strided but whose columns are contiguous."""
    group_c, addresses, shapes = [], [], []
    for a, b in zip(group_a, group_b, strict=True):
        (M, K), (b_rows, N) = a.shape, b.shape
        assert b_rows == K and a.stride(1) == 1 and b.stride(1) == 1
        c = torch.empty((M, N), dtype=torch.float16, device=DEVICE)
        group_c.append(c)
        addresses.append([a.data_ptr(), b.data_ptr(), c.data_ptr()])
        shapes.append([M, N, K, a.stride(0), b.stride(0), c.stride(0)])
    programs = num_programs or default_programs()
    grouped_matmul_kernel[(programs,)](
        torch.tensor(addresses, dtype=torch.int64, device=DEVICE),
        torch.tensor(shapes, dtype=torch.int32, device=DEVICE), len(group_a),
        NUM_PROGRAMS=programs, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
    return group_c


def check(sizes=((128, 96, 64), (37, 200, 50), (1, 17, 130), (64, 64, 32)), num_programs=None,
          seed=0):
    """A group of products of the given (M, N, K), one of them read through a view with strided
    rows, against float64 NumPy."""
    generator = torch.Generator(device=DEVICE).manual_seed(seed)
    group_a, group_b = [], []
    for M, N, K in sizes:
        group_a.append(torch.randn((M, K), generator=generator, device=DEVICE).half())
        group_b.append(torch.randn((K, N), generator=generator, device=DEVICE).half())
    group_a[0] = torch.randn((sizes[0][0], sizes[0][2] + 8), generator=generator,
                             device=DEVICE).half()[:, 3:3 + sizes[0][2]]
    max_err = rel_err = 0.0
    for (M, N, K), a, b, c in zip(sizes, group_a, group_b,
                                  grouped_matmul(group_a, group_b, num_programs)):
        ref = a.cpu().double().numpy() @ b.cpu().double().numpy()
        diff = c.cpu().double().numpy() - ref
        rel = float(np.linalg.norm(diff) / np.linalg.norm(ref))
        # fp16 products are exact in fp32; the fp32 sums over K round, then C rounds to fp16.
        bound = 2.0**-11 + 4 * K * 2.0**-24
        assert rel <= bound, f"grouped matmul {M}x{N}x{K}: rel {rel:.2e} > {bound:.1e}"
        max_err, rel_err = max(max_err, float(np.abs(diff).max())), max(rel_err, rel)
    return {"max_err": max_err, "rel_err": rel_err}


def main():
    result = check()
    print(f"grouped_gemm (4 products, one persistent launch): ok "
          f"(max err {result['max_err']:.2e}, rel {result['rel_err']:.1e})")
    return result


if __name__ == "__main__":
    main()
