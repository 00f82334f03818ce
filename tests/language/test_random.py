"""tl.randint / randint4x / rand / rand4x / randn / randn4x against an independent Philox-4x32-10
(and 4x64-10) written here from the algorithm (Salmon et al., SC'11) and Triton's conventions:
key = (seed & 0xffffffff, seed >> 32); counter = (offset's low word, its high word for a 64-bit
offset else 0, 0, 0): 32-bit Philox and uint32 results for every offset, as Triton does since 3.4
(triton-lang/triton#6832); uniform = (x < 0 ? -x - 1 : x) * scale in fp32."""

import math

import numpy as np
import pytest
from memory_helpers import assert_exact, poisoned

import naiad
import naiad.language as tl

_M32 = (1 << 32) - 1
_M64 = (1 << 64) - 1
# (round multiplier A, round multiplier B, key increment A, key increment B, lane bits)
_PHILOX32 = (0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85, 32)
_PHILOX64 = (0xD2E7470EE14C6C93, 0xCA5A826395121157, 0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B, 64)


def philox_block(counter, key, bits: int = 32, n_rounds: int = 10):
    """Philox-4xW-R of one counter (4 ints) under one key (2 ints), W = `bits`."""
    round_a, round_b, key_a, key_b, width = _PHILOX32 if bits == 32 else _PHILOX64
    mask = (1 << width) - 1
    c0, c1, c2, c3 = (int(c) & mask for c in counter)
    k0, k1 = (int(k) & mask for k in key)
    for _ in range(n_rounds):
        p0, p2 = c0, c2
        c0 = ((round_b * p2) >> width) ^ c1 ^ k0  # the high half of a full product
        c2 = ((round_a * p0) >> width) ^ c3 ^ k1
        c1 = (round_b * p2) & mask  # the low half
        c3 = (round_a * p0) & mask
        k0 = (k0 + key_a) & mask  # Weyl sequence of the key
        k1 = (k1 + key_b) & mask
    return c0, c1, c2, c3


def philox_reference(seed: int, offsets, bits: int = 32, n_rounds: int = 10):
    """The four uint32 lanes of Triton's randint4x for each offset of `bits` bits: key
    (seed & 0xffffffff, seed >> 32), counter (offset & 0xffffffff, offset >> 32 for 64-bit offsets
    else 0, 0, 0), 32-bit Philox either way."""
    seed &= _M64
    key = (seed & _M32, seed >> 32)
    lanes = ([], [], [], [])
    for offset in offsets:
        counter = (offset & _M32, (offset >> 32) & _M32 if bits == 64 else 0, 0, 0)
        for lane, value in zip(lanes, philox_block(counter, key, 32, n_rounds)):
            lane.append(value)
    return [np.array(lane, dtype=np.uint64).astype(np.uint32) for lane in lanes]


def _int_to_fp32(v: int) -> np.float32:
    """A non-negative integer rounded to fp32 (to nearest, ties to even), without NumPy casts."""
    if v.bit_length() <= 24:
        return np.float32(v)
    shift = v.bit_length() - 24
    q, r = divmod(v, 1 << shift)
    half = 1 << (shift - 1)
    if r > half or (r == half and q & 1):
        q += 1
    return np.float32(float(q << shift))  # q << shift has at most 25 significant bits


def uniform_reference(raw: np.ndarray, bits: int) -> np.ndarray:
    """Triton's uint_to_uniform_float: signed view, x<0 -> -x-1, times the fp32 scale."""
    scale = np.float32(4.6566127342e-10 if bits == 32 else 1.0842020432385337e-19)
    out = np.empty(raw.shape, np.float32)
    for i, u in enumerate(raw.reshape(-1)):
        x = int(u)
        if x >= 1 << (bits - 1):
            x -= 1 << bits
        if x < 0:
            x = -x - 1
        out.reshape(-1)[i] = _int_to_fp32(x) * scale  # one fp32 multiply, correctly rounded
    return out


def normal_reference(u1: np.ndarray, u2: np.ndarray):
    """Box-Muller on fp32 inputs, each step rounded to fp32, transcendentals in float64."""
    f = np.float32
    out1, out2 = np.empty(u1.shape, f), np.empty(u1.shape, f)
    for i, (a, b) in enumerate(zip(u1.reshape(-1), u2.reshape(-1))):
        a = max(f(1.0e-7), a)
        th = f(f(6.283185307179586) * b)
        r = f(math.sqrt(f(f(-2.0) * f(math.log(a)))))
        out1.reshape(-1)[i] = f(r * f(math.cos(th)))
        out2.reshape(-1)[i] = f(r * f(math.sin(th)))
    return out1, out2


