"""Matrix products: mm, addmm, bmm and baddbmm (torch composes matmul and linear of them), from
one blocked kernel over a batch of (M, K) x (K, N) products.

Each program computes a BLOCK_M x BLOCK_N tile of one product, walking K in BLOCK_K steps with
`tl.dot` (the CPU back end's register-blocked micro-kernel; tensor cores on a GPU), accumulating
in fp32 (fp64 for fp64), then applies alpha and beta * bias and stores in the operands' dtype.
The sizes are specialized as any argument (a multiple of 16 or not): their masks then stay
uniform over 16-byte pieces, so a GPU's loads are 16-byte `cp.async` copies pipelined into the
tensor cores' buffers (not specialized, every element was masked on its own and the K loop
was not pipelined: 0.09 of cuBLAS on an H200).
fp32 operands multiply in full precision ("ieee"), as torch's default. Operands keep their
strides (a transposed weight is read as it lies). Integer products are left to torch.
"""

from __future__ import annotations

import torch

from ... import language as tl
from ...runtime.jit import jit
from ...runtime.tensor_descriptor import TensorDescriptor
from ..allocate import written_to
from ..device_kind import multiprocessors
from ..dtypes import Unsupported, tl_dtype
from ..kept import KeptTable
from ..registry import aten
from .copied_tiles import matmul_copied
from .tile_order import tile_of

__all__ = ["addmm", "baddbmm", "bmm", "mm"]

_HALVES = (torch.float16, torch.bfloat16)  # the tensor cores' products on a GPU
_FLOATS = (*_HALVES, torch.float32, torch.float64)


