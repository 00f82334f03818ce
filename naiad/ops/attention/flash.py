"""Launching the flash kernels (forward.py, backward.py; whole_blocks.py, whole_backward.py where
every key or query block but the last is whole) for one attention call, whatever holds its
sequences: a `Problem` says the shapes, strides, layouts and flags; `forward_launch` and
`backward_launches` choose the kernels and their arguments, `forward` and `backward` allocate
the results and run them; `Attention` makes the pair differentiable.

A subclass of `Problem` reads its call's tensors (batched ones in sdpa.py, packed ones in
varlen.py) and sets the layouts: where its inputs' (batch, head, position) rows are, and where
the results' rows go (the output, log-sum-exp and query gradient share one layout, the key and
value gradients another).
"""

from __future__ import annotations

import functools
import math

import torch

from ...runtime.tensor_descriptor import TensorDescriptor
from ..allocate import empty
from ..device_kind import device_kind
from ..dtypes import Unsupported
from ..second_derivatives import differentiable_once
from . import bound
from .backward import attention_delta, attention_dkdv, attention_dq
from .forward import attention_forward
from .general_tiles import blocks as _blocks
from .scores import LOG2E, NO_MASK
from .whole_backward import attention_dkdv_whole, attention_dq_rounded, attention_dq_whole
from .whole_blocks import attention_forward_whole
from .whole_tiles import HALVES_ABOVE as _HALVES_ABOVE
from .whole_tiles import SHORT_KEYS as _SHORT_KEYS
from .whole_tiles import WHOLE as _WHOLE
from .whole_tiles import WHOLE_BACKWARD as _WHOLE_BACKWARD
from .whole_tiles import WHOLE_DTYPES as _WHOLE_DTYPES
from .whole_tiles import WHOLE_ROTATED as _WHOLE_ROTATED
from .whole_tiles import WHOLE_SHORT as _WHOLE_SHORT

__all__ = [
    "DTYPES",
    "MAX_HEAD_DIM",
    "Attention",
    "Problem",
    "backward",
    "backward_launches",
    "forward",
    "forward_launch",
]

DTYPES = (torch.float32, torch.float16, torch.bfloat16)
MAX_HEAD_DIM = 256