# Known-answer vectors of Random123 (kat_vectors): (counter, key, output).
_KAT32 = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((_M32,) * 4, (_M32, _M32), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    (
        (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
        (0xA4093822, 0x299F31D0),
        (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
    ),
]
_KAT64 = [
    (
        (0, 0, 0, 0),
        (0, 0),
        (0x16554D9ECA36314C, 0xDB20FE9D672D0FDC, 0xD7E772CEE186176B, 0x7E68B68AEC7BA23B),
    ),
    (
        (0x243F6A8885A308D3, 0x13198A2E03707344, 0xA4093822299F31D0, 0x082EFA98EC4E6C89),
        (0x452821E638D01377, 0xBE5466CF34E90C6C),
        (0xA528F45403E61D95, 0x38C72DBD566E9788, 0xA5A1610E72FD18B5, 0x57BD43B5E52B7FE6),
    ),
]


@pytest.mark.parametrize("bits,case", [(32, c) for c in _KAT32] + [(64, c) for c in _KAT64])
def test_reference_matches_the_published_philox_vectors(bits, case):
    counter, key, output = case
    assert philox_block(counter, key, bits) == output


@naiad.jit
def _philox_kat(out, seed, c0, c1, c2, c3):
    # Scalars widened to 1-element blocks: tl.philox takes the counter words and the seed.
    one = tl.arange(0, 1)
    a, b, c, d = tl.philox(seed, c0 + one * 0, c1 + one * 0, c2 + one * 0, c3 + one * 0)
    tl.store(out + one, a)
    tl.store(out + 1 + one, b)
    tl.store(out + 2 + one, c)
    tl.store(out + 3 + one, d)


@pytest.mark.parametrize("case", _KAT32)
def test_tl_philox_matches_the_published_vectors(case):
    (c0, c1, c2, c3), (k0, k1), output = case
    out = poisoned(4, np.uint32)
    seed = (k1 << 32) | k0  # Triton's key is (seed & 0xffffffff, seed >> 32)
    counters = [np.uint32(c).view(np.int32).item() for c in (c0, c1, c2, c3)]
    _philox_kat[(1,)](out, seed, *counters)
    assert_exact(out, np.array(output, np.uint32))


@naiad.jit
def _philox_impl_kat(out, c0, c1, c2, c3, k0, k1):
    one = tl.arange(0, 1).to(tl.uint64)
    a, b, c, d = tl.philox_impl(
        c0 + one * 0, c1 + one * 0, c2 + one * 0, c3 + one * 0, k0 + one * 0, k1 + one * 0
    )
    tl.store(out + tl.arange(0, 1), a)
    tl.store(out + 1 + tl.arange(0, 1), b)
    tl.store(out + 2 + tl.arange(0, 1), c)
    tl.store(out + 3 + tl.arange(0, 1), d)


@pytest.mark.parametrize("case", _KAT64)
def test_tl_philox_impl_64_matches_the_published_vectors(case):
    counter, key, output = case
    out = poisoned(4, np.uint64)
    _philox_impl_kat[(1,)](out, *[int(x) for x in counter + key])
    assert_exact(out, np.array(output, np.uint64))


# -------------------------------------------------------------------------------------------------
# randint / randint4x: bit-exact
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _randint(out, seed, start, N, BLOCK: tl.constexpr, WIDE: tl.constexpr):
    pid = tl.program_id(0)
    offset = start + pid * BLOCK + tl.arange(0, BLOCK)
    if WIDE:
        offset = offset.to(tl.int64)
    r = tl.randint(seed, offset)
    tl.static_assert(r.dtype == tl.uint32)
    tl.store(out + offset - start, r, mask=offset - start < N)


_SEEDS = [1, 42, 124, 0xFFFFFFFF, 0x0000000FCAFEB0BA, 2**63 + 12345, 2**64 - 1]


@pytest.mark.parametrize("seed", _SEEDS)
@pytest.mark.parametrize("wide", [False, True], ids=["int32-offsets", "int64-offsets"])
def test_randint(seed, wide):
    n, block = 100, 32
    start = 7
    out = poisoned(n, np.uint32)
    _randint[(-(-n // block),)](out, seed, start, n, block, wide)
    expected = philox_reference(seed, range(start, start + n), 64 if wide else 32)[0]
    assert_exact(out, expected)


@naiad.jit
def _randint_const_seed(out, N: tl.constexpr, SEED: tl.constexpr):
    offset = tl.arange(0, N)
    tl.store(out + offset, tl.randint(SEED, offset))


@pytest.mark.parametrize("seed", [42, 0xFCAFEB0BA, 2**64 - 1])
def test_randint_constexpr_seed(seed):
    out = poisoned(64, np.uint32)
    _randint_const_seed[(1,)](out, 64, seed)
    assert_exact(out, philox_reference(seed, range(64))[0])


@naiad.jit
def _randint_large_offsets(out, seed, base, N: tl.constexpr):
    offset = base + tl.arange(0, N).to(tl.int64)
    tl.store(out + tl.arange(0, N), tl.randint(seed, offset))


def test_randint_64bit_offsets_above_2_to_the_32():
    base = 3 * 2**32 + 5
    out = poisoned(32, np.uint32)
    _randint_large_offsets[(1,)](out, 0xDEADBEEFCAFE, base, 32)
    assert_exact(out, philox_reference(0xDEADBEEFCAFE, range(base, base + 32), 64)[0])


@naiad.jit
def _randint4x(out, seed, N: tl.constexpr, WIDE: tl.constexpr):
    offset = tl.arange(0, N)
    if WIDE:
        offset = offset.to(tl.int64) + 2**40
    a, b, c, d = tl.randint4x(seed, offset)
    idx = tl.arange(0, N)
    tl.store(out + idx, a)
    tl.store(out + N + idx, b)
    tl.store(out + 2 * N + idx, c)
    tl.store(out + 3 * N + idx, d)


@pytest.mark.parametrize("seed", [5, 0xFCAFEB0BA, 2**63 + 1])
@pytest.mark.parametrize("wide", [False, True])
def test_randint4x_all_lanes(seed, wide):
    n = 64
    out = poisoned(4 * n, np.uint32)
    _randint4x[(1,)](out, seed, n, wide)
    offsets = range(2**40, 2**40 + n) if wide else range(n)
    assert_exact(out, np.concatenate(philox_reference(seed, offsets, 64 if wide else 32)))


@naiad.jit
def _philox_rounds(out, seed, N: tl.constexpr, ROUNDS: tl.constexpr):
    offset = tl.arange(0, N)
    tl.store(out + offset, tl.randint(seed, offset, n_rounds=ROUNDS))


@pytest.mark.parametrize("rounds", [1, 7])
def test_n_rounds(rounds):
    out = poisoned(32, np.uint32)
    _philox_rounds[(1,)](out, 99, 32, rounds)
    assert_exact(out, philox_reference(99, range(32), 32, rounds)[0])


# -------------------------------------------------------------------------------------------------
# rand / rand4x / randn / randn4x
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _rand(out, seed, N: tl.constexpr, WIDE: tl.constexpr):
    offset = tl.arange(0, N) + 1000
    if WIDE:
        offset = offset.to(tl.int64)
    x = tl.rand(seed, offset)
    tl.static_assert(x.dtype == tl.float32)
    tl.store(out + tl.arange(0, N), x)
    a, b, c, d = tl.rand4x(seed, offset)
    tl.store(out + N + tl.arange(0, N), a)
    tl.store(out + 2 * N + tl.arange(0, N), b)
    tl.store(out + 3 * N + tl.arange(0, N), c)
    tl.store(out + 4 * N + tl.arange(0, N), d)


@pytest.mark.parametrize("seed", [3, 0xFCAFEB0BA, 2**64 - 1])
@pytest.mark.parametrize("wide", [False, True])
def test_rand_and_rand4x_bit_exact(seed, wide):
    n, bits = 64, 64 if wide else 32
    out = poisoned(5 * n, np.float32)
    _rand[(1,)](out, seed, n, wide)
    lanes = philox_reference(seed, range(1000, 1000 + n), bits)
    uniforms = [uniform_reference(lane, 32) for lane in lanes]
    assert_exact(out, np.concatenate([uniforms[0]] + uniforms))


@naiad.jit
def _randn(out, seed, N: tl.constexpr):
    offset = tl.arange(0, N)
    x = tl.randn(seed, offset)
    tl.static_assert(x.dtype == tl.float32)
    tl.store(out + offset, x)
    a, b, c, d = tl.randn4x(seed, offset)
    tl.store(out + N + offset, a)
    tl.store(out + 2 * N + offset, b)
    tl.store(out + 3 * N + offset, c)
    tl.store(out + 4 * N + offset, d)


@pytest.mark.parametrize("seed", [11, 2**63 + 7])
def test_randn_and_randn4x(seed):
    """The uniforms are bit-exact (test above); log/sqrt/cos/sin are within a few ulp of
    correctly rounded, so Box-Muller is compared to a reference with float64 transcendentals."""
    n = 64
    out = poisoned(5 * n, np.float32)
    _randn[(1,)](out, seed, n)
    lanes = philox_reference(seed, range(n))
    u = [uniform_reference(lane, 32) for lane in lanes]
    n1, n2 = normal_reference(u[0], u[1])
    n3, n4 = normal_reference(u[2], u[3])
    expected = np.concatenate([n1, n1, n2, n3, n4])
    np.testing.assert_allclose(out, expected, rtol=4e-6, atol=4e-6)


# -------------------------------------------------------------------------------------------------
# statistics and limits
# -------------------------------------------------------------------------------------------------
@naiad.jit
def _rand_block(out, seed, N: tl.constexpr, NORMAL: tl.constexpr):
    offset = tl.arange(0, N)
    if NORMAL:
        tl.store(out + offset, tl.randn(seed, offset))
    else:
        tl.store(out + offset, tl.rand(seed, offset))


def _ks_statistic(samples, cdf):
    x = np.sort(samples.astype(np.float64))
    n = len(x)
    c = cdf(x)
    return max(np.max(np.arange(1, n + 1) / n - c), np.max(c - np.arange(n) / n))


@pytest.mark.parametrize("seed", [0, 2**40 + 3])
def test_rand_is_uniform(seed):
    n = 2**17  # 131072 >= 100000 samples
    out = poisoned(n, np.float32)
    _rand_block[(1,)](out, seed, n, False)
    assert ((out >= 0) & (out < 1)).all()
    assert abs(out.mean() - 0.5) < 1e-2
    assert _ks_statistic(out, lambda x: x) < 1e-2


@pytest.mark.parametrize("seed", [0, 2**40 + 3])
def test_randn_is_normal(seed):
    n = 2**17
    out = poisoned(n, np.float32)
    _rand_block[(1,)](out, seed, n, True)
    assert np.isfinite(out).all()
    assert abs(out.mean()) < 1e-2
    assert abs(out.std() - 1) < 1e-2
    normal_cdf = np.vectorize(lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2))))
    assert _ks_statistic(out[:20000], normal_cdf) < 2e-2


@naiad.jit
def _uniform_of(src, dst, N: tl.constexpr):
    idx = tl.arange(0, N)
    tl.store(dst + idx, tl.random.uint_to_uniform_float(tl.load(src + idx)))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32, np.uint64])
