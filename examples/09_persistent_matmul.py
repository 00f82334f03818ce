"""Tutorial 09 — persistent matmul (what Triton's `python/tutorials/09-persistent-matmul.py` shows).

The same fp16 product C = A @ B five ways, from one program per output tile to programs that stay
resident and walk the tiles, reading their operands through tensor descriptors:

- `naive`: a grid of one program per tile of C, operands read through pointers with masks;
- `persistent`: a grid of as many programs as the device runs at once (the GPU's multiprocessors,
  the CPU's cores); each walks the tiles with `tl.range(first, tiles, step, flatten=True)`,
  which fuses the tile loop and the K loop inside it into one loop, so a GPU pipelines the next
  tile's loads under the current tile's epilogue;
- `descriptor`: persistent, operands read through host-made `TensorDescriptor`s (on Hopper a
  CUtensorMap each, and the loads bulk tensor (TMA) copies); a descriptor zero-fills what lies
  past the tensor's edge and does not write there, so the kernel needs no masks;
- `device descriptor`: the same loop, the descriptors made inside the kernel with
  `tl.make_tensor_descriptor` from pointers, shapes and strides (on the GPU into global scratch
  from the allocator given to `set_allocator`);
- `warp specialized`: the same again, the tile loop asking for `warp_specialize=True` (and not
  flattened): on Hopper, in a kernel of 4 warps (Triton's rule; this variant launches with 4),
  one more warpgroup issues the tensor copies into a ring of buffers while the kernel's warps
  run the dots and the epilogue; elsewhere the loop runs as written.

The kernels and host code are Naiad's own. Tiles are numbered in groups of GROUP_M tile rows so
that consecutive tiles share rows of A and columns of B. Every variant is checked against float64
NumPy at sizes that are not multiples of the blocks. `--bench` times the variants and torch's
matmul on the device. `bench/gpu/persistent_matmul.py` compares Triton's own tutorial kernels on
Naiad and on Triton. Run alone: `python examples/09_persistent_matmul.py [--bench]`.
"""

import os
import sys

import numpy as np
import torch

import naiad as triton
import naiad.language as tl
from naiad.tools.tensor_descriptor import TensorDescriptor

