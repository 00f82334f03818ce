"""Hopper's tensor cores for `tt.dot` (part of accelerate-matmul): a dot `wgmma` can compute
becomes a `ttng.warp_group_dot` reading both operands from shared-memory buffers in the
`#ttg.nvmma_shared` layout, its result in the `#ttg.nvidia_mma` version 3 layout.

    %d = tt.dot %a, %b, %c : tensor<128x64xf16, #dot_a> * tensor<64x256xf16, #dot_b> -> ...
    ==>
    %sa = ttg.local_alloc %a0 : (tensor<128x64xf16, #blocked>) -> !ttg.memdesc<128x64xf16, #shared, #smem>
    %sb = ttg.local_alloc %b0 : (tensor<64x256xf16, #blocked1>) -> !ttg.memdesc<64x256xf16, #shared1, #smem>
    %c1 = ttg.convert_layout %c : ... -> tensor<128x256xf32, #mma>
    %d = ttng.warp_group_dot %sa, %sb, %c1 : ... -> tensor<128x256xf32, #mma>
    %d1 = ttg.convert_layout %d : tensor<128x256xf32, #mma> -> tensor<128x256xf32, #blocked2>

A buffer is stored along the dimension its source holds contiguously (so that each thread
stores, and the pipeliner copies, whole 16-byte vectors), with the widest swizzle a row of it
fills (128, 64 or 32 bytes); `wgmma` reads either major order of 16-bit operands. An operand
`tt.trans` made (attention's K^T) is stored as it was loaded and read through
`ttg.memdesc_trans`. In a chain of dots (attention's Q K^T, then P V), an A that is computed
rather than loaded (P) stays in registers, in the `#ttg.dot_op` layout of the version 3 parent,
which holds the first dot's result rows as the second's A (16-bit: a renumbering of registers;
8-bit, tutorial 06's fp8 mode: an exchange within each quad of lanes, as K runs over four
elements a lane where the result holds two); warps then all go along M.

`wgmma` reads the other operand types (tf32, int8, fp8 e4m3 / e5m2) from shared memory only
K-major: their buffers are stored with K contiguous (tf32's A goes through one even in a
chain). Where an operand is loaded with M or N contiguous (B of a row-major matrix), its
buffer would be written element by element and copied by no 16-byte `cp.async`; a tf32 or
int8 dot then keeps `mma.sync`, which reads it at full speed (Triton takes wgmma there: its
tf32 matmul of a row-major B then runs at 0.4 of its mma.sync speed on an H200). An fp8 dot
takes wgmma all the same, as Triton's does: Hopper has no fp8 `mma.sync` of its own (PTX's is
two f16 ones), so the operand is stored K-major from registers in each iteration, and the dot
is waited for in its iteration (asynchronous_dots.py), before the next store.

As Triton chooses: sm_90 only, 2-D dots, M a multiple of 64 (a warpgroup's rows), num_warps a
multiple of 4, K a multiple of the instruction's (16 for 16-bit operands, 8 for tf32, 32 for
8-bit); f16 or bf16 operands with an f32 accumulator, f32 operands at `tf32` precision, int8
with an int32 accumulator, fp8 with an f32 accumulator unless the dot asks to add into it
more often than every 32 K elements (`max_num_imprecise_acc` < 32: mma.sync, which adds every
product at f32). Warpgroups tile M first (`warps_per_warpgroup_tile`), and the instruction's N
is the widest that divides the warpgroup's columns, up to 256; a chained dot needs 16 rows for
each warp. Other dots keep `mma.sync`.
"""  # noqa: E501

from __future__ import annotations

from ....dialects import tt, ttg, ttng
from ....dialects.ttg.attributes import (
    SHARED_MEMORY,
    DotOperandEncodingAttr,
    NvidiaMmaEncodingAttr,
    NVMMASharedEncodingAttr,
)
from ....dialects.ttg.types import MemDescType
from ....ir import DenseArrayAttr, Operation
from ....ir.types import i32
from ..layouts import contiguous_dim, to_linear_layout
from .dot_kinds import FP8_KINDS, element_kind, input_precision
from .layout_inference import with_encoding
from .operand_buffers import operand_buffer

# The operand types `wgmma` reads from either major order; the others only K-major.
EITHER_MAJOR = ("f16", "bf16")
# Types whose dots take wgmma whatever order their operands are loaded in (module doc).
ANY_LOADED_ORDER = EITHER_MAJOR + FP8_KINDS
# The element widths of an A that wgmma reads from registers (a chain's computed A): 16-bit
# elements two to a register, 8-bit four; tf32's goes through a buffer.
REGISTER_A_WIDTHS = (8, 16)


