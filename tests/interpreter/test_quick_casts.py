"""The interpreter's quick conversions (NumPy casts, tables, round-to-odd through fp16) give the
bits of its bit-level path, on seeded samples aimed at every rounding boundary.

`convert` takes the quick way where there is one; `_bit_level` is the path it replaces, checked
itself against an independent model in test_floats.py.
"""

import numpy as np
import pytest

from naiad.runtime.interpreter import quick_casts
from naiad.runtime.interpreter.floats import _bit_level, convert, numpy_dtype

pytestmark = pytest.mark.filterwarnings("error")

FP8 = ("fp8e5", "fp8e4nv", "fp8e4b8", "fp8e5b16", "fp8e4b15")
WIDTH = {"fp64": 64, "fp32": 32}


def samples(src, rng):
    """Bit patterns of `src`: uniform; ties and their neighbours at each cut of the narrower
    formats' mantissas (fp16 / bf16 / fp8, subnormal results included); magnitudes near fp16's
    overflow and underflow; zeros, infinities and a few NaNs."""
    width, mant = {"fp32": (32, 23), "fp64": (64, 52)}[src]
    uniform = rng.integers(0, 1 << (width - 1), 40000, dtype=np.uint64) * np.uint64(2)
    uniform |= rng.integers(0, 2, uniform.size, dtype=np.uint64)
    values = np.concatenate(
        [
            rng.normal(0, s, 4000) * rng.choice([1.0, -1.0], 4000)
            for s in (1e-9, 3e-6, 1e-3, 1.0, 300.0, 6e4, 1e6)
        ]
    )
    near = values.astype(numpy_dtype(src)).view(f"uint{width}").astype(np.uint64)
    cuts = []
    # A result's last place anywhere from fp16's to fp8's or coarser, and fp32's from fp64.
    for keep in [*range(0, 11), *([23] if mant > 23 else [])]:
        d = np.uint64(mant - keep - 1)
        tie = (near >> (d + np.uint64(1)) << (d + np.uint64(1))) | (np.uint64(1) << d)
        cuts += [tie, tie + np.uint64(1), tie - np.uint64(1)]
    special = {
        "fp32": [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x477FEFFF, 0x477FF000],
        "fp64": [0, 1 << 63, 0x7FF0 << 48, 0xFFF0 << 48, 0x7FF8 << 48, 0x40EFFDFFFFFFFFFF],
    }[src]
    return np.concatenate([uniform, near, *cuts, np.array(special, np.uint64)])


def held(bits, name):
    width = numpy_dtype(name).itemsize * 8
    return bits.astype(f"uint{width}").view(numpy_dtype(name))


def assert_same_bits(values, src, dst, rounding):
    got = convert(values, src, dst, rounding)
    with np.errstate(all="ignore"):
        want = _bit_level(values, src, dst, rounding)
    assert got.dtype == want.dtype and got.shape == want.shape
    width = f"uint{got.dtype.itemsize * 8}"
    bad = np.flatnonzero(got.view(width) != want.view(width))
    pairs = [(hex(int(b)), got.view(width)[b], want.view(width)[b]) for b in bad[:6]]
    assert bad.size == 0, f"{bad.size} differ (index, got, want): {pairs}"


@pytest.mark.parametrize("src", ["fp32", "fp64"])
@pytest.mark.parametrize("dst", ["fp32", "fp16", "bf16", *FP8])
@pytest.mark.parametrize("rounding", ["rtne", "rtz"])
def test_narrowing_samples(src, dst, rounding):
    if src == dst:
        return
    bits = samples(src, np.random.default_rng(hash((src, dst, rounding)) % 2**32))
    finite = held(bits, src)
    finite = finite[~np.isnan(finite)]
    assert_same_bits(finite, src, dst, rounding)
    assert_same_bits(held(bits, src), src, dst, rounding)  # with NaNs: the bit-level path


@pytest.mark.parametrize("src", ["fp16", "bf16", *FP8])
@pytest.mark.parametrize("dst", ["fp64", "fp32", "fp16", "bf16", *FP8, "int8", "uint32"])
def test_every_narrow_pattern(src, dst):
    width = numpy_dtype(src).itemsize * 8
    patterns = np.arange(1 << width, dtype=f"uint{width}").view(numpy_dtype(src))
    with np.errstate(invalid="ignore"):  # ml_dtypes warns casting its NaNs
        numbers = patterns[~np.isnan(patterns.astype(np.float64))]
    if src != dst:
        for rounding in ("rtne", "rtz"):
            assert_same_bits(patterns, src, dst, rounding)
            assert_same_bits(numbers, src, dst, rounding)


def test_scalars_stay_arrays():
    for src, dst in [("fp64", "fp32"), ("fp32", "fp8e5"), ("fp8e5", "fp16"), ("bf16", "fp32")]:
        one = np.array(1.5).astype(numpy_dtype(src))
        out = convert(one, src, dst)
        assert isinstance(out, np.ndarray) and out.shape == ()


def test_flushing_subnormals_takes_the_bit_level_path():
    torch = pytest.importorskip("torch")
    x = np.array([2.0**-140, 2.0**-20, 1e-45], np.float64)
    want = convert(x, "fp64", "fp32")
    assert want[0] != 0
    torch.set_flush_denormal(True)
    try:
        assert not quick_casts._keeps_subnormals()
        assert np.array_equal(convert(x, "fp64", "fp32").view(np.uint32), want.view(np.uint32))
    finally:
        torch.set_flush_denormal(False)
    assert quick_casts._keeps_subnormals()


def test_tables_fill_in_as_patterns_come():
    quick_casts._TABLES.pop(("fp16", "fp8e4nv", "rtne"), None)
    x = np.linspace(-3, 3, 64, dtype=np.float32)
    first = convert(x, "fp32", "fp8e4nv")
    entry = quick_casts._TABLES[("fp16", "fp8e4nv", "rtne")]
    assert 0 < entry[1].sum() <= 64  # only the patterns met
    again = convert(x[::-1], "fp32", "fp8e4nv")
    assert quick_casts._TABLES[("fp16", "fp8e4nv", "rtne")] is entry
    assert np.array_equal(again.view(np.uint8), first.view(np.uint8)[::-1])
    wider = np.linspace(-500, 500, 999, dtype=np.float32)
    assert_same_bits(wider, "fp32", "fp8e4nv", "rtne")  # old and new patterns mixed
