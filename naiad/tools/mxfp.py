"""Host-side microscaling (OCP MX) data, where Triton's users import it from
(`triton.tools.mxfp`): the operands and scales that `tl.dot_scaled` reads, made and checked on
the host with torch.

    codes = MXFP4Tensor(size=(M, K), device="cpu").random()   # one e2m1 code per byte
    packed = codes.to_packed_tensor(dim=1)                    # two codes per byte, along K
    values = codes.to(torch.float32)                          # the numbers they stand for
    scales = MXScaleTensor(torch.rand(M, K // 32) + 1e-8)     # e8m0 exponents of the inputs

e2m1 (fp4) code: sign bit 3, exponent bits 2-1, mantissa bit 0. Exponent 0 is subnormal
(0 or 0.5), else (1 + m/2) * 2^(e - 1): magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6. No code is Inf
or NaN. Packed, element 2i is the low four bits of a byte and 2i + 1 the high four, which is
the order `dot_scaled` unpacks (naiad/language/block_scaled.py).

e8m0 scale code: the biased exponent of a power of two, 2^(code - 127), code 0 is 2^-127 and
255 is NaN; no sign, no zero.

Both classes keep their codes in `.data` (uint8), decode them only to float32 (`.to`), and
convert float32 inputs on construction. Decoding goes through a table of every code, so it is
exact on any device; encoding rounds in closed form rather than searching all candidates.
"""

from __future__ import annotations

import itertools

import torch

# The magnitudes of the eight unsigned e2m1 codes, in code order (code = 2 * exponent + mantissa).
_FP4_MAGNITUDES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
# Halfway between consecutive magnitudes: where rounding to nearest changes code.
_FP4_MIDPOINTS = tuple((a + b) / 2 for a, b in itertools.pairwise(_FP4_MAGNITUDES))
_E8M0_BIAS = 127
_E8M0_NAN = 255
_E8M0_LARGEST = 254


class PackingDimensionError(ValueError, AssertionError):
    """A packing dimension the tensor does not have. Also an AssertionError, the class
    Triton's `triton.tools.mxfp` raises there, so code written against either catches it."""


def _size_tuple(size) -> tuple:
    return tuple(size) if isinstance(size, (tuple, list, torch.Size)) else (size,)


def _check_source(data) -> torch.Tensor:
    if not isinstance(data, torch.Tensor):
        raise TypeError(f"data must be a torch tensor of float32 values, got {type(data).__name__}")
    return data


def _check_float32(dtype) -> None:
    # Codes decode to float32 only; a caller casts further (every e2m1 value is exact in fp16,
    # bf16 and fp8 e4m3 too, which is how the tutorials make fp8 operands).
    if dtype != torch.float32:
        raise ValueError(f"microscaling codes decode to torch.float32 only, got {dtype}")


class _Codes:
    """A tensor of one microscaling format's codes (uint8), made from float32 values (`data`,
    encoded by the subclass's `_from_float`) or of a `size` for the subclass's `random` to
    fill."""

    def __init__(self, data=None, size=None, device=None):
        self.device = device
        if data is not None:
            data = _check_source(data)
            self.device = data.device
            self.size = tuple(data.shape)
            self.data = self._from_float(data)
        elif size is not None:
            self.size = _size_tuple(size)
        else:
            raise ValueError(f"{type(self).__name__} needs either data or size")


