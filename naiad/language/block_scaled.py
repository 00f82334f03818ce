"""`dot_scaled`: the block-scaled (microscaling) matrix product, written in the language itself.

    dot_scaled(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc) ==
        (decode(lhs) * 2^(lhs_scale - 127)) @ (decode(rhs) * 2^(rhs_scale - 127)) + acc

Operands are [M, K] and [K, N] blocks (or batched [B, M, K] and [B, K, N]) in one of the formats
"e2m1" (fp4, two per uint8 byte: element 2i in the low four bits, 2i + 1 in the high ones,
packed along K, or along M / N with `lhs_k_pack` / `rhs_k_pack` false), "e4m3", "e5m2" (fp8,
as fp8 or as their uint8 bits), "bf16" and "fp16" (or their uint16 bits). A scale is a block of
uint8 e8m0 exponents, one per `K // scale.shape[-1]` elements along K, shaped [M, K / s] for
lhs and [N, K / s] for rhs (0xFF is NaN, 0 is 2^-127), or None; an fp8 scale block (nvfp4's)
multiplies by its value.

As Triton does on GPUs without native block-scaled instructions, every operand is upcast: the
fp4/fp8 values decoded exactly (integer arithmetic on their bits for fp4), scaled (by a power of
two: exact), and multiplied with `tl.dot` in bf16, where these values are exact, accumulating in
fp32. An fp16 operand (11 significant bits) that bf16 would round is multiplied in fp32 split
into bf16 parts (`input_precision` "bf16x3": a high and a low part, 8 + 3 bits, each exact; the
dropped low x low product is zero when the other operand fits bf16, as every other format
does; "bf16x6", three parts, when both operands are fp16), so every product is still exact and
the GPU's tensor cores do the work (Triton upcasts to fp16 there instead, rounding large or
tiny scaled values); the interpreter and the CPU compute those precisions in IEEE fp32. So
every back end computes it by this definition, and the GPU's dot does the work.
`fast_math` is accepted; NaN scales are honoured either way.
"""

from __future__ import annotations

from . import dtypes as t
from . import math
from .core import _unwrap_if_constexpr, jit
from .dot import dot
from .shape import broadcast_to, expand_dims, join, permute, reshape, trans

_FORMATS = ("e2m1", "e4m3", "e5m2", "bf16", "fp16")
_FLOAT = {"e4m3": t.float8e4nv, "e5m2": t.float8e5, "bf16": t.bfloat16, "fp16": t.float16}
_BITS = {"e4m3": t.uint8, "e5m2": t.uint8, "bf16": t.uint16, "fp16": t.uint16}


def _check_format(value, fmt: str, side: str) -> str:
    fmt = _unwrap_if_constexpr(fmt)
    if fmt not in _FORMATS:
        raise ValueError(
            f"dot_scaled: {side}_format must be one of {', '.join(_FORMATS)}, got {fmt!r}"
        )
    if fmt == "e2m1" and value.dtype != t.uint8:
        raise ValueError(f"dot_scaled: e2m1 {side} must be packed in uint8, got {value.dtype}")
    if fmt != "e2m1" and value.dtype not in (_FLOAT[fmt], _BITS[fmt]):
        raise ValueError(
            f"dot_scaled: {fmt} {side} must be {_FLOAT[fmt]} or its bits ({_BITS[fmt]}), "
            f"got {value.dtype}"
        )
    return fmt