# The device the tensors are made on: the GPU where one is present, else the CPU.
DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def tile_origin(tile, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """The first row and column of C's tile number `tile`: GROUP_M tile rows form a band, whose
    tiles are numbered down each column of tiles before the next column."""
    tiles_n = tl.cdiv(N, BLOCK_N)
    band_tiles = GROUP_M * tiles_n
    band_row = (tile // band_tiles) * GROUP_M
    band_rows = tl.minimum(tl.cdiv(M, BLOCK_M) - band_row, GROUP_M)
    in_band = tile % band_tiles
    return (band_row + in_band % band_rows) * BLOCK_M, (in_band // band_rows) * BLOCK_N


@triton.jit
def masked_block(ptr, rows, cols, n_rows, n_cols):
    """The block of a row-major n_rows x n_cols matrix at `rows` x `cols`, zero outside it."""
    inside = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    return tl.load(ptr + rows[:, None] * n_cols + cols[None, :], mask=inside, other=0.0)


@triton.jit
def pointer_tile(a, b, c, tile, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """Computes and stores C's tile number `tile`, every access through masked pointers."""
    row, col = tile_origin(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
    rows = row + tl.arange(0, BLOCK_M)
    cols = col + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        ks = k + tl.arange(0, BLOCK_K)
        acc = tl.dot(masked_block(a, rows, ks, M, K), masked_block(b, ks, cols, K, N), acc)
    inside = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(c + rows[:, None] * N + cols[None, :], acc.to(c.dtype.element_ty), mask=inside)


@triton.jit
def matmul_kernel(a, b, c, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # One program per tile of C.
    pointer_tile(a, b, c, tl.program_id(0), M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M)


@triton.jit
def matmul_persistent_kernel(a, b, c, M, N, K, PROGRAMS: tl.constexpr, BLOCK_M: tl.constexpr,
                             BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # PROGRAMS programs; program p computes tiles p, p + PROGRAMS, p + 2 PROGRAMS, ...
    tiles = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)
    for tile in tl.range(tl.program_id(0), tiles, PROGRAMS, flatten=True):
        pointer_tile(a, b, c, tile, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M)


@triton.jit
def descriptor_tiles(a_desc, b_desc, c_desc, M, N, K, PROGRAMS: tl.constexpr,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                     GROUP_M: tl.constexpr, WARP_SPECIALIZE: tl.constexpr):
    """This program's tiles of C, persistent as `matmul_persistent_kernel`'s, through
    descriptors of A (M x K), B (K x N) and C (M x N): their edges need no masks."""
    tiles = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)
    for tile in tl.range(tl.program_id(0), tiles, PROGRAMS, flatten=not WARP_SPECIALIZE,
                         warp_specialize=WARP_SPECIALIZE):
        row, col = tile_origin(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, K, BLOCK_K):
            acc = tl.dot(a_desc.load([row, k]), b_desc.load([k, col]), acc)
        c_desc.store([row, col], acc.to(c_desc.dtype))


@triton.jit
def matmul_descriptor_kernel(a_desc, b_desc, c_desc, M, N, K, PROGRAMS: tl.constexpr,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                             GROUP_M: tl.constexpr):
    # The host made the descriptors.
    descriptor_tiles(a_desc, b_desc, c_desc, M, N, K, PROGRAMS, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M,
                     False)


@triton.jit
def matmul_device_descriptor_kernel(a, b, c, M, N, K, PROGRAMS: tl.constexpr,
                                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                                    BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                                    WARP_SPECIALIZE: tl.constexpr = False):
    # The kernel makes the descriptors from pointers, shapes and strides.
    a_desc = tl.make_tensor_descriptor(a, [M, K], [K, 1], [BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b, [K, N], [N, 1], [BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c, [M, N], [N, 1], [BLOCK_M, BLOCK_N])
    descriptor_tiles(a_desc, b_desc, c_desc, M, N, K, PROGRAMS, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M,
                     WARP_SPECIALIZE)


# ---------------------------------------------------------------------------------------------
# Host side
# ---------------------------------------------------------------------------------------------

VARIANTS = ("naive", "persistent", "descriptor", "device descriptor", "warp specialized")


def resident_programs() -> int:
    """As many programs as run at once: one per multiprocessor on the GPU, per core on the CPU."""
    if DEVICE.type == "cuda":
        return torch.cuda.get_device_properties(DEVICE).multi_processor_count
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def default_blocks() -> dict:
    """Tiles for the device: the GPU's fill its tensor cores; the CPU's fit its caches."""
    if DEVICE.type == "cuda":
        return dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3)
    return dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=4)


def matmul(a, b, variant="persistent", programs=None, **blocks):
    """C = A @ B in fp16 for contiguous fp16 A (M, K) and B (K, N), by `variant` (VARIANTS).
    The descriptor variants need K and N multiples of 8 (rows start 16-byte aligned)."""
    (M, K), (b_rows, N) = a.shape, b.shape
    assert b_rows == K and a.is_contiguous() and b.is_contiguous()
    c = torch.empty((M, N), dtype=torch.float16, device=a.device)
    defaults = default_blocks()
    if variant == "warp specialized" and "num_warps" in defaults:
        defaults["num_warps"] = 4  # the loop splits only in a kernel of one warpgroup
    meta = {**defaults, **blocks}
    tiles = triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"])
    programs = min(programs or resident_programs(), tiles)
    if variant == "naive":
        matmul_kernel[(tiles,)](a, b, c, M, N, K, **meta)
    elif variant == "persistent":
        matmul_persistent_kernel[(programs,)](a, b, c, M, N, K, PROGRAMS=programs, **meta)
    elif variant == "descriptor":
        bm, bn, bk = meta["BLOCK_M"], meta["BLOCK_N"], meta["BLOCK_K"]
        descriptors = (TensorDescriptor.from_tensor(a, [bm, bk]),
                       TensorDescriptor.from_tensor(b, [bk, bn]),
                       TensorDescriptor.from_tensor(c, [bm, bn]))
        matmul_descriptor_kernel[(programs,)](*descriptors, M, N, K, PROGRAMS=programs, **meta)
    elif variant in ("device descriptor", "warp specialized"):
        # Scratch for the descriptors the programs make (128 bytes each, on the GPU).
        triton.set_allocator(lambda size, alignment, stream:
                             torch.empty(size, dtype=torch.int8, device=a.device))
        matmul_device_descriptor_kernel[(programs,)](
            a, b, c, M, N, K, PROGRAMS=programs, WARP_SPECIALIZE=variant == "warp specialized",
            **meta)
    else:
        raise ValueError(f"unknown variant {variant!r}; one of {VARIANTS}")
    return c


def check(M=200, N=136, K=72, variants=VARIANTS, programs=None, seed=0, **blocks):
    """Each variant against float64 NumPy; no size is a multiple of its block."""
    generator = torch.Generator(device=DEVICE).manual_seed(seed)
    a = torch.randn((M, K), generator=generator, device=DEVICE).half()
    b = torch.randn((K, N), generator=generator, device=DEVICE).half()
    ref = a.cpu().double().numpy() @ b.cpu().double().numpy()
    max_err = rel_err = 0.0
    for variant in variants:
        diff = matmul(a, b, variant, programs, **blocks).cpu().double().numpy() - ref
        rel = float(np.linalg.norm(diff) / np.linalg.norm(ref))
        # fp16 products are exact in fp32; the fp32 sums over K round, then C rounds to fp16.
        bound = 2.0**-11 + 4 * K * 2.0**-24
        assert rel <= bound, f"{variant} matmul {M}x{N}x{K}: rel {rel:.2e} > {bound:.1e}"
        max_err, rel_err = max(max_err, float(np.abs(diff).max())), max(rel_err, rel)
    return {"max_err": max_err, "rel_err": rel_err}


def bench(size=None):
    """TFLOP/s of each variant and of torch's matmul, size^3 fp16 (4096 on the GPU, 512 on the
    CPU), each the median of `triton.testing.do_bench`."""
    size = size or (4096 if DEVICE.type == "cuda" else 512)
    a = torch.randn((size, size), device=DEVICE).half()
    b = torch.randn((size, size), device=DEVICE).half()
    for name, run in [("torch", lambda: a @ b)] + [
            (variant, lambda variant=variant: matmul(a, b, variant)) for variant in VARIANTS]:
        ms = triton.testing.do_bench(run, return_mode="median")
        print(f"  {name:>17}: {2 * size**3 / ms * 1e-9:9.3f} TFLOP/s ({ms:.3f} ms)")


def main():
    result = check()
    print(f"persistent_matmul ({', '.join(VARIANTS)}): ok "
          f"(max err {result['max_err']:.2e}, rel {result['rel_err']:.1e})")
    return result


if __name__ == "__main__":
    main()
    if "--bench" in sys.argv[1:]:
        bench()