def wgmma_fits(dot: tt.DotOp, capability: int, num_warps: int, chained: bool, source) -> bool:
    """Whether `dot` takes `wgmma` (see the module doc); `source(value)` is an operand before
    the conversion that made it a dot operand."""
    if capability != 90 or num_warps % 4:
        return False
    a, b = dot.a.type, dot.b.type
    if len(a.shape) != 2 or not _has_instruction(dot):
        return False
    if element_kind(a.element_type) not in ANY_LOADED_ORDER and not all(
        _stored_k_major(source(value), op_idx) for op_idx, value in enumerate((dot.a, dot.b))
    ):
        return False
    m, k, n = a.shape[0], a.shape[1], b.shape[1]
    instr_k = 256 // a.element_type.width
    return m % 64 == 0 and n % 16 == 0 and k % instr_k == 0 and (not chained or m >= 16 * num_warps)


def _has_instruction(dot: tt.DotOp) -> bool:
    """Whether a `wgmma` instruction takes the dot's operand and accumulator types."""
    ka, kb = element_kind(dot.a.type.element_type), element_kind(dot.b.type.element_type)
    acc = element_kind(dot.d.type.element_type)
    if ka in FP8_KINDS and kb in FP8_KINDS:
        imprecise = dot.attributes.get("maxNumImpreciseAcc")
        return acc == "f32" and imprecise is not None and imprecise.value >= 32
    if ka != kb:
        return False
    if ka in EITHER_MAJOR:
        return acc == "f32"
    if ka == "i8":
        return acc == "i32"
    return ka == "f32" and acc == "f32" and input_precision(dot) == "tf32"


def warps_per_warpgroup_tile(shape, num_warps: int, chained: bool) -> list[int]:
    """Triton's warps of an mma v3 dot: warpgroups of 4 along M while M has rows for them,
    then along N; a dot chained with another keeps them all along M (each warp then holds
    whole rows of the first dot's result, which the second reads as its A)."""
    if chained:
        return [num_warps, 1]
    warps = [4, 1]
    while warps[0] * warps[1] < num_warps:
        if shape[0] > 16 * warps[0]:
            warps[0] *= 2
        else:
            warps[1] *= 2
    return warps


