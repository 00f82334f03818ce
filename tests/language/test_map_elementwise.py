"""`tl.map_elementwise`: a `@jit` function of scalars, with branches and loops on its arguments,
applied to every element; against NumPy on random inputs, in the interpreter and compiled."""

import numpy as np
import pytest
from fixture_kernels.scalar_maps import collatz_steps, divmod_packed, scaled_and_flag
from memory_helpers import assert_exact, kernel_error, poisoned, random_array, rng

import naiad
import naiad.language as tl


# -- scalar functions ------------------------------------------------------------------------------
@naiad.jit
def sign_of_difference(x, y):
    if x < y:
        return -1
    elif x == y:
        return 0
    else:
        return 1


@naiad.jit
def piecewise(x):
    if x > 1.0:
        y = x * x
    elif x > -1.0:
        y = (x + 1.0) * 0.5
    else:
        y = -x
    return y


@naiad.jit
def gcd(a, b):
    while b != 0:
        a, b = b, a % b
    return a


@naiad.jit
def divmod_(a, b):
    return a // b, a % b


@naiad.jit
def affine_packed3(x0, x1, x2, k0, k1, k2):
    return (x0 + 1.0) * k0, (x1 + 1.0) * k1, (x2 + 1.0) * k2


@naiad.jit
def clamp(x, lo, hi):
    if x < lo:
        x = lo
    if x > hi:
        x = hi
    return x


