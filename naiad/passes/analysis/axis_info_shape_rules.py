"""Transfer rules of AxisInfo for the ops that move elements without computing: tt.splat,
tt.broadcast, tt.expand_dims, tt.reshape, tt.trans (Triton's lib/Analysis/AxisInfo.cpp), and
ttg.convert_layout, which keeps every element where it is in the tensor.

They carry each dimension's facts to where the dimension goes; a new or stretched dimension of
size-1 origin is constant over its whole length.
"""

from __future__ import annotations

from ...dialects import tt, ttg
from .axis_info_lattice import AxisInfo, constant_state, gcd
from .axis_info_rules import rule


@rule(ttg.ConvertLayoutOp)
def _convert_layout(op, infos):
    """The same tensor in another layout: the same facts."""
    return infos[0]


@rule(tt.SplatOp)
def _splat(op, infos):
    """One value everywhere: constant over every dimension, divisible as the scalar."""
    src = infos[0]
    shape = tuple(op.results[0].type.shape)
    return AxisInfo(
        divisibility=(src.divisibility[0],) * len(shape),
        contiguity=(1,) * len(shape),
        constancy=shape,
        constant=src.constant,
    )


@rule(tt.BroadcastOp)
def _broadcast(op, infos):
    """A size-1 dimension stretched: constant along it; other dimensions unchanged."""
    src = infos[0]
    src_shape = op.operands[0].type.shape
    dst_shape = op.results[0].type.shape
    stretched = [n == 1 for n in src_shape]
    return AxisInfo(
        divisibility=src.divisibility,
        contiguity=tuple(1 if s else c for s, c in zip(stretched, src.contiguity)),
        constancy=tuple(n if s else c for s, n, c in zip(stretched, dst_shape, src.constancy)),
        constant=src.constant,
    )


@rule(tt.ExpandDimsOp)
def _expand_dims(op, infos):
    """A new size-1 dimension: every element of it starts a run, so its divisibility is what
    divides every element of the source (a run [2^n, 2^n + 1, ...] counts 1)."""
    src = infos[0]
    divisibility = 0
    for run, div in zip(src.contiguity, src.divisibility):
        divisibility = gcd(divisibility, 1 if run > 1 else div)
    axis = op.axis.value

    def insert(values: tuple[int, ...], new: int) -> tuple[int, ...]:
        return values[:axis] + (new,) + values[axis:]

    return AxisInfo(
        divisibility=insert(src.divisibility, divisibility or 1),
        contiguity=insert(src.contiguity, 1),
        constancy=insert(src.constancy, 1),
        constant=src.constant,
    )


@rule(tt.TransOp)
def _trans(op, infos):
    """Result dimension i is source dimension order[i]."""
    src = infos[0]
    order = list(op.order)
    return AxisInfo(
        divisibility=tuple(src.divisibility[i] for i in order),
        contiguity=tuple(src.contiguity[i] for i in order),
        constancy=tuple(src.constancy[i] for i in order),
        constant=src.constant,
    )


def _strides(shape) -> list[int]:
    """strides[d + 1] is the row-major stride of dimension d; strides[0] the element count."""
    strides = [1] * (len(shape) + 1)
    for d in range(len(shape) - 1, -1, -1):
        strides[d] = strides[d + 1] * shape[d]
    return strides


def _global_divisibility(info: AxisInfo) -> int:
    """Along a dimension of contiguity 1 every element starts a run, so its divisibility holds
    of every element of the value."""
    found = [div for div, run in zip(info.divisibility, info.contiguity) if run == 1]
    return max(found, default=1)


@rule(tt.ReshapeOp)
def _reshape(op, infos):
    """Same elements in row-major order, another shape. A result dimension whose stride falls
    in source dimension i's stride range splits i: it inherits i's run when it starts at i's
    low end (a truncated run keeping only the divisibility its new length allows), and i's
    constancy (merged with outer fully-constant dimensions) as far as it reaches."""
    src = infos[0]
    if src.constant is not None:
        return constant_state(op.results[0].type, src.constant)
    if op.allow_reorder is not None:
        return None  # the elements may be permuted: nothing survives but a constant
    src_shape = list(op.operands[0].type.shape)
    dst_shape = list(op.results[0].type.shape)
    src_strides, dst_strides = _strides(src_shape), _strides(dst_shape)
    overall = _global_divisibility(src)
    contiguity = [1] * len(dst_shape)
    divisibility = [overall] * len(dst_shape)
    constancy = [1] * len(dst_shape)
    for m, size in enumerate(dst_shape):
        stride = dst_strides[m + 1]
        i = next(
            (i for i in range(len(src_shape)) if src_strides[i + 1] <= stride < src_strides[i]),
            0,  # leading size-1 dimensions of the result: the outermost source dimension
        )
        src_stride = src_strides[i + 1]
        if src.contiguity[i] > 1:
            if stride == src_stride:
                run = min(src.contiguity[i], size)
                kept = (
                    src.divisibility[i]
                    if run == src.contiguity[i]
                    else min(src.divisibility[i], run)
                )
                contiguity[m] = run
                divisibility[m] = max(overall, kept)
            continue
        reach = src_stride * src.constancy[i]
        if stride <= reach:
            constancy[m] = _merged_constancy(src, src_shape, i, size, min(size, reach // stride))
    return AxisInfo(
        divisibility=tuple(divisibility), contiguity=tuple(contiguity), constancy=tuple(constancy)
    )


def _merged_constancy(src: AxisInfo, src_shape, i: int, size: int, runs: int) -> int:
    """Extend a constancy of `runs` over outer source dimensions when dimension i is constant
    over its whole length: the result dimension may span several source dimensions."""
    remaining = size // runs
    j = i - 1
    while src.constancy[i] == src_shape[i] and j >= 0 and remaining > 1:
        piece = min(src_shape[j], remaining)
        piece_runs = min(src.constancy[j], piece)
        runs *= piece_runs
        if piece_runs < piece:
            break
        remaining //= piece
        j -= 1
    return runs
