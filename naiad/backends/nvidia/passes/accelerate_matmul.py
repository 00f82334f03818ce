"""`accelerate-matmul`: give a `tt.dot` that tensor cores can compute the `mma.sync` layouts
(`#ttg.nvidia_mma` version 2 for the result, `#ttg.dot_op` with `kWidth` for the operands),
with `ttg.convert_layout` ops around it; any other dot keeps its blocked layout (the FMA dot).

Legal for any dot: only layouts change, and the lowering of each layout computes the same
product. A dot takes `mma.sync` on sm_80 and newer when its operands are f16, bf16, int8 or fp8
(e4m3 / e5m2), or f32 with `inputPrecision` tf32, tf32x3, bf16x3 or bf16x6, and it holds at
least one instruction tile (M >= 16, N >= 8, K >= the instruction's K); smaller dots, f64, and
f32 `ieee` stay on FMA. Each thread holds `kWidth` = 32 / bits consecutive K elements of an
operand: the packing of one 32-bit register of the instruction (f32 split into bf16 parts and
fp8 upcast to f16 pack as 16-bit elements). Warps tile the result as Triton chooses for
mma v2 (`warps_per_tile`).

    %d = tt.dot %a, %b, %c : tensor<64x32xf16, #ttg.dot_op<{opIdx = 0, parent = #blocked}>> * ...
    ==>
    #mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
    %a1 = ttg.convert_layout %a0 : ... -> tensor<64x32xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>
    %d = tt.dot %a1, %b1, %c1 : ... -> tensor<64x64xf32, #mma>
    %d1 = ttg.convert_layout %d : tensor<64x64xf32, #mma> -> tensor<64x64xf32, #blocked>

remove-layout-conversions then carries the mma layout to the dot's users and loop carries.
On sm_90, a dot `wgmma` computes becomes a `ttng.warp_group_dot` instead (wgmma_dot.py).
"""  # noqa: E501

from __future__ import annotations

from dataclasses import dataclass

from ....dialects import tt, ttg, ttng
from ....dialects.ttg.attributes import (
    BlockedEncodingAttr,
    DotOperandEncodingAttr,
    NvidiaMmaEncodingAttr,
)
from ....ir import Operation, register_pass
from ....ir.passes import Pass
from .dot_kinds import FP8_KINDS, element_kind, input_precision
from .layout_inference import with_encoding
from .wgmma_dot import to_wgmma, wgmma_fits

_SIXTEEN_BIT = ("f16", "bf16")


def module_capability(module: Operation) -> int:
    """The compute capability the module targets (`ttg.target = "cuda:90"` -> 90)."""
    attr = module.attributes.get("ttg.target")
    if attr is None:
        return 0
    return int(str(attr.value).split(":")[1])


def mma_k_width(dot: tt.DotOp, capability: int) -> int | None:
    """The `kWidth` of the operands when `dot` can use `mma.sync` on `capability`, else None.

    fp8 operands take kWidth 4, the 32-bit word of 8-bit elements, everywhere: on sm_89 with
    an f32 accumulator they feed the fp8 instruction; elsewhere they are upcast to f16 in
    registers at the dot, which runs two f16 instructions per word, as Triton does on the archs
    without fp8 `mma.sync` of their own (Hopper runs PTX's fp8 one as f16 upcasts and f16
    products anyway; an f16 accumulator of fp8 operands is an f16 dot of the upcast values).
    With kWidth 2 (a 16-bit word of fp8) `ldmatrix` could not read the operand: its conversion
    stayed in the loop, through an unswizzled buffer, and B was not pipelined (tutorial 03's
    fp8 64x32x32 w2 tiles on sm_90a, which take no wgmma). (An 8-bit dot's K is at least 32.)
    """
    if capability < 80:
        return None
    a, b = dot.a.type, dot.b.type
    ka, kb = element_kind(a.element_type), element_kind(b.element_type)
    precision = input_precision(dot)
    if ka in FP8_KINDS and kb in FP8_KINDS:
        k_width = 4
    elif ka != kb:
        return None
    elif ka in _SIXTEEN_BIT:
        k_width = 2
    elif ka == "i8":
        k_width = 4
    elif ka == "f32" and precision in ("tf32", "tf32x3"):
        k_width = 1
    elif ka == "f32" and precision in ("bf16x3", "bf16x6"):
        k_width = 2
    else:
        return None
    rank = len(a.shape)
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    if rank not in (2, 3) or m < 16 or n < 8 or k < 8 * k_width:
        return None
    return k_width