def instruction_n(shape, num_warps: int) -> int:
    """The instruction's N: the widest multiple of 8 up to 256 that divides N and fits the
    columns a warpgroup holds."""
    m_warps = max(shape[0] // 16, 1)
    n_warps = max(num_warps // m_warps, 1)
    widest = max(shape[1] // n_warps, 8)
    return next(n for n in range(256, 0, -8) if shape[1] % n == 0 and n <= widest)


def to_wgmma(dot: tt.DotOp, num_warps: int, chained: bool, source) -> None:
    """Rewrite `dot` into a `ttng.warp_group_dot` (see the module doc); `source(value)` is an
    operand before the conversion that made it a dot operand."""
    shape = dot.d.type.shape
    warps = warps_per_warpgroup_tile(shape, num_warps, chained)
    k = 256 // dot.a.type.element_type.width
    mma = NvidiaMmaEncodingAttr(3, 0, warps, [16, instruction_n(shape, num_warps), k])
    at = dot.location
    a_source = source(dot.a)
    either_major = element_kind(dot.a.type.element_type) in EITHER_MAJOR
    width = dot.a.type.element_type.width
    if chained and width in REGISTER_A_WIDTHS and not _loaded(a_source):
        k_width = 32 // width
        a = _registers(dot, a_source, DotOperandEncodingAttr(0, mma, k_width))
    else:
        a = _buffer(dot, a_source, 0, either_major)
    b = _buffer(dot, source(dot.b), 1, either_major)
    c = ttg.ConvertLayoutOp(source(dot.c), result=with_encoding(dot.c.type, mma), location=at)
    dot.parent.insert_before(c, dot)
    wgmma = ttng.WarpGroupDotOp(
        a,
        b,
        c.result,
        inputPrecision=dot.attributes.get("inputPrecision"),
        maxNumImpreciseAcc=dot.attributes.get("maxNumImpreciseAcc"),
        d=with_encoding(dot.d.type, mma),
        location=at,
    )
    dot.parent.insert_before(wgmma, dot)
    back = ttg.ConvertLayoutOp(wgmma.d, result=dot.d.type, location=at)
    dot.parent.insert_before(back, dot)
    operands = [dot.a, dot.b, dot.c]
    dot.d.replace_all_uses_with(back.result)
    dot.erase()
    for value in operands:
        owner = value.defining_op
        if isinstance(owner, ttg.ConvertLayoutOp) and not value.has_uses:
            owner.erase()


def _loaded(value) -> bool:
    """Whether `value` comes straight from memory: a load, or a transposed one, through layout
    conversions (a tile loaded before a loop and read transposed by a dot in it: attention
    backward's K^T in the dK/dV walk's dQ product, which would otherwise hold 32 registers a
    thread as the chained dot's A)."""
    owner = _past_conversions(value).defining_op
    if isinstance(owner, tt.TransOp):
        owner = _past_conversions(owner.src).defining_op
    return isinstance(owner, tt.LoadOp | tt.DescriptorLoadOp)


def _past_conversions(value):
    """`value` before the layout conversions that made it."""
    while isinstance(value.defining_op, ttg.ConvertLayoutOp):
        value = value.defining_op.src
    return value


def _stored_k_major(value, op_idx: int) -> bool:
    """Whether operand `op_idx`, stored as `_buffer` stores it, is loaded with K contiguous (a
    computed operand is stored from registers in either order at the same cost)."""
    trans = _stored_transposed(value)
    if trans is not None:
        value, op_idx = trans.src, 1 - op_idx
    return not _loaded(value) or _source_contiguous_dim(value, op_idx) == _k_dim(op_idx)


def _stored_transposed(value) -> tt.TransOp | None:
    """The `tt.trans` of a 2-D tensor read by the dot alone that made `value`: the tensor is
    stored untransposed and viewed transposed."""
    trans = value.defining_op
    if isinstance(trans, tt.TransOp) and value.has_one_use and len(trans.src.type.shape) == 2:
        return trans
    return None


def _k_dim(op_idx: int) -> int:
    return 1 if op_idx == 0 else 0


def _source_contiguous_dim(value, op_idx: int) -> int:
    """The dimension of operand `op_idx` (K or M/N) that `value`'s layout holds contiguously."""
    t = value.type
    k_dim = _k_dim(op_idx)
    return contiguous_dim(to_linear_layout(t.encoding, t.shape), k_dim, 1 - k_dim)


def _registers(dot: Operation, value, encoding):
    """`value` converted to the registers of wgmma's A operand."""
    convert = ttg.ConvertLayoutOp(
        value, result=with_encoding(value.type, encoding), location=dot.location
    )
    dot.parent.insert_before(convert, dot)
    return convert.result


def _buffer(dot: Operation, value, op_idx: int, either_major: bool):
    """Operand `op_idx` of `dot` stored into a buffer (K-major unless `either_major`); a
    transposed 2-D tensor read by the dot alone is stored untransposed and viewed
    transposed."""
    at = dot.location
    trans = _stored_transposed(value)
    if trans is not None:
        stored = _alloc(dot, _before_conversion(trans.src), 1 - op_idx, either_major)
        view_t = stored.type.clone(
            shape=value.type.shape, encoding=_transposed(stored.type.encoding), alloc_shape=None
        )
        view = ttg.MemDescTransOp(
            stored, order=DenseArrayAttr(i32, [1, 0]), result=view_t, location=at
        )
        dot.parent.insert_before(view, dot)
        return view.result
    return _alloc(dot, value, op_idx, either_major)


def _before_conversion(value):
    """The tensor a layout conversion read alone by `value`'s transpose was made from: a
    buffer holds the same elements whatever the registers' layout, and storing the tensor as
    it was made lets the dot that reads it untransposed share the buffer (a descriptor load's
    tile, read as it is and transposed, is then one buffer the pipeliner fills by copies)."""
    owner = value.defining_op
    if isinstance(owner, ttg.ConvertLayoutOp) and value.has_one_use:
        return owner.src
    return value


def _alloc(dot: Operation, value, op_idx: int, either_major: bool):
    """`value` (an operand, or its transpose when `op_idx` is swapped) in a buffer (placed and
    shared as operand_buffers.py says), along its source's contiguous dimension when
    `either_major`, else along K."""
    t = value.type
    inner = _source_contiguous_dim(value, op_idx) if either_major else _k_dim(op_idx)
    encoding = nvmma_encoding(t.shape[inner], t.element_type.width, transposed=inner == 0)
    memdesc = MemDescType(t.shape, t.element_type, encoding, SHARED_MEMORY)
    return operand_buffer(value, memdesc, dot.location)


def nvmma_encoding(extent: int, bits: int, transposed: bool) -> NVMMASharedEncodingAttr:
    """The widest swizzle whose row `extent` contiguous elements fill."""
    nbytes = extent * bits // 8
    swizzle = next(s for s in (128, 64, 32) if nbytes >= s)
    return NVMMASharedEncodingAttr(swizzle, transposed, bits)


def _transposed(encoding: NVMMASharedEncodingAttr) -> NVMMASharedEncodingAttr:
    return NVMMASharedEncodingAttr(
        encoding.swizzling_byte_width, not encoding.transposed, encoding.element_bit_width
    )
