"""A tensor descriptor's fp16/bf16 `atomic_max` / `atomic_min`, shared by the checks that
compile it without a GPU (tests/backends/nvidia/test_atomics16_ptxas.py), the language tier
(tests/language/test_descriptor_atomics.py: the interpreter, the CPU's refusal) and the GPU
(tests/gpu/test_atomics16_gpu.py): the kernel, inputs that make the special cases common, and
a NumPy reference of the result.

The result is Naiad's definition, the interpreter's: IEEE 754-2019's maximum / minimum of the
element and every program's value, whatever order the programs come in: a NaN anywhere gives
NaN, and -0 is below +0. The reference computes it without the interpreter's code: in float64,
with the zeros moved just off zero so that the ordinary max / min orders them.
"""

import ml_dtypes
import numpy as np

import naiad
import naiad.language as tl

DTYPES = {"float16": np.dtype(np.float16), "bfloat16": np.dtype(ml_dtypes.bfloat16)}
_OFF_ZERO = 2.0**-200  # below every 16-bit float's smallest subnormal, exact in float64


@naiad.jit
def race_into_block(
    desc, dst, src, M, N, off_m, off_n, OP: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr
):
    """Program p combines block p of `src` into the block at (off_m, off_n) of `desc` (a host
    descriptor), or of an in-kernel descriptor over `dst` when `desc` is None: every program
    targets the same elements, so the atomics race."""
    if desc is None:
        desc = tl.make_tensor_descriptor(dst, [M, N], [N, 1], [BM, BN])
    p = tl.program_id(0)
    rows = tl.arange(0, BM)[:, None]
    cols = tl.arange(0, BN)[None, :]
    value = tl.load(src + p * BM * BN + rows * BN + cols)
    if OP == "max":
        desc.atomic_max([off_m, off_n], value)
    else:
        desc.atomic_min([off_m, off_n], value)


def special_values(shape, dtype: str, gen: np.random.Generator) -> np.ndarray:
    """Random values of `dtype` where ties, zeros of either sign, infinities and NaN are
    common: along the last axis, a third random normals, a third non-positive and a third
    non-negative picks among a few values (so that a max, resp. a min, often ends on a zero).
    The zeros' signs by row: all -0, all +0, or either; about one value in 300 is a NaN."""
    magnitudes = gen.choice([0.0, 0.0, 0.5, 1.0, 1.5, 3.0, np.inf], size=shape)
    column = np.arange(shape[-1]) % 3
    picked = np.where(column == 1, -magnitudes, magnitudes)
    row = (np.arange(shape[-2]) % 3)[:, None]
    zero_sign = np.where(row == 2, gen.choice([1.0, -1.0], size=shape), np.where(row, 1.0, -1.0))
    picked = np.where(magnitudes == 0, zero_sign * 0.0, picked)
    values = np.where(column == 0, gen.standard_normal(shape) * 4, picked)
    values = np.where(gen.random(shape) < 1 / 300, np.nan, values)
    return values.astype(DTYPES[dtype])


def reference(dst: np.ndarray, blocks: np.ndarray, off_m: int, off_n: int, op: str):
    """`dst` with every block of `blocks` combined in at (off_m, off_n), inside `dst` only."""
    out = dst.copy()
    m, n = dst.shape
    bm, bn = blocks.shape[1:]
    r0, c0 = max(off_m, 0), max(off_n, 0)
    r1, c1 = min(off_m + bm, m), min(off_n + bn, n)
    parts = blocks[:, r0 - off_m : r1 - off_m, c0 - off_n : c1 - off_n]
    stack = np.concatenate([out[None, r0:r1, c0:c1], parts]).astype(np.float64)
    zero = stack == 0
    stack = np.where(zero, np.copysign(_OFF_ZERO, stack), stack)
    combined = stack.max(axis=0) if op == "max" else stack.min(axis=0)  # NaN propagates
    combined = np.where(np.abs(combined) == _OFF_ZERO, np.copysign(0.0, combined), combined)
    out[r0:r1, c0:c1] = combined.astype(dst.dtype)
    return out


def assert_same(actual: np.ndarray, expected: np.ndarray) -> None:
    """Bit for bit (so -0 is not +0), any NaN equal to any NaN."""
    bits = np.dtype(np.uint16)
    nan = np.isnan(expected.astype(np.float32))
    got_nan = np.isnan(actual.astype(np.float32))
    bad = (nan != got_nan) | (~nan & (actual.view(bits) != expected.view(bits)))
    assert not bad.any(), (
        f"{int(bad.sum())} of {bad.size} differ; first at {np.argwhere(bad)[0]}: "
        f"{actual[bad][:4]} != {expected[bad][:4]}"
    )