class MXFP4Tensor(_Codes):
    """A tensor of e2m1 (fp4) codes, one per uint8 in its low four bits, made from float32
    values (`data`) or of a `size` to be filled by `random()`."""

    def random(self) -> MXFP4Tensor:
        """Fill with codes drawn uniformly from all sixteen (both zeros, every sign and
        magnitude); returns self, so `MXFP4Tensor(size=...).random()` is one expression."""
        self.data = torch.randint(0, 16, self.size, dtype=torch.uint8, device=self.device)
        return self

    def to(self, dtype) -> torch.Tensor:
        """The float32 values of the codes; code 8 is -0.0."""
        _check_float32(dtype)
        magnitudes = torch.tensor(_FP4_MAGNITUDES, dtype=torch.float32, device=self.data.device)
        table = torch.cat([magnitudes, -magnitudes])
        return table[self.data.long() & 0xF]

    def _from_float(self, values: torch.Tensor) -> torch.Tensor:
        """Round float32 values to the nearest e2m1 code, ties to the even mantissa. The sign is
        kept for every input (-0.0 and negatives that round to zero give code 8); magnitudes
        past 6 saturate to 6, and so do Inf and NaN, which e2m1 cannot hold."""
        values = values.to(torch.float32)
        sign = torch.signbit(values).to(torch.uint8) << 3
        magnitude = values.abs().nan_to_num(nan=6.0, posinf=6.0).clamp(max=6.0)
        midpoints = torch.tensor(_FP4_MIDPOINTS, dtype=torch.float32, device=values.device)
        # At a midpoint the two searches disagree by one code: take the even one (mantissa 0).
        below = torch.bucketize(magnitude, midpoints, right=False)
        above = torch.bucketize(magnitude, midpoints, right=True)
        code = torch.where(below % 2 == 0, below, above)
        return sign | code.to(torch.uint8)

    def to_packed_tensor(self, dim: int) -> torch.Tensor:
        """Two codes per byte along `dim` (element 2i low, 2i + 1 high); an odd length is
        padded with one +0 code at its end, so `dim` becomes ceil(n / 2) long."""
        data = self.data
        if not 0 <= dim < data.ndim:
            raise PackingDimensionError(f"dim {dim} is not a dimension of a {data.ndim}-d tensor")
        if data.shape[dim] % 2:
            pad_shape = list(data.shape)
            pad_shape[dim] = 1
            data = torch.cat([data, data.new_zeros(pad_shape)], dim=dim)
        pairs = list(data.shape)
        pairs[dim : dim + 1] = [data.shape[dim] // 2, 2]
        data = data.reshape(pairs)
        low = data.select(dim + 1, 0)
        high = data.select(dim + 1, 1)
        return (high << 4) | (low & 0xF)

    def unpack_packed_tensor(self, packed_tensor, dim: int, original_shape) -> torch.Tensor:
        """The inverse of `to_packed_tensor(dim)`: one code per byte, the padding of an odd
        `original_shape[dim]` dropped."""
        low = packed_tensor & 0xF
        high = (packed_tensor >> 4) & 0xF
        pairs = torch.stack((low, high), dim=dim + 1)
        shape = list(packed_tensor.shape)
        shape[dim] *= 2
        data = pairs.reshape(shape).narrow(dim, 0, original_shape[dim])
        return data.to(torch.uint8)


class MXScaleTensor(_Codes):
    """A tensor of e8m0 scale codes (uint8), made from float32 values (`data`) or of a `size`
    to be filled by `random(low, high)`."""

    def random(self, low=None, high=None) -> MXScaleTensor:
        """Fill with codes drawn uniformly between those of `low` and `high` (each the code
        `MXScaleTensor` gives it: the power of two at or below it), all finite codes where
        not given; NaN (255) is never drawn. Returns self."""
        first = 0 if low is None else self._code_of(low)
        last = _E8M0_LARGEST if high is None else self._code_of(high)
        if first > last:
            raise ValueError(f"low ({low}) must not be above high ({high})")
        self.data = torch.randint(first, last + 1, self.size, dtype=torch.uint8, device=self.device)
        return self

    def to(self, dtype) -> torch.Tensor:
        """The float32 values of the codes: 2^(code - 127), NaN for 255 (code 0 is 2^-127, a
        float32 subnormal)."""
        _check_float32(dtype)
        # Each power of two is exact in float64 and stays exact cast to float32.
        table = torch.tensor(
            [2.0 ** (code - _E8M0_BIAS) for code in range(_E8M0_NAN)] + [float("nan")],
            dtype=torch.float64,
            device=self.data.device,
        ).to(torch.float32)
        return table[self.data.long()]

    @staticmethod
    def _from_float(values: torch.Tensor) -> torch.Tensor:
        """The code of floor(log2(value)), clamped to the finite codes (0..254); values that
        are not positive and finite (zero, negatives, Inf, NaN) give NaN (255). The exponent
        comes from `frexp`, exact where a float32 log2 would round up just below a power of
        two."""
        values = values.to(torch.float32)
        valid = torch.isfinite(values) & (values > 0)
        _, exponent = torch.frexp(torch.where(valid, values, torch.ones_like(values)))
        # frexp gives value = m * 2^exponent with m in [0.5, 1): floor(log2) is exponent - 1.
        code = (exponent.to(torch.int32) - 1 + _E8M0_BIAS).clamp(0, _E8M0_LARGEST)
        return torch.where(valid, code, _E8M0_NAN).to(torch.uint8)

    @classmethod
    def _code_of(cls, value) -> int:
        code = int(cls._from_float(torch.tensor([float(value)]))[0])
        if code == _E8M0_NAN:
            raise ValueError(f"a scale bound must be positive and finite, got {value}")
        return code


__all__ = ["MXFP4Tensor", "MXScaleTensor"]
