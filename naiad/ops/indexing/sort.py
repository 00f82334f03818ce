"""sort, argsort and topk along one dim, each row sorted by one program with the language's
bitonic sort (tl.sort).

tl.sort orders values only, so each element becomes one key that orders like the pair (value,
position): an int64 of two 32-bit halves, or for 16-bit values an int32 of two 16-bit halves
(half the work in every compare-and-swap). The high half is the value as an integer that orders
as the value does (a float's bits with the magnitude bits flipped where it is negative; NaN made
one positive NaN so that it sorts last, and -0.0 made +0.0, as torch's sorts hold them),
negated bitwise for a descending sort; the low half is the position. Equal values then keep
their order (a stable sort either way); the sorted keys' low halves are the indices and their
high halves, turned back, the values (a NaN's or a zero's, whose bits the key does not keep,
read again from the row).
Rows of up to MAX_ROW elements. int64 values are sorted where they all fit an int32 (read on the
host first; within int16, as 16-bit values); others, and fp64, do not fit a half and go to torch.
"""

from __future__ import annotations

import torch

from ... import language as tl
from ...runtime.jit import jit
from ..allocate import written_to
from ..dtypes import Unsupported, tl_dtype
from ..reduce.rows import in_dim_order, normalized_dims
from ..registry import aten

__all__ = ["argsort", "sort", "topk"]

MAX_ROW = 4096
# A topk narrows the row to BLOCK_K groups of BLOCK_K first where the row holds at least this
# many times BLOCK_K * BLOCK_K keys.
GROUPED_FROM = 4
_KEYED = (
    torch.float32, torch.float16, torch.bfloat16,
    torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool,
)  # fmt: skip


@jit
def _order_key(v, FLOAT: tl.constexpr, KEY_BITS: tl.constexpr):
    """An int32 within KEY_BITS signed bits that orders as the value `v` does (NaN above +inf;
    -0.0 equal to +0.0, as torch's sorts hold them, so that a stable sort keeps the two zeros
    in their order): a float's bits (16 of them for fp16 and bf16) with the magnitude flipped
    where negative."""
    if FLOAT:
        if KEY_BITS == 16:
            bits = v.to(tl.int16, bitcast=True).to(tl.int32)
        else:
            bits = v.to(tl.float32).to(tl.int32, bitcast=True)
        top = (1 << (KEY_BITS - 1)) - 1  # above +inf, a NaN of either width
        bits = tl.where(v != v, top, tl.where(v == 0, 0, bits))
        return bits ^ ((bits >> 31) & top)
    return v.to(tl.int32)


@jit
def _packed(v, cols, inside, FLOAT: tl.constexpr, DESCENDING: tl.constexpr,
            KEY_BITS: tl.constexpr):  # fmt: skip
    """Elements `v` at positions `cols` as keys of twice KEY_BITS (int32 for 16-bit values,
    int64 otherwise): the order key in the high half, the position in the low half; where not
    `inside`, the largest key."""
    key = _order_key(v, FLOAT, KEY_BITS)
    if DESCENDING:
        key = ~key
    if KEY_BITS == 16:
        return tl.where(inside, (key << 16) | cols, 0x7FFFFFFF)
    packed = (key.to(tl.int64) << 32) | cols.to(tl.int64)
    return tl.where(inside, packed, 0x7FFFFFFFFFFFFFFF)


@jit
def _value_of(first, ptrs, kept, values, FLOAT: tl.constexpr, DESCENDING: tl.constexpr,
              KEY_BITS: tl.constexpr):  # fmt: skip
    """The values (of `values`' dtype) of sorted keys `first`, read back from their high halves
    (the order key is its own inverse on the bits), so that only a NaN or a zero, whose key
    does not keep its bits or sign, is read again from the row (`ptrs`, at its position): the
    others need no gather from memory."""
    key = (first >> KEY_BITS).to(tl.int32)
    if DESCENDING:
        key = ~key
    if not FLOAT:
        return key.to(values.dtype.element_ty)
    bits = key ^ ((key >> 31) & ((1 << (KEY_BITS - 1)) - 1))
    if KEY_BITS == 16:
        f = bits.to(tl.int16).to(values.dtype.element_ty, bitcast=True)
    else:
        f = bits.to(tl.float32, bitcast=True).to(values.dtype.element_ty)
    lost = (f != f) | (f == 0)
    return tl.where(lost, tl.load(ptrs, mask=kept & lost), f)