# -- kernels ---------------------------------------------------------------------------------------
@naiad.jit
def map_two(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr, FN: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    out = tl.map_elementwise(FN, tl.load(x_ptr + offs), tl.load(y_ptr + offs))
    tl.store(out_ptr + offs, out)


@naiad.jit
def map_one(x_ptr, out_ptr, BLOCK: tl.constexpr, FN: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.map_elementwise(FN, tl.load(x_ptr + offs)))


@naiad.jit
def map_pair(
    a_ptr,
    b_ptr,
    c_ptr,
    d_ptr,
    R: tl.constexpr,
    C: tl.constexpr,
    FN: tl.constexpr,
    PACK: tl.constexpr,
):
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    c, d = tl.map_elementwise(FN, tl.load(a_ptr + offs), tl.load(b_ptr + offs), pack=PACK)
    tl.store(c_ptr + offs, c)
    tl.store(d_ptr + offs, d)


@naiad.jit
def gcd_broadcast(a_ptr, b_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr):
    """A block of R x C against a row of C: the arguments broadcast together."""
    rows, cols = tl.arange(0, R)[:, None], tl.arange(0, C)[None, :]
    out = tl.map_elementwise(gcd, tl.load(a_ptr + rows * C + cols), tl.load(b_ptr + cols))
    tl.store(out_ptr + rows * C + cols, out)


@naiad.jit
def affine_pack3(x_ptr, out_ptr, k, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    (out,) = tl.map_elementwise(affine_packed3, tl.load(x_ptr + offs), k, pack=3)
    tl.store(out_ptr + offs, out)


@naiad.jit
def mixed_types(x_ptr, n_ptr, y_ptr, flag_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    y, flag = tl.map_elementwise(scaled_and_flag, tl.load(x_ptr + offs), tl.load(n_ptr + offs))
    tl.store(y_ptr + offs, y)
    tl.store(flag_ptr + offs, flag)


@naiad.jit
def clamp_by_scalars(x_ptr, out_ptr, lo, hi, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.map_elementwise(clamp, tl.load(x_ptr + offs), lo, hi))


# -- values ----------------------------------------------------------------------------------------
def test_branches_on_integers():
    gen = rng(1)
    x, y = (random_array(256, np.int32, gen, -4, 4) for _ in "xy")
    out = poisoned(256, np.int32)
    map_two[(1,)](x, y, out, BLOCK=256, FN=sign_of_difference)
    assert_exact(out, np.sign(x.astype(np.int64) - y).astype(np.int32))


def test_piecewise_float_function():
    gen = rng(2)
    x = random_array(512, np.float32, gen, -3.0, 3.0)
    out = poisoned(512, np.float32)
    map_one[(1,)](x, out, BLOCK=512, FN=piecewise)
    # (x + 1) * 0.5, not 0.5 * x + 0.5: a GPU may fuse a multiply and an add into one rounding.
    expected = np.where(x > 1, x * x, np.where(x > -1, (x + np.float32(1)) * np.float32(0.5), -x))
    assert_exact(out, expected.astype(np.float32))


def test_while_loop_in_the_scalar_function():
    gen = rng(3)
    n = random_array(64, np.int32, gen, 1, 60)
    out = poisoned(64, np.int32)
    map_one[(1,)](n, out, BLOCK=64, FN=collatz_steps)

    def steps(v):
        count = 0
        while v != 1:
            v = v // 2 if v % 2 == 0 else 3 * v + 1
            count += 1
        return count

    assert_exact(out, np.array([steps(int(v)) for v in n], np.int32))


def test_arguments_broadcast_together():
    gen = rng(4)
    a = random_array((8, 32), np.int32, gen, 1, 10_000)
    b = random_array(32, np.int32, gen, 1, 10_000)
    out = poisoned((8, 32), np.int32)
    gcd_broadcast[(1,)](a, b, out, R=8, C=32)
    assert_exact(out, np.gcd(a, b[None, :]).astype(np.int32))


@pytest.mark.parametrize("pack, fn", [(1, divmod_), (2, divmod_packed)])
def test_tuple_results(pack, fn):
    gen = rng(5 + pack)
    a = random_array((4, 64), np.uint32, gen, 1, 2**32 - 1)
    b = random_array((4, 64), np.uint32, gen, 1, 2**16)
    c, d = poisoned((4, 64), np.uint32), poisoned((4, 64), np.uint32)
    map_pair[(1,)](a, b, c, d, R=4, C=64, FN=fn, PACK=pack)
    assert_exact(c, a // b)
    assert_exact(d, a % b)


def test_pack_that_does_not_divide_the_block():
    """Pack 3 over 64 elements: the last group is incomplete, its missing lanes unused."""
    gen = rng(8)
    x = random_array(64, np.float32, gen)
    out = poisoned(64, np.float32)
    affine_pack3[(1,)](x, out, 1.5, BLOCK=64)
    assert_exact(out, (x + np.float32(1.0)) * np.float32(1.5))


def test_mixed_dtypes():
    gen = rng(9)
    x = random_array(128, np.float16, gen)
    n = random_array(128, np.int32, gen, -5, 5)
    y, flag = poisoned(128, np.float32), poisoned(128, np.int8)
    mixed_types[(1,)](x, n, y, flag, BLOCK=128)
    x32 = x.astype(np.float32)
    assert_exact(y, np.where(n > 0, x32 * n.astype(np.float32), x32))
    assert_exact(flag, (n > 0).astype(np.int8))


def test_scalar_arguments():
    gen = rng(10)
    x = random_array(256, np.float32, gen, -2.0, 2.0)
    out = poisoned(256, np.float32)
    clamp_by_scalars[(1,)](x, out, -0.75, 1.25, BLOCK=256)
    assert_exact(out, np.clip(x, np.float32(-0.75), np.float32(1.25)))


# -- errors ----------------------------------------------------------------------------------------
def plain_python(x):
    return x


@naiad.jit
def three_values(a0, a1):
    return a0, a1, a0


@naiad.jit
def nothing(a):
    a + 1


@naiad.jit
def map_packed(x_ptr, out_ptr, BLOCK: tl.constexpr, FN: tl.constexpr, PACK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.map_elementwise(FN, tl.load(x_ptr + offs), pack=PACK))


@pytest.mark.parametrize(
    "fn, pack, kind, match",
    [
        (plain_python, 1, TypeError, "must be a @jit function, got 'plain_python'"),
        (three_values, 2, ValueError, "multiple of 2 values .2 per result., but it returns 3"),
        (nothing, 1, ValueError, "returns no value"),
        (piecewise, 0, ValueError, "pack must be an int of at least 1, got 0"),
    ],
)
def test_bad_scalar_functions_are_named(fn, pack, kind, match):
    x = random_array(16, np.float32, rng(11))
    with kernel_error(match, kind):
        map_packed[(1,)](x, poisoned(16, np.float32), BLOCK=16, FN=fn, PACK=pack)