class Problem:
    """The shapes, strides, layouts and flags every kernel of one attention call takes.

    Set by a subclass: `batches` (sequences), `L` and `S` (the longest query and key lengths),
    `out_shape` and `out_rows` (the output's shape; its rows' strides along batch, head and
    position, in rows of E), `kv_shape` and `kv_rows` (the same of the key and value gradients),
    `input_strides` (q's, k's, v's and the mask's strides along batch, head and position), and
    the prefix sums `cu_q`, `cu_k` where `packed`; `set_dropout` where it drops probabilities.
    """

    packed = False
    mask_kind, mask_strides = NO_MASK, (0, 0, 0, 0)
    # dropout.py's seed and offset, the probability of a drop and the kept ones' scale
    seed, dropout_offset, dropout_p, dropout_scale = 0, 0, 0.0, 1.0
    whole = False  # the whole-block forward's tiles or None once `_whole_tiles` decided
    wholly = None  # whether the whole-block kernels may take it, once `_whole_problem` decided
    kind = None  # what fixes its bound launches (bound.py), once asked

    def __init__(self, q, k, v, heads, key_heads, causal, scale):
        """The checks and flags that do not depend on how the sequences are held; `q`, `k`, `v`
        have the head dim last."""
        if q.dtype not in DTYPES or k.dtype != q.dtype or v.dtype != q.dtype:
            raise Unsupported(f"attention of {q.dtype}")
        E = q.shape[-1]
        if E > MAX_HEAD_DIM or k.shape[-1] != E or v.shape != k.shape or heads % key_heads:
            raise Unsupported("attention of these shapes")
        # one line each: a generator over the three costs a call ~0.5 us of host time
        self.q = q if q.stride(-1) == 1 else q.contiguous()
        self.k = k if k.stride(-1) == 1 else k.contiguous()
        self.v = v if v.stride(-1) == 1 else v.contiguous()
        self.mask = self.cu_q = self.cu_k = self.q  # not read unless a flag says so
        self.H, self.E, self.group = heads, E, heads // key_heads
        self.causal = bool(causal)
        scale = 1.0 / math.sqrt(E) if scale is None else scale
        self.scale_log2 = scale * LOG2E
        self.block_e = max(16, 1 << (E - 1).bit_length())
        # the setting is read only where it matters (0.7 us a read)
        tf32 = q.dtype == torch.float32 and q.is_cuda and torch.backends.cuda.matmul.allow_tf32
        self.precision = "tf32" if tf32 else "ieee"
        self._input_rows = {}  # (input, rows, by heads) -> its descriptor (`input_rows`)

    def set_dropout(self, p: float, seed: int, offset: int = 0):
        """Drop each probability with probability `p` (the kept ones scaled by 1 / (1 - p)),
        the mask drawn from `seed` and `offset` (dropout.py): the general kernels take it."""
        if not 0 <= p <= 1:
            raise Unsupported(f"attention dropout of probability {p}")
        self.dropout_p, self.seed, self.dropout_offset = float(p), seed, offset
        self.dropout_scale = 0.0 if p == 1 else 1.0 / (1.0 - p)

    def input_rows(self, index: int, rows: int, heads: bool = False, half=False):
        """The descriptor of q's, k's or v's (`index` 0, 1, 2) rows (heads where `heads`, in
        blocks of half the head dim where `half`) in blocks of `rows`, made once per problem:
        the whole-block forward and backward kernels read the three inputs, 9 of a call's 15
        descriptors, of which 5 repeat one (a descriptor costs a launch microseconds of host
        time to make)."""
        desc = self._input_rows.get((index, rows, heads, half))
        if desc is None:
            t = (self.q, self.k, self.v)[index]
            made = _head_descriptor(t, rows, half) if heads else _row_descriptor(t, rows)
            desc = self._input_rows[(index, rows, heads, half)] = made
        return desc

    def arguments(self):
        """The arguments after the tensors: sequence bounds, sizes, scale, strides, dropout."""
        return (self.cu_q, self.cu_k, self.L, self.S, self.H, self.group, self.scale_log2,
                *self.input_strides, *self.mask_strides, self.seed, self.dropout_offset,
                self.dropout_p, self.dropout_scale)  # fmt: skip

    def constants(self, kernel: str):
        """(BLOCK_M, BLOCK_N, the kernel's trailing constexprs, launch options)."""
        block_m, block_n, options = _blocks(kernel, self.q.device, self.block_e)
        dropout = self.dropout_p > 0
        flags = (self.E, self.causal, self.mask_kind, self.packed, self.precision, dropout)
        return block_m, block_n, (*flags, block_m, block_n, self.block_e), options


_ROUNDED = 4096  # elements a program of `attention_dq_rounded`

# The forward's work (batches x heads x L x S x E) from which it reads by tensor copies: their
# launch costs about 100 us more host time than a pointer one (the descriptors' keys and
# tensor maps; H200: 147 against 46 us a call), which a kernel shorter than that does not repay
# (4x16x1024x64: 0.057 -> 0.119 ms a call), while long ones gain (2x16x4096x128: 0.649 ->
# 0.618 ms; at 128x128 tiles with 4 warps, D64 0.401 -> 0.35 ms).
_COPIES_FROM = 2**34
# The same for the whole-block kernels, which repay it sooner: at 4x16x1024 (2**32 at D64) their
# forward already matches the general one's (H200, ms: D64 0.060 both, D128 0.091 against 0.101,
# causal 0.073 against 0.082) and their backward has no guards nor spills (the general D128
# dK/dV spills 104-130 bytes, bench/RESULTS.md).
_WHOLE_FROM = 2**32


@functools.cache
def _copies_on(device_index: int) -> bool:
    """Whether the GPU has a tensor-copy engine (Hopper's TMA: compute capability 9 on)."""
    return torch.cuda.get_device_capability(device_index)[0] >= 9


