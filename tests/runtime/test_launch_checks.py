"""Launch checks every back end shares (issue 13, item 5): strings, byte order, negative strides,
grid limits.

Each case runs in the interpreter and compiled for the CPU, and, where a launch could take the
hot path (binder.py), once more after a good launch prepared it. Before: a string reached the
CPU back end as a signature (`unknown type string 'abc'`) or went through `int()`; a big-endian
array was read byte-swapped by every back end; a grid of 2**32 programs ran none on the CPU, one
of 2**31 gave negative program ids, and 2**20 x 2**20 ran for hours.
"""

import time

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.errors import KernelAssertionError, KernelIndexError


@pytest.fixture(params=["interpreter", "cpu"])
def backend(request):
    with knobs.override(NAIAD_BACKEND=request.param):
        yield request.param


@naiad.jit
def strided_copy(src, dst, n, stride, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs * stride, mask=mask), mask=mask)


def fresh(n=8, seed=0):
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


# -- strings --------------------------------------------------------------------------------------
@pytest.mark.parametrize("position, name", [(0, "src"), (2, "n"), (3, "stride")])
@pytest.mark.parametrize("text", ["abc", "*fp32", "8"])
def test_a_string_argument_is_named(backend, position, name, text):
    src, dst = fresh(), np.zeros(8, np.float32)
    args = [src, dst, 8, 1]
    strided_copy[(1,)](*args, 8)  # prepares the hot path: the string must not take it
    args[position] = text
    with pytest.raises(TypeError, match=f"strided_copy: argument `{name}`: expected an array"):
        strided_copy[(1,)](*args, 8)
    with pytest.raises(TypeError, match=f"argument `{name}`.*got str"):
        strided_copy.run(*args, 8, grid=(1,))


def test_signature_strings_still_warm_up():
    compiled = strided_copy.warmup("*fp32", "*fp32", "i32", "i32", 8, grid=(1,), target="cpu")
    assert "tt.func" in compiled.asm["ttir"]


# -- byte order -----------------------------------------------------------------------------------
def swapped(array: np.ndarray) -> np.ndarray:
    """The same numbers in the other byte order."""
    return array.astype(array.dtype.newbyteorder("S"))


def test_a_non_native_array_is_refused(backend):
    src, dst = fresh(), np.zeros(8, np.float32)
    strided_copy[(1,)](src, dst, 8, 1, 8)  # prepares the hot path for native float32
    np.testing.assert_array_equal(dst, src)
    other = swapped(src)
    np.testing.assert_array_equal(other, src)  # the numbers are right; their bytes are not native
    with pytest.raises(TypeError, match=r"argument `src`: expected an array in this machine's"):
        strided_copy[(1,)](other, dst, 8, 1, 8)
    with pytest.raises(TypeError, match=r"argument `dst`: .*-endian float32 array"):
        strided_copy[(1,)](src, swapped(dst), 8, 1, 8)
    with pytest.raises(TypeError, match=r"argument `src`: .*newbyteorder"):
        strided_copy[(1,)](naiad.reinterpret(other, tl.float32), dst, 8, 1, 8)


@naiad.jit
def pair_copy(pair, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(pair[1] + offs, tl.load(pair[0] + offs, mask=mask), mask=mask)


def test_a_tuples_leaves_are_checked_and_named_by_their_path(backend):
    src, dst = fresh(), fresh(seed=3)
    with pytest.raises(TypeError, match=r"argument `pair.0`: expected an array in this machine"):
        pair_copy[(1,)]((swapped(src), dst), 8, 8)
    with pytest.raises(TypeError, match=r"pair_copy: argument `pair.1`: expected an array"):
        pair_copy[(1,)]((src, "*fp32"), 8, 8)
    pair_copy[(1,)]((src, dst), 8, 8)
    np.testing.assert_array_equal(dst, src)


def test_native_order_spelled_explicitly_is_accepted(backend):
    src, dst = fresh().astype("=f4"), np.zeros(8, np.float32)
    strided_copy[(1,)](src, dst, 8, 1, 8)
    np.testing.assert_array_equal(dst, src)


# -- negative strides -----------------------------------------------------------------------------
def test_negative_strides_walked_by_their_strides(backend):
    """The kernel gets element [0] (the end of the buffer) and walks back: the same values on
    every back end, on the slow path and on the hot path a plain array prepared."""
    base, dst = fresh(), np.zeros(8, np.float32)
    strided_copy[(1,)](base, dst, 8, 1, 8)
    backwards = base[::-1]
    for seed in (1, 2):  # the first launch of a new key (stride -1 is not 1), then the hot path
        base[:] = fresh(seed=seed)
        strided_copy[(1,)](backwards, dst, 8, backwards.strides[0] // 4, 8)
        np.testing.assert_array_equal(dst, base[::-1])
    two_d = fresh(24).reshape(4, 6)[::-2, ::3]  # strides (-12, 3) in elements
    strided_copy[(1,)](two_d, dst, 2, two_d.strides[1] // 4, 8)
    np.testing.assert_array_equal(dst[:2], two_d[0])


def test_a_negative_view_walked_forward_is_out_of_bounds(backend):
    """Offsets past element [0] of `a[::-1]` leave `a`'s buffer: the interpreter and debug mode
    name the argument (outside debug mode it is undefined, as in Triton)."""
    backwards = fresh()[::-1]
    with pytest.raises(KernelIndexError, match="out-of-bounds load through argument `src`"):
        strided_copy[(1,)](backwards, np.zeros(8, np.float32), 8, 1, 8, debug=True)


# -- grids ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "grid, axis",
    [
        ((2**31,), "0 is 2147483648 \\(x\\)"),
        ((2**32, 2**32), "0 is 4294967296 \\(x\\)"),
        ((1, 65536), "1 is 65536 \\(y\\)"),
        ((2**20, 2**20), "1 is 1048576 \\(y\\)"),
        ((1, 1, 65536), "2 is 65536 \\(z\\)"),
        (lambda meta: (2**31,), "0 is 2147483648 \\(x\\)"),
    ],
)
def test_a_grid_beyond_cuda_limits_is_refused(backend, grid, axis):
    src, dst = fresh(), np.zeros(8, np.float32)
    strided_copy[(1,)](src, dst, 8, 1, 8)  # prepares the hot path
    with pytest.raises(ValueError, match=f"grid dimension {axis}: at most"):
        strided_copy[grid](src, dst, 8, 1, 8)
    with pytest.raises(ValueError, match=f"grid dimension {axis}"):
        strided_copy.run(src, dst, 8, 1, 8, grid=grid)


@naiad.jit
def fail_at_origin(out):
    x, y, z = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    tl.device_assert(x + y + z != 0, "program 0 fails")
    tl.store(out, tl.num_programs(0))


@pytest.mark.parametrize(
    "grid", [(2**31 - 1, 65535, 65535), (2**31 - 1, 65535, 2), (2**31 - 1,), (1, 65535, 65535)]
)
def test_the_largest_grids_are_launched(backend, grid):
    """Grids at CUDA's limits (up to 9.2e18 programs: the count is 64-bit) are launched: program 0
    fails its assert, which ends the launch at once and names program (0, 0, 0)."""
    start = time.perf_counter()
    with pytest.raises(KernelAssertionError, match=r"program 0 fails.* in program \(0, 0, 0\)"):
        fail_at_origin[grid](np.zeros(1, np.int32), debug=True)
    assert time.perf_counter() - start < 60