@jit(do_not_specialize=["alpha", "beta"])
def matmul_kernel(a, b, c, bias, M, N, K, s_ab, s_am, s_ak, s_bb, s_bk, s_bn, s_cb, s_cm, s_cn,
                  s_xb, s_xm, s_xn, alpha, beta, HAS_BIAS: tl.constexpr, SCALED: tl.constexpr,
                  ACC: tl.constexpr, PRECISION: tl.constexpr, EVEN_K: tl.constexpr,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr):  # fmt: skip
    """c[p] = alpha * a[p] @ b[p] + beta * bias[p] for the batch entry p = program_id(1).

    Programs walk the tiles in tile_order's groups of GROUP_M tile rows. Rows and columns past
    the matrix wrap around (`% M`, `% N`) instead of being masked: their values are computed
    and never stored, and the K loop's loads stay unmasked when BLOCK_K divides K (EVEN_K)."""
    p = tl.program_id(1).to(tl.int64)
    tile_m, tile_n = tile_of(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    a_ptrs = a + p * s_ab + (rows % M)[:, None] * s_am + ks[None, :] * s_ak
    b_ptrs = b + p * s_bb + ks[:, None] * s_bk + (cols % N)[None, :] * s_bn
    acc = tl.zeros([BLOCK_M, BLOCK_N], ACC)
    for k in range(0, K, BLOCK_K):
        if EVEN_K:
            a_tile = tl.load(a_ptrs)
            b_tile = tl.load(b_ptrs)
        else:
            a_tile = tl.load(a_ptrs, mask=ks[None, :] < K - k, other=0.0)
            b_tile = tl.load(b_ptrs, mask=ks[:, None] < K - k, other=0.0)
        acc = tl.dot(a_tile, b_tile, acc, input_precision=PRECISION, out_dtype=ACC)
        a_ptrs += BLOCK_K * s_ak
        b_ptrs += BLOCK_K * s_bk
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    if SCALED:
        acc = acc * alpha
    if HAS_BIAS:
        x = tl.load(bias + p * s_xb + rows[:, None] * s_xm + cols[None, :] * s_xn, mask=mask)
        acc += x.to(ACC) * beta
    offsets = p * s_cb + rows[:, None] * s_cm + cols[None, :] * s_cn
    tl.store(c + offsets, acc.to(c.dtype.element_ty), mask=mask)


# Half-precision tiles on a GPU, largest first: (BLOCK_M, BLOCK_N, BLOCK_K, launch options).
_HALF_TILES = (
    (128, 256, 64, {"num_warps": 8, "num_stages": 3}),
    (128, 128, 32, {"num_warps": 4, "num_stages": 4}),
    (128, 64, 64, {"num_warps": 4, "num_stages": 4}),
    (64, 128, 32, {"num_warps": 4, "num_stages": 4}),
)
# The tile of products by tensor copies (copied_tiles.py), where its programs fill the GPU
# (_WAVE_SHARE): bf16 on an H200, us, against the pointer kernel's pick and cuBLAS, b as
# F.linear's W.t() / in rows: 1024x1024x4096 18.8 (21.2, 18.3) / 18.6 (18.8, 17.8);
# 2816x1024x4096 44.3 (51.6, 36.9) / 43.6 (43.8, 41.3); 4096x8192x1024 92.4 (112.1, 91.2) /
# 95.9 (98.0, 96.4); 4096^3 197.5 (235.9, 187.3) / 198.7 (201.6, 201.2). 128x128 tiles ran
# 5-15 % slower, 128x64 and 64x128 50 % slower.
_COPIED_TILE = (128, 256, 64, {"num_warps": 8, "num_stages": 3})
# A tile is large enough while its programs cover this share of the GPU's multiprocessors: one
# wave of 128x256 tiles over 88 of an H200's 132 still beats 176 programs of 128x128 (45 against
# 48 us at 2816x4096x1024, bf16), but 32 of them do not (1024x4096x1024: 44.5 us against 24.7
# with 128 programs of 128x64; torch 17.7).
_WAVE_SHARE = 0.65
# Half-precision tiles where one side of the product is short, by either kernel: an N of at
# most 64 (attention's V and its gradients at head dim 64), then an N or a K of at most 128
# (Q K^T). A 128x256 tile computed 4x the columns such an N has, and at a K of one or two
# steps a program's result dominates its time, so more and smaller programs overlap better.
# bf16 torch.bmm / naiad.ops on an H200 (batch x M x N x K), 128x256x64 -> these:
# 128x512x64x512 0.65 -> 0.94, 128x2048x64x2048 0.50 -> 1.04, 128x512x512x64 0.68 -> 0.76,
# 128x2048x2048x64 0.62 -> 0.71, 16x4096x4096x128 0.61 -> 0.72, 64x2048x128x2048 0.62 -> 0.95.
# At these tiles tensor copies matched the pointer kernel where N or K is 64 (0.94 against 0.95,
# 0.76 against 0.76) and beat it at 128 (0.95 against 0.79, 0.72 against 0.62).
_NARROW_TILE = (128, 64, 64, {"num_warps": 4, "num_stages": 3})
_SHORT_TILE = (128, 128, 32, {"num_warps": 4, "num_stages": 4})


def _short_side_tile(n: int, k: int):
    """_NARROW_TILE or _SHORT_TILE where the product's N or K calls for it, else None."""
    if n <= 64:
        return _NARROW_TILE
    if n <= 128 or k <= 128:
        return _SHORT_TILE
    return None


def _blocks(device, dtype, m: int, n: int, k: int, batch: int) -> tuple[int, int, int, dict]:
    """(BLOCK_M, BLOCK_N, BLOCK_K, launch options). On a GPU, half-precision products take the
    tile for a short side (`_short_side_tile`), or else the largest of Triton's matmul tutorial
    tiles whose programs still fill most of the GPU (`_WAVE_SHARE`), else the smallest; fp32
    and fp64 multiply in full precision, off the tensor cores."""
    if device.type == "cpu":
        return 64, 64, 32, {}
    if dtype in _HALVES:
        short = _short_side_tile(n, k)
        if short is not None:
            return short
        wanted = _WAVE_SHARE * multiprocessors(device)
        for block_m, block_n, block_k, options in _HALF_TILES:
            if _tiles(m, n, block_m, block_n) * batch >= wanted:
                return block_m, block_n, block_k, options
        return _HALF_TILES[-1]
    return 128, 128, 32, {"num_warps": 8, "num_stages": 3}


def _copied_tile(a, b, m: int, n: int, k: int, batch: int):
    """The tile of a product without a bias or a scale by copied_tiles' kernel, or None where
    the pointer kernel takes it. The copies need half precision on a Hopper GPU and operands
    they can read (`copyable_layout`); their tile is the one for a short side of 65 to 128, or
    else _COPIED_TILE where its programs fill the GPU (_WAVE_SHARE). A tensor map is encoded on
    the host for each new operand (2-7 us; attention's operands are new at every step), which
    copies repay only where they speed the GPU: at an N or a K of 64 they did not (above)."""
    if a.device.type != "cuda" or a.dtype not in _HALVES or not (m and n and batch):
        return None  # (an empty result launches nothing: _product skips an empty grid)
    if torch.cuda.get_device_capability(a.device)[0] < 9 or not copyable_layout(a, b, n):
        return None
    short = _short_side_tile(n, k)
    if short is not None:  # by pointers where copies gain nothing (an N or a K of at most 64):
        return None if min(n, k) <= 64 else short  # each new operand's map costs the host
    block_m, block_n = _COPIED_TILE[:2]
    if _tiles(m, n, block_m, block_n) * batch >= _WAVE_SHARE * multiprocessors(a.device):
        return _COPIED_TILE
    return None


def copyable_layout(a, b, n: int) -> bool:
    """Whether tensor copies read `a` and `b` and write the (., n) result of 16-bit elements,
    matrices or batches of them: `a` in rows, `b` in rows or columns (F.linear's `W.t()`), every
    row stride a multiple of 16 bytes (the bases' alignment is keyed per call by the bound
    launch), and a batch's entries apart by such a multiple too, never 0 (a broadcast entry,
    which a tensor map does not describe)."""
    if a.stride(-1) != 1 or 1 not in b.stride()[-2:]:
        return False
    b_rows = b.stride(-2) if b.stride(-1) == 1 else b.stride(-1)
    strides = [a.stride(-2), b_rows, n]
    if a.dim() == 3:
        if not (a.stride(0) and b.stride(0)):
            return False
        strides += [a.stride(0), b.stride(0)]
    return all(stride % 8 == 0 for stride in strides)


def _bind_copied(a, b, shape, tile):
    """copied_tiles.matmul_copied over `tile` (BLOCK_M, BLOCK_N, BLOCK_K, launch options) bound
    to the kind of call of `a` @ `b` (a launch taking the three tensors): its descriptors'
    geometry is the kind's, their tensors the call's. A matrix is described as a batch of one."""
    *_, m, k = a.shape
    p, n = (shape[0] if len(shape) == 3 else 1), shape[-1]
    block_m, block_n, block_k, options = tile
    transposed = b.stride(-1) != 1
    c = torch.empty(shape, dtype=a.dtype, device=a.device)
    (a_p, a_m, _), (b_p, b_k, b_n) = _entries(a), _entries(b)
    descs = (
        TensorDescriptor(a, [p, m, k], [a_p, a_m, 1], [1, block_m, block_k]),
        TensorDescriptor(b, [p, n, k], [b_p, b_n, 1], [1, block_n, block_k])
        if transposed
        else TensorDescriptor(b, [p, k, n], [b_p, b_k, 1], [1, block_k, block_n]),
        TensorDescriptor(c, [p, m, n], [m * n, n, 1], [1, block_m, block_n]),
    )
    names = ("a_desc", "b_desc", "c_desc")
    grid = (_tiles(m, n, block_m, block_n), p)
    return matmul_copied.bind_launch(
        names, grid, *descs, m, n, k, transposed, block_m, block_n, block_k, 8,
        described=names, **options,
    )  # fmt: skip


def _entries(t) -> tuple:
    """A matrix's or a batch's strides as a batch's, a matrix's entry stride the span of its
    rows (a tensor map's strides are multiples of 16 bytes, never 0)."""
    if t.dim() == 3:
        return t.stride()
    rows, columns = t.stride()
    return (max(rows, columns) * max(t.shape), rows, columns)


def _tiles(m: int, n: int, block_m: int, block_n: int) -> int:
    """The programs one (m, n) product takes: its tiles."""
    return -(-m // block_m) * -(-n // block_n)


class _Launch:
    """What a product's launch depends on besides the data (the operands' dtype, device, shapes
    and strides, the bias's, whether alpha scales): the result's shape, the grid, and the
    kernel's arguments after the pointers (sizes and strides, then the constexprs after alpha
    and beta)."""

    __slots__ = ("biased", "bound", "constexprs", "device", "dtype", "factors", "grid", "options",
                 "plain", "shape", "sizes_and_strides")  # fmt: skip

    def __init__(self, rank: int, a, b, bias, scaled: bool):
        if a.dim() != rank or b.dim() != rank:
            raise RuntimeError(f"expected {rank}-dim operands, got {a.dim()}-dim and {b.dim()}-dim")
        if a.dtype not in _FLOATS or b.dtype != a.dtype:
            raise Unsupported(f"matrix products of {a.dtype} and {b.dtype}")
        devices = sorted({str(t.device) for t in (a, b, bias) if t is not None})
        if len(devices) > 1:  # the plan's tensors are keyed by their alignment alone
            raise RuntimeError(f"expected all tensors on one device, found {devices}")
        *batch, m, k = a.shape
        *other_batch, k_b, n = b.shape
        if k_b != k or other_batch != batch:
            shapes = " and ".join("x".join(map(str, t.shape)) for t in (a, b))
            raise RuntimeError(f"the shapes cannot be multiplied ({shapes})")
        self.shape = (*batch, m, n)
        self.dtype, self.device = a.dtype, a.device
        # alpha and beta vary between calls only where the kernel reads them: a product
        # without a bias or a scale binds them as fixed ones, two arguments fewer to key
        self.factors = scaled or bias is not None
        self.biased = bias is not None
        c_strides = (m * n, n, 1)
        x_strides = _batched(bias.expand(self.shape).stride()) if bias is not None else c_strides
        batch_size = batch[0] if batch else 1
        block_m, block_n, block_k, self.options = _blocks(a.device, a.dtype, m, n, k, batch_size)
        self.grid = (_tiles(m, n, block_m, block_n), batch_size)
        self.sizes_and_strides = (m, n, k, *_batched(a.stride()), *_batched(b.stride()),
                                  *c_strides, *x_strides)  # fmt: skip
        acc = tl.float64 if a.dtype == torch.float64 else tl.float32
        precision = "ieee" if a.dtype in (torch.float32, torch.float64) else None
        tl_dtype(a.dtype)
        self.constexprs = (bias is not None, scaled, acc, precision, k % block_k == 0,
                           block_m, block_n, block_k, 8)  # fmt: skip
        self.bound = None  # the kernel's launch bound to this kind of call, at its first run
        self.plain = None  # that launch where it takes the three tensors alone (_product)
        copied = None if scaled or bias is not None else _copied_tile(a, b, m, n, k, batch_size)
        if copied is not None:
            self.plain = _bind_copied(a, b, self.shape, copied)  # tiles by tensor copies

    def run(self, a, b, c, bias, alpha, beta):
        """Launch the kernel for one call of this kind: only the operands and the factors
        change between its calls (JITFunction.bind_launch)."""
        if self.bound is None:
            # the operands' dtypes and device are the plan's (its key), and a product without
            # a bias passes None, fixed, for the pointer the kernel does not read
            tensors = _VARYING if self.biased else _VARYING[:3]
            varying = tensors + ("alpha", "beta") if self.factors else tensors
            self.bound = matmul_kernel.bind_launch(
                varying, self.grid, a, b, c, bias, *self.sizes_and_strides, float(alpha),
                float(beta), *self.constexprs, typed=tensors, **self.options,
            )  # fmt: skip
            if not self.factors and not self.biased:
                self.plain = self.bound
        if self.factors:
            operands = (a, b, c, bias) if self.biased else (a, b, c)
            self.bound(*operands, float(alpha), float(beta))
        elif self.biased:
            self.bound(a, b, c, bias)
        else:
            self.bound(a, b, c)


# The arguments of matmul_kernel that change between the calls of one kind (and alpha and
# beta where the kernel reads them).
_VARYING = ("a", "b", "c", "bias")


def _batched(strides) -> tuple:
    """A matrix's or a batch's strides as a batch's (a matrix is a batch of one)."""
    return strides if len(strides) == 3 else (0, *strides)


# Launches per (operand dtypes, device, shapes and strides, bias's, alpha != 1): a call of a
# known kind only allocates and launches; 1024 kinds.
_LAUNCHES = KeptTable(1024)


def _product(rank: int, a, b, bias=None, alpha=1, beta=1):
    """alpha * a @ b + beta * bias for matrices (M, K) x (K, N) (rank 2) or batches
    (P, M, K) x (P, K, N) (rank 3); bias broadcastable to the result. The operands reach the
    kernel as they are: views made per call cost microseconds each."""
    if bias is not None and beta == 0:
        bias = None
    scaled = alpha != 1
    # every tensor's dtype and device: the bound launch reads them from the plan alone
    biased = None if bias is None else (bias.dtype, bias.device, bias.shape, bias.stride())
    key = (rank, a.dtype, a.device, a.shape, a.stride(), b.dtype, b.device, b.shape, b.stride(),
           scaled, biased)  # fmt: skip
    launch = _LAUNCHES.get(key)
    if launch is None:
        launch = _LAUNCHES.put(key, _Launch(rank, a, b, bias, scaled))
    c = torch.empty(*launch.shape, dtype=launch.dtype, device=launch.device)  # allocate.py's way
    if launch.plain is not None:  # one frame fewer for products without a bias or a scale
        launch.plain(a, b, c)
    elif launch.grid[0] and launch.grid[1]:
        launch.run(a, b, c, bias, alpha, beta)
    return c


@aten("mm.default", "mm.out")
def mm(input, mat2, *, out=None):
    """input @ mat2 for matrices."""
    result = _product(2, input, mat2)
    # (tested here, not in written_to: a call costs each product, out= or not)
    return result if out is None else written_to(result, out)


@aten("addmm.default", "addmm.out")
def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * mat1 @ mat2 (input broadcast to the product's shape)."""
    result = _product(2, mat1, mat2, input, alpha, beta)
    return result if out is None else written_to(result, out)


@aten("addmm_.default")
def addmm_(input, mat1, mat2, *, beta=1, alpha=1):
    return input.copy_(_in_place_product(2, input, mat1, mat2, alpha, beta))


@aten("bmm.default", "bmm.out")
def bmm(input, mat2, *, out=None):
    """A batch of matrix products."""
    result = _product(3, input, mat2)
    return result if out is None else written_to(result, out)


@aten("baddbmm.default", "baddbmm.out")
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * batch1 @ batch2, batch by batch."""
    result = _product(3, batch1, batch2, input, alpha, beta)
    return result if out is None else written_to(result, out)


@aten("baddbmm_.default")
def baddbmm_(input, batch1, batch2, *, beta=1, alpha=1):
    return input.copy_(_in_place_product(3, input, batch1, batch2, alpha, beta))


def _in_place_product(rank: int, input, a, b, alpha, beta):
    """The product an in-place addmm_/baddbmm_ writes into `input`: of `input`'s very shape and
    dtype, as torch requires (it never broadcasts the result into `input`, nor casts it)."""
    if a.dtype != input.dtype:  # as torch: the product is not cast into another kind
        raise RuntimeError(
            f"self and mat2 must have the same dtype, but got {input.dtype} and {a.dtype}"
        )
    result = _product(rank, a, b, input, alpha, beta)
    if result.shape != input.shape:
        raise RuntimeError(
            f"output with shape {list(input.shape)} doesn't match the broadcast shape "
            f"{list(result.shape)}"
        )
    return result