def _by_tensor_copies(p: Problem, block_m: int, block_n: int, least=None) -> bool:
    """Whether a kernel reads q, k, v (and the backward dO) through tensor descriptors of their
    rows, in blocks of `block_m` queries and `block_n` keys: on a GPU with a tensor-copy engine,
    for a problem `rows_copyable` allows."""
    q = p.q
    # get_device(): the index without a torch.device made (on the GPU, every call asks)
    return q.is_cuda and rows_copyable(p, block_m, block_n, least) and _copies_on(q.get_device())


def rows_copyable(p: Problem, block_m: int, block_n: int, least=None) -> bool:
    """Whether q, k and v can be read as blocks of their rows: long enough contiguous batched
    sequences (work from `least`, else from `_COPIES_FROM`) without a mask, whose head dim fills
    its block and whose lengths the blocks divide (so that no block passes its sequence's end
    into the next one's rows; the whole-block kernels, reading heads alone, ask with 1s)."""
    q, k = p.q, p.k
    least = _COPIES_FROM if least is None else least
    return (
        not p.packed
        and p.mask_kind == NO_MASK
        and p.block_e == p.E
        and p.L % block_m == 0
        and p.S % block_n == 0
        and p.batches * p.H * p.L * p.S * p.E >= least
        and max(q.numel(), k.numel()) // p.E < 2**31
        and _aligned_rows(q)
        and _aligned_rows(k)
        and _aligned_rows(p.v)
    )


def _aligned_rows(t) -> bool:
    """Whether `t` is contiguous from a 16-byte aligned address."""
    return t.is_contiguous() and t.data_ptr() % 16 == 0