def test_uint_to_uniform_float_limits(dtype):
    """Triton's test_rand_limits: the extreme integers map just below 1.0, never to 1.0.
    (Unsigned inputs are read as signed: their extremes are 2**(bits-1) - 1 and 2**(bits-1).)"""
    info = np.iinfo(dtype)
    half = 1 << (np.dtype(dtype).itemsize * 8 - 1)
    src = np.array([info.min, info.max] if info.min < 0 else [half - 1, half], dtype)
    dst = poisoned(2, np.float32)
    _uniform_of[(1,)](src, dst, 2)
    assert dst[0] == dst[1]
    assert 1.0 - np.finfo(np.float32).eps <= dst[0] < 1.0


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64])
def test_uint_to_uniform_float_bit_exact(dtype):
    bits = np.dtype(dtype).itemsize * 8
    gen = np.random.default_rng(12)
    src = gen.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, 64, dtype=dtype, endpoint=True)
    src[:4] = np.array([1, 2, 3, np.iinfo(dtype).max // 2], dtype)
    dst = poisoned(64, np.float32)
    _uniform_of[(1,)](src, dst, 64)
    assert_exact(dst, uniform_reference(src.view(f"u{bits // 8}"), bits))
    assert ((dst >= 0) & (dst < 1)).all()


@naiad.jit
def _rand_of_seed(out, seed, N: tl.constexpr):
    offset = tl.arange(0, N)
    tl.store(out + offset, tl.rand(seed, offset))


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
def test_the_seed_must_be_an_integer(backend):
    """A pointer or a float seed is refused at compile time, as in Triton; an integer seed
    gives Philox's uniform floats, bit for bit."""
    out = poisoned(16, np.float32)
    with naiad.knobs.override(NAIAD_BACKEND=backend):
        for seed in (np.zeros(1, np.int32), 2.3):
            with pytest.raises(naiad.CompilationError, match="seed of a random number"):
                _rand_of_seed[(1,)](out, seed, 16)
        _rand_of_seed[(1,)](out, 1234, 16)
    ints = philox_reference(1234, range(16))[0]
    assert_exact(out, uniform_reference(ints, 32))
