"""Counter-based random numbers: Philox-4x32-10 (and its 4x64 variant), bit-exact with Triton.

Every value is a pure function of (seed, offset), so a kernel can regenerate the same random
numbers later (e.g. a dropout mask in the backward pass) without storing them.
"""

from __future__ import annotations

from . import dtypes as t
from . import math
from .core import jit
from .creation import to_tensor
from .debug import static_assert
from .iterators import static_range
from .math import umulhi

# Weyl-sequence key increments and round multipliers of Philox (Salmon et al., SC'11).
PHILOX_KEY_A = 0x9E3779B9
PHILOX_KEY_B = 0xBB67AE85
PHILOX_ROUND_A = 0xD2511F53
PHILOX_ROUND_B = 0xCD9E8D57
PHILOX_KEY_A_64 = 0x9E3779B97F4A7C15
PHILOX_KEY_B_64 = 0xBB67AE8584CAA73B
PHILOX_ROUND_A_64 = 0xD2E7470EE14C6C93
PHILOX_ROUND_B_64 = 0xCA5A826395121157
N_ROUNDS_DEFAULT = 10


@jit
def philox_impl(c0, c1, c2, c3, k0, k1, n_rounds=N_ROUNDS_DEFAULT):
    """Run `n_rounds` Philox rounds on the counter (c0..c3) with key (k0, k1)."""
    if c0.dtype == t.uint32:
        key_a, key_b, round_a, round_b = PHILOX_KEY_A, PHILOX_KEY_B, PHILOX_ROUND_A, PHILOX_ROUND_B
    else:
        key_a, key_b = PHILOX_KEY_A_64, PHILOX_KEY_B_64
        round_a, round_b = PHILOX_ROUND_A_64, PHILOX_ROUND_B_64
    for _ in static_range(n_rounds):
        prev_c0, prev_c2 = c0, c2
        c0 = umulhi(round_b, prev_c2) ^ c1 ^ k0
        c2 = umulhi(round_a, prev_c0) ^ c3 ^ k1
        # Wrap-around is the algorithm: exempt from debug mode's overflow check, as in Triton.
        c1 = math.mul(round_b, prev_c2, sanitize_overflow=False)
        c3 = math.mul(round_a, prev_c0, sanitize_overflow=False)
        k0 = math.add(k0, key_a, sanitize_overflow=False)
        k1 = math.add(k1, key_b, sanitize_overflow=False)
    return c0, c1, c2, c3


@jit
def philox(seed, c0, c1, c2, c3, n_rounds=N_ROUNDS_DEFAULT):
    """Philox of the counter (c0..c3) keyed by `seed`: 32-bit lanes for 32-bit counters, else 64.
    The seed is an integer (a pointer or a float is refused at compile time, as in Triton)."""
    seed = to_tensor(seed)
    static_assert(seed.dtype.is_int(), "the seed of a random number must be an integer")
    seed = seed.to(t.uint64)
    if to_tensor(c0).dtype.primitive_bitwidth == 32:
        int_dtype = t.uint32
        seed_hi = ((seed >> 32) & 0xFFFFFFFF).to(t.uint32)
        seed_lo = (seed & 0xFFFFFFFF).to(t.uint32)
    else:
        int_dtype = t.uint64
        seed_hi = seed * 0
        seed_lo = seed
    c0 = to_tensor(c0).to(int_dtype, bitcast=True)
    c1 = to_tensor(c1).to(int_dtype, bitcast=True)
    c2 = to_tensor(c2).to(int_dtype, bitcast=True)
    c3 = to_tensor(c3).to(int_dtype, bitcast=True)
    return philox_impl(c0, c1, c2, c3, seed_lo, seed_hi, n_rounds)


@jit
def randint(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    """One block of random 32-bit integers (the first Philox lane) for `offset`."""
    ret, _, _, _ = randint4x(seed, offset, n_rounds)
    return ret


@jit
def randint4x(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    """Four blocks of random uint32 for `offset`: the four lanes of Philox-4x32.

    A 64-bit offset fills the first two counter words (low, high), still with 32-bit Philox, as
    Triton does since 3.4 (triton-lang/triton#6832): the results are uint32 for every offset."""
    offset_lo = offset.to(t.uint32)
    zero = offset_lo * 0
    if offset.dtype.primitive_bitwidth > 32:
        offset_hi = (offset >> 32).to(t.uint32)
    else:
        offset_hi = zero
    return philox(seed, offset_lo, offset_hi, zero, zero, n_rounds)


@jit
def uint_to_uniform_float(x):
    """Random integers to floats uniform in [0, 1)."""
    if x.dtype == t.uint32 or x.dtype == t.int32:
        x = x.to(t.int32, bitcast=True)
        # The largest scale with INT32_MAX * scale < 1.0 after fp32 rounding.
        scale = 4.6566127342e-10
    else:
        x = x.to(t.int64, bitcast=True)
        scale = 1.0842020432385337e-19
    # -x - 1, spelled ~x so that INT_MIN does not trip the overflow check in debug mode.
    x = math.where(x < 0, ~x, x)
    return x * scale


@jit
def rand(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    """A block of floats uniform in [0, 1) for `offset`."""
    source = randint(seed, offset, n_rounds)
    return uint_to_uniform_float(source)


@jit
def rand4x(seed, offsets, n_rounds=N_ROUNDS_DEFAULT):
    """Four blocks of uniform floats for `offsets`."""
    i1, i2, i3, i4 = randint4x(seed, offsets, n_rounds)
    return (
        uint_to_uniform_float(i1),
        uint_to_uniform_float(i2),
        uint_to_uniform_float(i3),
        uint_to_uniform_float(i4),
    )


@jit
def pair_uniform_to_normal(u1, u2):
    """Box-Muller: two uniform blocks to two standard normal blocks."""
    u1 = math.maximum(1.0e-7, u1)
    th = 6.283185307179586 * u2
    r = math.sqrt(-2.0 * math.log(u1))
    return r * math.cos(th), r * math.sin(th)


@jit
def randn(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    """A block of standard normal floats for `offset`."""
    i1, i2, _, _ = randint4x(seed, offset, n_rounds)
    u1 = uint_to_uniform_float(i1)
    u2 = uint_to_uniform_float(i2)
    n1, _ = pair_uniform_to_normal(u1, u2)
    return n1


@jit
def randn4x(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    """Four blocks of standard normal floats for `offset`."""
    u1, u2, u3, u4 = rand4x(seed, offset, n_rounds)
    n1, n2 = pair_uniform_to_normal(u1, u2)
    n3, n4 = pair_uniform_to_normal(u3, u4)
    return n1, n2, n3, n4