def _row_descriptor(t, rows: int) -> TensorDescriptor:
    """A descriptor of contiguous `t`'s rows of E elements, in blocks of `rows` rows."""
    E = t.shape[-1]
    return TensorDescriptor(t, [t.numel() // E, E], [E, 1], [rows, E])


def _head_descriptor(t, rows: int, half: bool = False) -> TensorDescriptor:
    """A descriptor of contiguous (..., length, E) `t`'s heads, (heads, length, E), in blocks
    [1, rows, E] (E // 2 where `half`): a block past a head's last row reads zeros there and
    its store drops them (the copy engine bounds each dimension), so the whole-block kernels
    take any length."""
    n, E = t.shape[-2:]
    block = [1, rows, E // 2 if half else E]
    return TensorDescriptor(t, [t.numel() // (n * E), n, E], [n * E, E, 1], block)


def _whole_problem(p: Problem) -> bool:
    """Whether `p` may take the whole-block kernels where their tables have its head dim: half
    precision, queries and keys, a causal diagonal from the top left inside the keys, no
    dropout, tensor copies at any length. Decided once per problem: each check costs a call
    microseconds of host time."""
    if p.wholly is None:
        taken = p.q.dtype in _WHOLE_DTYPES and p.L > 0 and p.S > 0 and not p.dropout_p
        taken = taken and not (p.causal and p.L > p.S)
        p.wholly = taken and _by_tensor_copies(p, 1, 1, _WHOLE_FROM)
    return p.wholly


def _whole_tiles(p: Problem):
    """(BLOCK_M, BLOCK_N, launch options) of the whole-block forward where `p` may take it
    (`_whole_problem`) and the tables have its head dim (the short table, where it has it, for
    walks of up to SHORT_KEYS keys), else None; decided once per problem."""
    if p.whole is False:
        kind, key = device_kind(p.q.device), (p.E, p.causal)
        tiles = _WHOLE_SHORT[kind].get(key) if p.S <= _SHORT_KEYS else None
        tiles = tiles or _WHOLE[kind].get(key)
        p.whole = tiles if tiles is not None and _whole_problem(p) else None
    return p.whole


def forward_launch(p: Problem, out, lse, tiles=None):
    """(kernel, grid, arguments, launch options) of the forward of `p` into `out` and `lse`: the
    whole-block kernel at `tiles` (BLOCK_M, BLOCK_N, options) where given or `p` takes it, else
    the general one."""
    tiles = tiles or _whole_tiles(p)
    if tiles is not None:
        block_m, block_n, options = tiles
        descs = (p.input_rows(0, block_m, True), p.input_rows(1, block_n, True),
                 p.input_rows(2, block_n, True), _head_descriptor(out, block_m))  # fmt: skip
        rotated = block_n <= p.S and (p.E, p.causal) in _WHOLE_ROTATED[device_kind(p.q.device)]
        arguments = (*descs, lse, p.L, p.S, p.H, p.group, p.scale_log2, p.E, p.causal,
                     block_m, block_n, rotated)  # fmt: skip
        grid = ((p.L + block_m - 1) // block_m, p.batches * p.H)
        return attention_forward_whole, grid, arguments, options
    block_m, block_n, constants, options = p.constants("forward")
    arguments = (p.q, p.k, p.v, out, lse, p.mask, *p.arguments(), *p.out_rows, *constants)
    grid = ((p.L + block_m - 1) // block_m, p.batches * p.H)
    return attention_forward, grid, arguments, options


def forward(p: Problem):
    """(output of `p.out_shape`, log-sum-exp of its rows, fp32)."""
    q = p.q
    device = q.device
    out = empty(p.out_shape, q.dtype, device)
    lse = empty(p.out_shape[:-1], torch.float32, device)
    if not out.numel():
        return out, lse
    tiles = _whole_tiles(p)
    if tiles is None:
        kernel, grid, arguments, options = forward_launch(p, out, lse)
        kernel[grid](*arguments, **options)
    else:  # bound to its kind of call (bound.py)
        tensors = (p.q, p.k, p.v, out, lse)
        bound.run(p, "forward", tiles[:2], lambda: forward_launch(p, out, lse, tiles), tensors)
    return out, lse


def _whole_backward_tiles(p: Problem, grad):
    """The dK/dV and dQ tiles of the whole-block backward where `p` (and its output's gradient
    `grad`, contiguous, of the output's dtype, device and shape, as bound.py reads it) may take
    it, else None."""
    q = p.q
    tiles = _WHOLE_BACKWARD[device_kind(q.device)].get((p.E, p.causal))
    if tiles is None or not _whole_problem(p) or grad.data_ptr() % 16:
        return None
    if grad.dtype != q.dtype or grad.device != q.device or grad.shape != p.out_shape:
        return None
    return tiles


def backward_launches(p: Problem, grad, lse, delta, dq, dk, dv, tiles=None, dq_sum=None) -> list:
    """(kernel, grid, arguments, launch options) of the dK/dV and dQ kernels of `p`, `grad`
    contiguous: the whole-block ones at `tiles` (dK/dV's and dQ's) where given or `p` takes
    them, else the general ones. Whole-block tiles without dQ's: the dK/dV walk adds dQ into
    `dq_sum` (fp32 zeros of dq's shape), which a last kernel rounds into `dq`."""
    tiles = tiles or _whole_backward_tiles(p, grad)
    kv_heads = p.batches * (p.H // p.group)
    if tiles is not None:
        (m1, n1, dkdv_options), dq_tiles = tiles
        half = p.E > _HALVES_ABOVE
        parts = 2 if half else 1
        rows = (p.L, p.S, p.H, p.group, p.scale_log2, p.E, p.causal)
        added = dq_tiles is None
        if added and dq_sum is None:
            raise ValueError("the dK/dV walk adds dQ at these tiles: give it dq_sum, fp32 zeros")
        dkdv = (p.input_rows(0, m1, True, half), p.input_rows(1, n1, True, half),
                p.input_rows(2, n1, True, half), _head_descriptor(grad, m1, half), lse, delta,
                _head_descriptor(dk, n1, half), _head_descriptor(dv, n1, half),
                _head_descriptor(dq_sum, m1, half) if added else None, *rows, m1, n1, added,
                half)  # fmt: skip
        grid = ((p.S + n1 - 1) // n1, kv_heads, parts)
        walk = (attention_dkdv_whole, grid, dkdv, dkdv_options)
        if added:
            n = dq.numel()
            rounding = (dq_sum, dq, n, _ROUNDED)
            options = {"num_warps": 4} if dq.is_cuda else {}
            return [walk, (attention_dq_rounded, (-(-n // _ROUNDED),), rounding, options)]
        m2, n2, dq_options = dq_tiles
        dq_args = (p.input_rows(0, m2, True, half), p.input_rows(1, n2, True, half),
                   p.input_rows(2, n2, True, half), _head_descriptor(grad, m2, half), lse,
                   delta, _head_descriptor(dq, m2, half), *rows, m2, n2, half)  # fmt: skip
        grid = ((p.L + m2 - 1) // m2, p.batches * p.H, parts)
        return [walk, (attention_dq_whole, grid, dq_args, dq_options)]
    launches = []
    for kernel, name, walked in ((attention_dkdv, "dkdv", (0, 3)), (attention_dq, "dq", (1, 2))):
        block_m, block_n, constants, options = p.constants(name)
        copies = _by_tensor_copies(p, block_m, block_n)
        tensors = [p.q, p.k, p.v, grad, lse, delta]
        if copies:  # the blocks it walks: queries and dO in dK/dV, keys and values in dQ
            for i in walked:
                rows = block_m if i in (0, 3) else block_n
                tensors[i] = p.input_rows(i, rows) if i < 3 else _row_descriptor(grad, rows)
        if name == "dkdv":
            grid = ((p.S + block_n - 1) // block_n, kv_heads)
            arguments = (*tensors, dk, dv, p.mask, *p.arguments(), *p.out_rows, *p.kv_rows)
        else:
            grid = ((p.L + block_m - 1) // block_m, p.batches * p.H)
            arguments = (*tensors, dq, p.mask, *p.arguments(), *p.out_rows)
        launches.append((kernel, grid, (*arguments, *constants, copies), options))
    return launches


def backward(p: Problem, grad, out, lse):
    """(dq, dk, dv) of the attention whose forward gave `out` and `lse`."""
    q = p.q
    grad = grad.contiguous()
    out = out.contiguous()
    device = q.device
    dq = empty(p.out_shape, q.dtype, device)
    dk = empty(p.kv_shape, q.dtype, device)
    dv = torch.empty_like(dk)
    if not (dq.numel() and dk.numel()):
        return dq.zero_(), dk.zero_(), dv.zero_()
    delta = empty(p.out_shape[:-1], torch.float32, device)
    rows = delta.numel()
    tiles = _whole_backward_tiles(p, grad)
    added = tiles is not None and tiles[1] is None  # dQ summed by the dK/dV walk
    dq_sum = empty(dq.shape, torch.float32, device) if added else None  # zeroed with delta

    def delta_launch():
        options = {} if device.type == "cpu" else {"num_warps": 4}
        arguments = (out, grad, delta, dq_sum, rows, p.E, 64, p.block_e)
        return attention_delta, ((rows + 63) // 64,), arguments, options

    tensors = (out, grad, delta, dq_sum) if added else (out, grad, delta)
    bound.run(p, "delta", (64, rows, added), delta_launch, tensors)  # rows: packed ones vary
    if tiles is None:
        for kernel, grid, arguments, options in backward_launches(p, grad, lse, delta, dq, dk, dv):
            kernel[grid](*arguments, **options)
        return dq, dk, dv

    def sample(index):
        return lambda: backward_launches(p, grad, lse, delta, dq, dk, dv, tiles, dq_sum)[index]

    inputs = (p.q, p.k, p.v, grad, lse, delta)
    if added:
        bound.run(p, "dkdv+dq", tiles[0][:2], sample(0), (*inputs, dk, dv, dq_sum))
        bound.run(p, "dq rounded", (_ROUNDED,), sample(1), (dq_sum, dq))
        return dq, dk, dv
    bound.run(p, "dkdv", tiles[0][:2], sample(0), (*inputs, dk, dv))
    bound.run(p, "dq", tiles[1][:2], sample(1), (*inputs, dq))
    return dq, dk, dv


class Attention(torch.autograd.Function):
    """The flash forward and backward of one `Problem`, as autograd sees them."""

    @staticmethod
    def forward(ctx, q, k, v, problem):
        out, lse = forward(problem)
        ctx.save_for_backward(out, lse)
        ctx.problem = problem
        return out

    @staticmethod
    @differentiable_once("scaled_dot_product_attention")
    def backward(ctx, grad):
        out, lse = ctx.saved_tensors
        dq, dk, dv = backward(ctx.problem, grad, out, lse)
        return dq, dk, dv, None