def _scale_factor(value, scale, fmt: str, k_pack, is_lhs: bool):
    """How many elements along K share one scale of `scale` (None for no scale or one scalar
    scale), after checking the scale's shape against the operand's: [..., M, K / s] for lhs,
    [..., N, K / s] for rhs."""
    if _is_none(scale) or len(scale.shape) == 0:
        return None
    side = "lhs" if is_lhs else "rhs"
    shape = [_unwrap_if_constexpr(d) for d in value.shape]
    k_axis, rows_axis = (-1, -2) if is_lhs else (-2, -1)
    packed_axis = k_axis if _unwrap_if_constexpr(k_pack) else rows_axis
    if fmt == "e2m1":
        shape[packed_axis] *= 2
    k, rows = shape[k_axis], shape[rows_axis]
    scale_shape = [_unwrap_if_constexpr(d) for d in scale.shape]
    if scale_shape[:-1] != shape[:-2] + [rows] or k % scale_shape[-1] != 0:
        raise ValueError(
            f"dot_scaled: {side}_scale must be shaped [{', '.join(map(str, shape[:-2] + [rows]))}, "
            f"K / s] with s dividing K = {k}, got {scale_shape}"
        )
    return k // scale_shape[-1]


def _check_scales(lhs, lhs_scale, lhs_format, lhs_k_pack, rhs, rhs_scale, rhs_format, rhs_k_pack):
    """Both scales cover blocks of the same length along K (as Triton requires)."""
    lhs_factor = _scale_factor(lhs, lhs_scale, lhs_format, lhs_k_pack, True)
    rhs_factor = _scale_factor(rhs, rhs_scale, rhs_format, rhs_k_pack, False)
    if lhs_factor is not None and rhs_factor is not None and lhs_factor != rhs_factor:
        raise ValueError(
            f"dot_scaled: lhs_scale has one scale per {lhs_factor} elements along K and "
            f"rhs_scale one per {rhs_factor}; both operands must have the same scale factor"
        )


def _is_none(value) -> bool:
    return _unwrap_if_constexpr(value) is None


def _rank(value) -> int:
    return len(value.shape)


def _packed_order(rank) -> tuple:
    """The permutation that puts a joined pair ([..., R, C, 2]) after the second-to-last
    dimension ([..., R, 2, C])."""
    rank = _unwrap_if_constexpr(rank)
    return (*range(rank - 2), rank - 2, rank, rank - 1)


def _doubled(shape, axis) -> list:
    """`shape` with dimension `axis` twice as long."""
    shape = [_unwrap_if_constexpr(d) for d in shape]
    axis = _unwrap_if_constexpr(axis)
    shape[axis] *= 2
    return shape


def _repeated_shape(shape, repeat) -> list:
    """`shape` with a trailing dimension of `repeat`."""
    return [_unwrap_if_constexpr(d) for d in shape] + [_unwrap_if_constexpr(repeat)]


def _widened_shape(shape, k) -> list:
    """`shape` with its last dimension `k`."""
    return [_unwrap_if_constexpr(d) for d in shape][:-1] + [_unwrap_if_constexpr(k)]


def _swap_last_two(rank) -> tuple:
    rank = _unwrap_if_constexpr(rank)
    return (*range(rank - 2), rank - 1, rank - 2)


def _float_type(fmt):
    return _FLOAT[_unwrap_if_constexpr(fmt)]


def _bits_type(fmt):
    return _BITS[_unwrap_if_constexpr(fmt)]


@jit
def _fp4_values(bits):
    """e2m1 codes (0..15) as fp32: sign, two exponent bits, one mantissa bit, exactly."""
    code = bits.to(t.int32)
    exponent = (code >> 1) & 3
    mantissa = code & 1
    normal = ((exponent + 126) << 23) | (mantissa << 22)
    magnitude = math.where(exponent == 0, mantissa * 0x3F000000, normal)
    return (magnitude | ((code & 8) << 28)).to(t.float32, bitcast=True)


@jit
def _unpack_fp4(packed, along_last):
    """Two e2m1 values per byte, unpacked along the last dimension (`along_last`) or the one
    before it, as fp32."""
    low = _fp4_values(packed & 15)
    high = _fp4_values(packed >> 4)
    pairs = join(low, high)
    rank = _rank(packed)
    if along_last:
        return reshape(pairs, _doubled(packed.shape, rank - 1))
    return reshape(permute(pairs, _packed_order(rank)), _doubled(packed.shape, rank - 2))