def warps_per_tile(dot: tt.DotOp, shape, num_warps: int) -> list[int]:
    """Triton's warps of an mma v2 dot: a batched dot puts them all on the batch; a dot chained
    with another (in the same region) takes that dot's mma warps, or all warps along its
    longer side; otherwise warps go where the repetitions of the 16 x 8 tile are more
    (balancing A's 4 and B's 2 registers per tile, ties to M)."""
    if len(shape) == 3:
        return [num_warps, 1, 1]
    chained = False
    for op in _slice(dot):
        if isinstance(op, tt.DotOp) and op is not dot and len(op.d.type.shape) == len(shape):
            encoding = op.d.type.encoding
            if isinstance(encoding, NvidiaMmaEncodingAttr):
                return list(encoding.warps_per_cta)
            chained = True
    if chained:
        return [num_warps, 1] if shape[0] >= shape[1] else [1, num_warps]
    warps = [1, 1]
    reps = [max(1, shape[0] // 16), max(1, shape[1] // 8)]
    while warps[0] * warps[1] < num_warps:
        if reps[0] >= reps[1]:
            warps[0] *= 2
            if reps[0] != 1:
                reps[0] //= 2
        else:
            warps[1] *= 2
            reps[1] //= 2
    return warps


def _slice(root: Operation) -> set[Operation]:
    """The ops connected to `root` through def-use edges in both directions, staying in
    `root`'s region."""
    region = root.parent_region()
    seen = {root}
    work = [root]
    while work:
        op = work.pop()
        neighbours = [v.defining_op for v in op.operands]
        for result in op.results:
            neighbours.extend(result.users)
        for other in neighbours:
            if other is None or other in seen or other.parent_region() is not region:
                continue
            seen.add(other)
            work.append(other)
    return seen


def _source(value):
    """`value` before the conversion that made it a dot operand, if one did."""
    owner = value.defining_op
    if isinstance(owner, ttg.ConvertLayoutOp):
        return owner.src
    return value


def _convert_before(op: Operation, value, encoding):
    convert = ttg.ConvertLayoutOp(
        value, result=with_encoding(value.type, encoding), location=op.location
    )
    op.parent.insert_before(convert, op)
    return convert.result


@register_pass("accelerate-matmul")
@dataclass(frozen=True)
class AccelerateMatmul(Pass):
    """Put each `mma.sync`-able blocked `tt.dot` in mma v2 layouts (see the module doc), or
    make it a `ttng.warp_group_dot` when `wgmma` (an sm_90a target) and it fits."""

    wgmma: bool = True

    def run(self, module: Operation) -> None:
        capability = module_capability(module)
        num_warps = int(module.attributes["ttg.num-warps"].value)
        dots = [op for op in module.walk() if isinstance(op, tt.DotOp)]
        for dot in dots:
            if not isinstance(dot.d.type.encoding, BlockedEncodingAttr):
                continue
            chained = _chained(dot)
            if self.wgmma and wgmma_fits(dot, capability, num_warps, chained, _source):
                to_wgmma(dot, num_warps, chained, _source)
                continue
            k_width = mma_k_width(dot, capability)
            if k_width is not None:
                _to_mma(dot, k_width, num_warps)


def _chained(dot: tt.DotOp) -> bool:
    """Whether another dot of `dot`'s region is connected to it (attention's two dots)."""
    return any(isinstance(op, tt.DotOp | ttng.WarpGroupDotOp) for op in _slice(dot) - {dot})


def _to_mma(dot: tt.DotOp, k_width: int, num_warps: int) -> None:
    shape = dot.d.type.shape
    instr_shape = [16, 8] if len(shape) == 2 else [1, 16, 8]
    mma = NvidiaMmaEncodingAttr(2, 0, warps_per_tile(dot, shape, num_warps), instr_shape)
    wanted = (
        DotOperandEncodingAttr(0, mma, k_width),
        DotOperandEncodingAttr(1, mma, k_width),
        mma,
    )
    for index, encoding in enumerate(wanted):
        old = dot.operands[index]
        dot.set_operand(index, _convert_before(dot, _source(old), encoding))
        if isinstance(old.defining_op, ttg.ConvertLayoutOp) and not old.has_uses:
            old.defining_op.erase()
    old_type = dot.d.type
    dot.d.type = with_encoding(old_type, mma)
    back = ttg.ConvertLayoutOp(dot.d, result=old_type, location=dot.location)
    dot.parent.insert_after(back, dot)
    dot.d.replace_uses_where(back.result, lambda user, _index: user is not back)