@jit
def _smallest_by_groups(x, row, N, s_row, s_col, packed, FLOAT: tl.constexpr,
                        DESCENDING: tl.constexpr, KEY_BITS: tl.constexpr, BLOCK: tl.constexpr,
                        BLOCK_K: tl.constexpr):  # fmt: skip
    """The BLOCK_K smallest of the row's keys `packed`, sorted, found among a few groups of
    BLOCK_K keys: each of them lies in one of the BLOCK_K groups of least minimum (were its group
    not among those, their BLOCK_K minima, each below its own minimum, would rank it past
    BLOCK_K; keys are unique). So a min over the row, then tl.topk on the group minima and on
    those groups' BLOCK_K * BLOCK_K keys, instead of tl.topk's network over the whole row."""
    minima = tl.min(tl.reshape(packed, [BLOCK // BLOCK_K, BLOCK_K]), 1)
    least = tl.topk(minima, BLOCK_K, descending=False)
    groups = (least & ((1 << KEY_BITS) - 1)).to(tl.int32) // BLOCK_K
    cols = tl.reshape(groups[:, None] * BLOCK_K + tl.arange(0, BLOCK_K)[None, :],
                      [BLOCK_K * BLOCK_K])  # fmt: skip
    inside = cols < N
    v = tl.load(x + row * s_row + cols * s_col, mask=inside, other=0)
    candidates = _packed(v, cols, inside, FLOAT, DESCENDING, KEY_BITS)
    return tl.topk(candidates, BLOCK_K, descending=False)


@jit(do_not_specialize=["N", "K"])
def _sort_kernel(x, values, indices, N, K, s_row, s_col, FLOAT: tl.constexpr,
                 DESCENDING: tl.constexpr, BLOCK: tl.constexpr, BLOCK_K: tl.constexpr,
                 GROUPED: tl.constexpr, FULL: tl.constexpr, KEY_BITS: tl.constexpr):  # fmt: skip
    """The first K keys of each row in order: all BLOCK sorted, or where BLOCK_K < BLOCK (a
    topk) only the BLOCK_K smallest, kept by tl.topk, which merges instead of sorting all
    (GROUPED: first narrowed to a few groups of the row). FULL: N is BLOCK and K is BLOCK_K,
    so loads and stores need no masks (and move 16 bytes a thread at a time on a GPU)."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    inside = (cols < N) | FULL
    v = tl.load(x + row * s_row + cols * s_col, mask=inside, other=0)
    packed = _packed(v, cols, inside, FLOAT, DESCENDING, KEY_BITS)
    if GROUPED:
        first = _smallest_by_groups(x, row, N, s_row, s_col, packed, FLOAT, DESCENDING,
                                    KEY_BITS, BLOCK, BLOCK_K)  # fmt: skip
        cols = tl.arange(0, BLOCK_K)
    elif BLOCK_K < BLOCK:
        first = tl.topk(packed, BLOCK_K, descending=False)
        cols = tl.arange(0, BLOCK_K)
    else:
        first = tl.sort(packed)
    position = (first & ((1 << KEY_BITS) - 1)).to(tl.int64)
    kept = (cols < K) | FULL
    tl.store(indices + row * K + cols, position, mask=kept)
    picked = _value_of(first, x + row * s_row + position * s_col, kept, values, FLOAT,
                       DESCENDING, KEY_BITS)  # fmt: skip
    tl.store(values + row * K + cols, picked, mask=kept)


def _key_bits(input) -> int | None:
    """The bits of the order key (16: an int32 key; 32: an int64 one): 16 for 16-bit and
    narrower dtypes and for int64 values all within int16 (labels, expert ids); 32 for the
    other keyed dtypes and int64 values within int32 (both read on the host); None for others."""
    if input.dtype in _KEYED:
        return 16 if input.element_size() <= 2 else 32
    if input.dtype != torch.int64:
        return None
    if not input.numel():
        return 16
    low, high = (int(v) for v in torch.aminmax(input))
    for bits in (16, 32):
        if low >= -(2 ** (bits - 1)) and high < 2 ** (bits - 1):
            return bits
    return None


def _sorted_rows(input, dim, k, descending):
    """(values, indices) of the first k of each row along `dim` in sorted order."""
    key_bits = _key_bits(input)
    if key_bits is None:
        raise Unsupported(f"sort of {input.dtype}")
    tl_dtype(input.dtype)
    (dim,) = normalized_dims(dim, max(input.dim(), 1))
    moved = input.movedim(dim, -1) if input.dim() else input.reshape(1)
    n = moved.shape[-1]
    if n > MAX_ROW:
        raise Unsupported(f"sort of rows longer than {MAX_ROW}")
    shape = [*moved.shape[:-1], k]
    values = torch.empty(shape, dtype=input.dtype, device=input.device)
    indices = torch.empty(shape, dtype=torch.int64, device=input.device)
    if values.numel():
        rows = moved.reshape(-1, n)
        block = 1 << max(n - 1, 0).bit_length()
        block_k = 1 << max(k - 1, 0).bit_length()
        is_float = input.dtype.is_floating_point
        # The CPU's network gathers each compare-and-swap's partner; the GPU's swaps registers.
        grouped = input.device.type == "cpu" and block >= GROUPED_FROM * block_k * block_k
        full = n == block and k == block_k
        _sort_kernel[(rows.shape[0],)](rows, values, indices, n, k, *rows.stride(), is_float,
                                       bool(descending), block, block_k, grouped, full, key_bits,
                                       **_options(input.device, block, block_k))  # fmt: skip
    if not input.dim():
        return values.reshape(()), indices.reshape(())
    return in_dim_order(values, dim), in_dim_order(indices, dim)


def _options(device, block, block_k):
    """A GPU spreads the row over warps at 8 keys a thread for a full sort (16 warps for 4096)
    under 64 registers, 16 for a topk (8 warps; 63 registers for k = 8), none spilled on
    sm_90a: 32 warps share an SM, enough to hide the latency of the network's shuffles and of
    the row's loads, which ptxas issues one 16-byte load at a time between the first stages. At
    the default 4 warps a 4096-key sort took 207 registers (8 warps an SM), a topk of 8 156
    (12 warps an SM)."""
    if device.type == "cpu":
        return {}
    if block_k < block:  # uncapped: a large k's merges hold more (k = 512 spilled under 64)
        return {"num_warps": min(max(block // 512, 1), 16)}
    return {"num_warps": min(max(block // 256, 1), 16), "maxnreg": 64}


def _out(result, out):
    """The (values, indices) pair, or copied into the given pair `out`."""
    if out is None:
        return result
    return tuple(written_to(value, target) for value, target in zip(result, out, strict=True))


@aten("sort.default", "sort.stable", "sort.values", "sort.values_stable")
def sort(input, *args, stable=None, dim=-1, descending=False, values=None, indices=None):
    """(values, indices) of input sorted along `dim`; equal values keep their order."""
    if args:  # sort.default's positional (dim, descending)
        dim, descending = (*args, descending)[:2]
    result = _sorted_rows(input, dim, input.shape[dim] if input.dim() else 1, descending)
    return _out(result, None if values is None else (values, indices))


def argsort(input, dim=-1, descending=False, stable=False):
    """The positions that sort input along `dim`."""
    return sort(input, dim=dim, descending=descending)[1]


@aten("topk.default", "topk.values")
def topk(input, k, dim=-1, largest=True, sorted=True, *, values=None, indices=None):
    """(values, indices) of the k largest (smallest) elements along `dim`, in order."""
    n = input.shape[dim] if input.dim() else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    result = _sorted_rows(input, dim, k, largest)
    return _out(result, None if values is None else (values, indices))