@jit
def _scale_factors(scale):
    """A scale block as fp32 factors: e8m0 exponents (uint8), or fp8 values."""
    if scale.dtype == t.uint8:
        exponent = scale.to(t.int32)
        bits = math.where(exponent == 0, 0x00400000, exponent << 23)
        bits = math.where(exponent == 255, 0x7FC00000, bits)
        return bits.to(t.float32, bitcast=True)
    return scale.to(t.float32)


@jit
def _spread(factors, k, is_lhs):
    """Factors of shape [..., rows, K / s] repeated s times along K, laid out as the operand:
    [..., rows, K] for lhs, [..., K, cols] for rhs."""
    rank = _rank(factors)
    repeat = k // factors.shape[rank - 1]
    wide = broadcast_to(expand_dims(factors, rank), _repeated_shape(factors.shape, repeat))
    spread = reshape(wide, _widened_shape(factors.shape, k))
    if not is_lhs:
        spread = trans(spread, _swap_last_two(rank))
    return spread


@jit
def _upcast(value, scale, fmt, k_pack, is_lhs):
    """The operand as fp32 values, decoded and scaled."""
    rank = _rank(value)
    if fmt == "e2m1":
        decoded = _unpack_fp4(value, k_pack == is_lhs)
    elif value.dtype == _bits_type(fmt):
        decoded = value.to(_float_type(fmt), bitcast=True).to(t.float32)
    else:
        decoded = value.to(t.float32)
    if _is_none(scale):
        return decoded
    k = decoded.shape[rank - 1] if is_lhs else decoded.shape[rank - 2]
    factors = _scale_factors(scale)
    if len(scale.shape) == 0:
        return decoded * factors
    return decoded * _spread(factors, k, is_lhs)


def _operand_type(lhs_format, rhs_format, lhs_scale, rhs_scale):
    """(the operands' type, the dot's input precision): bf16 unless an fp16 operand would be
    rounded by it; then fp16 for two unscaled fp16 operands, else fp32 split into bf16 parts
    (see the module doc)."""
    formats = (_unwrap_if_constexpr(lhs_format), _unwrap_if_constexpr(rhs_format))
    if "fp16" not in formats:
        return t.bfloat16, None
    if formats == ("fp16", "fp16") and _is_none(lhs_scale) and _is_none(rhs_scale):
        return t.float16, None
    return t.float32, "bf16x6" if formats == ("fp16", "fp16") else "bf16x3"


@jit
def dot_scaled(
    lhs,
    lhs_scale,
    lhs_format,
    rhs,
    rhs_scale,
    rhs_format,
    acc=None,
    fast_math=False,
    lhs_k_pack=True,
    rhs_k_pack=True,
    out_dtype=t.float32,
):
    """Block-scaled matrix product of `lhs` and `rhs` plus `acc` (see the module docstring)."""
    lhs_format = _check_format(lhs, lhs_format, "lhs")
    rhs_format = _check_format(rhs, rhs_format, "rhs")
    if not (lhs_k_pack or lhs_format == "e2m1") or not (rhs_k_pack or rhs_format == "e2m1"):
        raise ValueError("dot_scaled: only e2m1 operands may be packed along M or N")
    _check_scales(lhs, lhs_scale, lhs_format, lhs_k_pack, rhs, rhs_scale, rhs_format, rhs_k_pack)
    a = _upcast(lhs, lhs_scale, lhs_format, lhs_k_pack, True)
    b = _upcast(rhs, rhs_scale, rhs_format, rhs_k_pack, False)
    operand, precision = _operand_type(lhs_format, rhs_format, lhs_scale, rhs_scale)
    product = dot(a.to(operand), b.to(operand), input_precision=precision)
    if not _is_none(acc):
        product = product + acc.to(t.float32)
    return product.to(out_dtype)
