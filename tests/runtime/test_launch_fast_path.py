"""The launch hot path (binder.py, jit.py, the prepared CPU and CUDA launches).

A launch whose key was prepared must compute what the slow path computes: the same values, the
same compiled specialization, the same errors. Each case launches twice on fresh random inputs:
the first launch takes the slow path and prepares, the second must take the hot path (the slow
path is spied on) and use the kernel the slow path would have chosen. CPU kernels run compiled;
the CUDA hot path is test_cuda_fast_launch.py's (a driver stand-in) and tests/gpu's.
"""

from types import SimpleNamespace
from typing import NamedTuple

import numpy as np
import pytest
import torch

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.errors import NaiadError
from naiad.runtime.binder import Unbound, make_binder
from naiad.runtime.cpu_launcher import cpu_options
from naiad.runtime.specialization import Specialization
from naiad.tools.tensor_descriptor import TensorDescriptor

OFFSET = tl.constexpr(0.5)


@naiad.jit
def axpy(x_ptr: tl.const, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr, SQUARE: tl.constexpr = 0):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if SQUARE:
        x = x * x
    tl.store(out_ptr + offs, alpha * x + tl.load(y_ptr + offs, mask=mask) + OFFSET, mask=mask)


@naiad.jit
def maybe_bias(x_ptr, bias_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if bias_ptr is not None:
        x = x + tl.load(bias_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x, mask=mask)


@naiad.jit(do_not_specialize=["n"])
def copy_unspecialized(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@naiad.jit(do_not_specialize_on_alignment=["x_ptr"])
def copy_any_alignment(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@naiad.jit
def scale_tiles(desc, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    block = desc.load([tl.program_id(0) * BM, 0])
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(out_ptr + offs_m[:, None] * N + offs_n[None, :], block * 2, mask=mask)


@naiad.jit
def tuple_axpy(xs, out, consts, BLOCK: tl.constexpr):
    """out = xs[0] * alpha + xs[1][0] * k (+ xs[1][1] unless None), (alpha, k) = consts."""
    offs = tl.arange(0, BLOCK)
    acc = tl.load(xs[0] + offs) * consts[0] + tl.load(xs[1][0] + offs) * consts[1]
    if xs[1][1] is not None:
        acc += tl.load(xs[1][1] + offs)
    tl.store(out + offs, acc)


class Consts(NamedTuple):
    alpha: float
    k: int


KERNELS = (axpy, maybe_bias, copy_unspecialized, copy_any_alignment, scale_tiles, tuple_axpy)


@pytest.fixture(autouse=True)
def compiled_for_the_cpu(cpu_fresh_cache):
    for kernel in KERNELS:
        kernel.forget_compiled()


@pytest.fixture
def slow_calls(monkeypatch):
    """The launches that took the slow path, per kernel (a list of kernel names)."""
    calls = []
    for kernel in KERNELS:
        original = kernel._run_slow

        def spy(*args, _original=original, _name=kernel.__name__):
            calls.append(_name)
            return _original(*args)

        monkeypatch.setattr(kernel, "_run_slow", spy)
    return calls


def _random(n, dtype=np.float32, seed=0, offset=0):
    """Random values in +-[0.5, 2), from element `offset` of a larger array (misaligned when
    offset * itemsize is not a multiple of 16)."""
    gen = np.random.default_rng(seed)
    values = gen.uniform(0.5, 2.0, n + offset) * gen.choice([-1.0, 1.0], n + offset)
    return values.astype(dtype)[offset:]


def _slow_key(kernel, args, kwargs):
    """The specialization the slow path keys the CPU kernel by."""
    kwargs = {k: v for k, v in kwargs.items() if k in kernel.arg_names}
    return Specialization.of(kernel, kernel._bind(args, kwargs)).key


def _uses_the_slow_paths_kernel(kernel, grid, args, kwargs):
    """Whether the launch prepared for this call runs the kernel the slow path would run."""
    binder = make_binder(kernel.params)
    key, _, _ = binder(knobs.launch_settings(), grid, *args, **kwargs)
    prepared = kernel._launches[key]
    options = cpu_options(SimpleNamespace(num_warps=kwargs.get("num_warps", 4)), debug=False)
    loaded = kernel._launchers["cpu"].kernels[(_slow_key(kernel, args, kwargs), options)]
    return prepared._entry == loaded.entry


def _axpy_reference(x, y, alpha, square):
    x = x.astype(np.float64)
    return alpha * (x * x if square else x) + y + 0.5


AXPY_CASES = {
    "positional": lambda x, y, o, n: ((x, y, o, n, 2.5, 64), {}),
    "keywords": lambda x, y, o, n: ((x,), dict(y_ptr=y, out_ptr=o, n=n, alpha=2.5, BLOCK=64)),
    "constexpr given": lambda x, y, o, n: ((x, y, o, n, 2.5, 64, 1), {}),
    "constexpr by keyword": lambda x, y, o, n: ((x, y, o, n, -1.5), dict(BLOCK=32, SQUARE=1)),
    "int scalar": lambda x, y, o, n: ((x, y, o, n, 3, 64), {}),
    "bool scalar": lambda x, y, o, n: ((x, y, o, n, True, 64), {}),
    "options": lambda x, y, o, n: ((x, y, o, n, 2.5, 64), dict(num_warps=8, num_stages=2)),
    "numpy float64": lambda x, y, o, n: ((x, y, o, n, np.float64(0.75), 64), {}),
}


@pytest.mark.parametrize("case", list(AXPY_CASES))
@pytest.mark.parametrize("n", [1, 100, 256])
@pytest.mark.parametrize("arrays", ["numpy", "torch"])
def test_hot_path_computes_what_the_slow_path_computes(slow_calls, case, n, arrays):
    for launch in range(2):
        x, y = _random(n, seed=launch), _random(n, seed=launch + 10)
        out = np.full(n, np.nan, np.float32)
        x.flags.writeable = False  # an input may be read-only (`tl.const`)
        if arrays == "torch":
            x, y, out = torch.from_numpy(x.copy()), torch.from_numpy(y), torch.from_numpy(out)
        args, kwargs = AXPY_CASES[case](x, y, out, n)
        grid = lambda meta: (naiad.cdiv(meta["n"], meta["BLOCK"]),)
        axpy[grid](*args, **kwargs)
        named = {**dict(zip(axpy.arg_names, args)), **kwargs}
        alpha, square = named["alpha"], named.get("SQUARE", 0)
        expected = _axpy_reference(np.asarray(x), np.asarray(y), alpha, square)
        np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6, atol=1e-5)
    assert slow_calls == ["axpy"]
    assert _uses_the_slow_paths_kernel(axpy, grid, args, kwargs)


@pytest.mark.parametrize(
    "change",
    ["aligned", "misaligned", "n == 1", "n % 16", "float64", "grid 2-D"],
)
def test_hot_path_respecializes_when_a_key_fact_changes(slow_calls, change):
    """A launch prepared for aligned float32 arrays and n = 256 never serves a launch that
    differs in alignment, ==1, %16, dtype or integer width: those take the slow path, which
    compiles what they need, and prepare their own launch."""

    def launch(n, dtype=np.float32, offset=0, seed=0, grid=None):
        x, y = _random(n, dtype, seed, offset), _random(n, dtype, seed + 1, offset)
        out = np.full(n, np.nan, dtype)
        grid = grid or (naiad.cdiv(n, 64),)
        axpy[grid](x, y, out, n, 2.0, 64)
        np.testing.assert_allclose(out, _axpy_reference(x, y, 2.0, 0), rtol=1e-6, atol=1e-5)
        assert _uses_the_slow_paths_kernel(axpy, grid, (x, y, out, n, 2.0, 64), {})

    launch(256)
    launch(256, seed=1)
    assert len(slow_calls) == 1
    variants = {
        "aligned": dict(n=256, seed=2),
        "misaligned": dict(n=256, offset=1),
        "n == 1": dict(n=1),
        "n % 16": dict(n=255),
        "float64": dict(n=256, dtype=np.float64),
        "grid 2-D": dict(n=256, grid=(4, 3)),
    }
    variant = variants[change]
    launch(**variant)
    launch(**{**variant, "seed": 7})
    same_specialization = change in ("aligned", "grid 2-D")
    assert len(slow_calls) == (1 if same_specialization else 2)


def test_integers_beyond_int32_are_keyed_by_width():
    binder = make_binder(axpy.params)
    x = np.ones(4, np.float32)
    keys = [binder((), (1,), x, x, x, n, 1.0, 64)[0][10] for n in (2**31 - 1, 2**31, 2**63, -16)]
    assert keys[0] == 0 and keys[1] == ("i64", True) and keys[2] == ("u64", True)
    assert keys[3] == 16
    with pytest.raises(Unbound):
        binder((), (1,), x, x, x, 2**64, 1.0, 64)


def test_constexprs_of_equal_hash_are_told_apart():
    binder = make_binder(axpy.params)
    x = np.ones(4, np.float32)
    keys = {binder((), (1,), x, x, x, 4, 1.0, 64, block)[0] for block in (1, 1.0, True)}
    assert len(keys) == 3


def test_a_numpy_scalar_is_never_taken_for_an_array(slow_calls):
    """A float32 NumPy scalar has an `__array_interface__` like a read-only float32 array, whose
    launch is prepared here: the binder leaves it to the slow path, which refuses it."""
    x, y = _random(64), _random(64, seed=1)
    out = np.empty_like(x)
    x.flags.writeable = False
    for _ in range(2):
        axpy[(1,)](x, y, out, 64, 1.0, 64)
    for _ in range(2):
        with pytest.raises(TypeError, match=r"is a NumPy scalar \(float32\)"):
            axpy[(1,)](np.float32(1.0), y, out, 64, 1.0, 64)
    assert len(slow_calls) == 3


def test_a_none_argument_specializes(slow_calls):
    x, bias = _random(100), _random(100, seed=3)
    for _ in range(2):
        out = np.full(100, np.nan, np.float32)
        maybe_bias[(2,)](x, None, out, 100, BLOCK=64)
        np.testing.assert_array_equal(out, x)
    for _ in range(2):
        out = np.full(100, np.nan, np.float32)
        maybe_bias[(2,)](x, bias, out, 100, BLOCK=64)
        np.testing.assert_array_equal(out, x + bias)
    assert slow_calls == ["maybe_bias", "maybe_bias"]


def test_do_not_specialize_shares_one_kernel(slow_calls):
    for n in (16, 17, 1, 33):
        x = _random(n, seed=n)
        out = np.full(n, np.nan, np.float32)
        copy_unspecialized[(1,)](x, out, n, BLOCK=64)
        np.testing.assert_array_equal(out, x)
    assert slow_calls == ["copy_unspecialized"]
    assert len(copy_unspecialized._launchers["cpu"].kernels) == 1


def test_do_not_specialize_on_alignment_serves_any_alignment(slow_calls):
    for offset in (0, 1, 3, 4):
        x = _random(100, seed=offset, offset=offset)
        out = np.full(100, np.nan, np.float32)
        copy_any_alignment[(2,)](x, out, 100, BLOCK=64)
        np.testing.assert_array_equal(out, x)
    assert slow_calls == ["copy_any_alignment"]


def test_tensor_descriptors_take_the_slow_path(slow_calls):
    a = _random(40 * 32).reshape(40, 32)
    for _ in range(2):
        out = np.full_like(a, np.nan)
        scale_tiles[(3,)](TensorDescriptor.from_tensor(a, [16, 32]), out, 40, 32, BM=16, BN=32)
        np.testing.assert_array_equal(out, a * 2)
    assert slow_calls == ["scale_tiles", "scale_tiles"]


def test_tuples_take_the_hot_path_and_respecialize_on_their_leaves(slow_calls):
    """A tuple's leaves are keyed as arguments of their own, nested, with the tuple's class:
    fresh values of the same facts take the hot path, a leaf's new fact (an integer becoming
    1, a misaligned array, None for an array, a torch tensor) or another class the slow path."""
    x, y, z = _random(32, seed=4), _random(32, seed=5), _random(32, seed=6)
    cases = [
        ((x, (y, z)), Consts(1.5, 3), "slow"),
        ((_random(32, seed=7), (y, _random(32, seed=8))), Consts(-0.5, 5), "hot"),
        ((x, (y, z)), Consts(2.0, 1), "slow"),  # k == 1: a constant
        ((x, (y, None)), Consts(2.0, 7), "slow"),
        ((_random(32, seed=9, offset=1), (y, z)), Consts(2.0, 7), "slow"),  # misaligned
        ((torch.from_numpy(x), (y, z)), Consts(2.0, 7), "slow"),
        ((x, (y, z)), (2.0, 7), "slow"),  # a plain tuple, not Consts
        ((torch.from_numpy(z), (x, y)), Consts(0.25, 9), "hot"),
    ]
    for xs, consts, path in cases:
        slow_calls.clear()
        out = np.full(32, np.nan, np.float32)
        tuple_axpy[(1,)](xs, out, consts, BLOCK=32)
        first, (second, third) = (np.asarray(xs[0]), xs[1])
        expected = first * np.float32(consts[0]) + second * np.float32(consts[1])
        if third is not None:
            expected += third
        np.testing.assert_allclose(out, expected, rtol=1e-6)
        assert slow_calls == (["tuple_axpy"] if path == "slow" else []), (xs, consts)


def test_a_changed_global_is_still_an_error():
    global OFFSET
    x, y = _random(64), _random(64, seed=1)
    out = np.empty_like(x)
    for _ in range(2):
        axpy[(1,)](x, y, out, 64, 1.0, 64)
    saved = OFFSET
    OFFSET = tl.constexpr(1.5)
    try:
        with pytest.raises(NaiadError, match="global variable `OFFSET` has changed"):
            axpy[(1,)](x, y, out, 64, 1.0, 64)
    finally:
        OFFSET = saved
    axpy[(1,)](x, y, out, 64, 1.0, 64)
    np.testing.assert_allclose(out, _axpy_reference(x, y, 1.0, 0), rtol=1e-6, atol=1e-5)


def test_settings_and_forgotten_kernels_take_the_slow_path(slow_calls, monkeypatch):
    x, y = _random(64), _random(64, seed=1)
    out = np.empty_like(x)
    interpreted = []
    monkeypatch.setattr(
        "naiad.runtime.jit.run_grid", lambda *args: interpreted.append(args[0].__name__)
    )
    for _ in range(2):
        axpy[(1,)](x, y, out, 64, 1.0, 64)
    with knobs.override(NAIAD_BACKEND="interpreter"):
        axpy[(1,)](x, y, out, 64, 1.0, 64)
    assert interpreted == ["axpy"]
    monkeypatch.setenv("NAIAD_DEBUG", "1")  # debug launches are never prepared
    axpy[(1,)](x, y, out, 64, 1.0, 64)
    axpy[(1,)](x, y, out, 64, 1.0, 64)
    monkeypatch.delenv("NAIAD_DEBUG")
    axpy[(1,)](x, y, out, 64, 1.0, 64)
    axpy.debug = True  # drops the prepared launches
    axpy[(1,)](x, y, out, 64, 1.0, 64)
    axpy.debug = None
    axpy[(1,)](x, y, out, 64, 1.0, 64)
    axpy.forget_compiled()  # compiled kernels forgotten: the prepared launch too
    out[:] = np.nan
    axpy[(1,)](x, y, out, 64, 1.0, 64)
    np.testing.assert_allclose(out, _axpy_reference(x, y, 1.0, 0), rtol=1e-6, atol=1e-5)
    assert slow_calls == ["axpy"] * 7


def test_an_override_of_another_setting_keeps_the_hot_path(slow_calls):
    """Overriding a setting that does not steer launches (NAIAD_NUM_THREADS) leaves the launch
    settings as the environment gives them; overriding one that does still changes them."""
    x, y = _random(64), _random(64, seed=1)
    out = np.empty_like(x)
    axpy[(1,)](x, y, out, 64, 1.0, 64)
    plain = knobs.launch_settings()
    with knobs.override(NAIAD_NUM_THREADS=1):
        assert knobs.launch_settings() == plain
        out[:] = np.nan
        axpy[(1,)](x, y, out, 64, 1.0, 64)
        with knobs.override(NAIAD_DEBUG="1"):
            assert knobs.launch_settings() != plain
    np.testing.assert_allclose(out, _axpy_reference(x, y, 1.0, 0), rtol=1e-6, atol=1e-5)
    assert slow_calls == ["axpy"]


def test_errors_are_the_slow_paths(slow_calls):
    x = _random(64)
    out = np.full_like(x, 7.0)
    axpy[(1,)](x, x, out, 64, 1.0, 64)
    with pytest.raises(TypeError, match="missing required argument 'alpha'"):
        axpy[(1,)](x, x, out, 64, BLOCK=64)
    with pytest.raises(TypeError, match="unexpected keyword argument 'BLOK'"):
        axpy[(1,)](x, x, out, 64, 1.0, BLOK=64)
    with pytest.raises(TypeError, match="takes 7 arguments but 8 were given"):
        axpy[(1,)](x, x, out, 64, 1.0, 64, 0, 5)
    with pytest.raises(ValueError, match="must be non-negative"):
        axpy[(-1,)](x, x, out, 64, 1.0, 64)
    with pytest.raises(ValueError, match="num_warps must be a power of 2"):
        axpy[(1,)](x, x, out, 64, 1.0, 64, num_warps=3)
    out[:] = 7.0
    axpy[(0,)](x, x, out, 64, 1.0, 64)  # an empty grid runs nothing
    assert (out == 7.0).all()


def test_the_entry_reads_no_name_a_kernel_can_take(monkeypatch):
    """The generated entry is named after its kernel in errors, and its code reads only its own
    `__` names: a kernel named `len` with a parameter named `type` launches on the hot path."""

    @naiad.jit
    def len(type, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(type + offs, mask=offs < n) * 2.0, mask=offs < n)

    slow = []
    original = len._run_slow
    monkeypatch.setattr(len, "_run_slow", lambda *args: slow.append(1) or original(*args))
    for seed in range(3):
        x = _random(64, seed=seed)
        out = np.full_like(x, np.nan)
        len[(1,)](x, out, 64, BLOCK=64)
        np.testing.assert_array_equal(out, x * 2.0)
    assert slow == [1]
    with pytest.raises(TypeError, match=r"^len\(\) got multiple values for argument 'n'"):
        len[(1,)](x, out, 64, n=64, BLOCK=64)


def test_what_wraps_run_sees_every_launch_the_hot_path_does_not_take(monkeypatch):
    """Tools and tests wrap `JITFunction.run` (the GPU language tests move NumPy arrays to the
    GPU there): `kernel[grid]` calls it, looked up at that moment, on every miss."""
    seen = []
    run = naiad.JITFunction.run

    def wrapped(kernel, *args, grid, **kwargs):
        seen.append((kernel.__name__, grid, kwargs.get("BLOCK")))
        return run(kernel, *args, grid=grid, **kwargs)

    monkeypatch.setattr(naiad.JITFunction, "run", wrapped)
    x, y = _random(64, seed=3), _random(64, seed=4)
    for alpha, block in ((1.5, 64), (1.5, 64), (-2.0, 32)):
        out = np.full_like(x, np.nan)
        axpy[lambda meta: (64 // meta["BLOCK"],)](x, y, out, 64, alpha, BLOCK=block)
        np.testing.assert_allclose(out, _axpy_reference(x, y, alpha, 0), rtol=1e-6, atol=1e-5)
    assert seen == [("axpy", (1, 1, 1), 64), ("axpy", (2, 1, 1), 32)]


def test_heuristics_and_autotune_wrappers_reach_the_hot_path(slow_calls):
    tuned = naiad.autotune(
        configs=[naiad.Config({"BLOCK": 32}), naiad.Config({"BLOCK": 64})], key=["n"]
    )(naiad.heuristics({"SQUARE": lambda args: int(args["alpha"] < 0)})(axpy))
    for seed, alpha in enumerate((2.0, 2.0, -1.0, -1.0)):
        x, y = _random(100, seed=seed), _random(100, seed=seed + 5)
        out = np.full_like(x, np.nan)
        tuned[lambda meta: (naiad.cdiv(100, meta["BLOCK"]),)](x, y, out, 100, alpha)
        np.testing.assert_allclose(
            out, _axpy_reference(x, y, alpha, alpha < 0), rtol=1e-6, atol=1e-5
        )
    # Tuning runs each config many times, and each (BLOCK, SQUARE) pair is slow only once:
    # both configs with SQUARE = 0 while tuning, then the best one with SQUARE = 1.
    assert len(slow_calls) == 3


def test_kernels_of_the_same_parameters_share_compiled_code_not_globals():
    """Two kernels with the same parameter list generate the same launch source, compiled once
    (binder.define's cache); each entry still runs with its own kernel and arguments."""
    from naiad.runtime import binder

    def make(scale):
        @naiad.jit
        def scaled(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offsets < n
            tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * scale, mask=mask)

        return scaled

    first, second = make(2.0), make(3.0)
    x = np.random.default_rng(11).standard_normal(100).astype(np.float32)
    outs = []
    for kernel in (first, second, first):
        out = np.full_like(x, np.nan)
        kernel[(2,)](x, out, x.size, BLOCK=64)
        outs.append(out)
    np.testing.assert_array_equal(outs[0], x * np.float32(2.0))
    np.testing.assert_array_equal(outs[1], x * np.float32(3.0))
    np.testing.assert_array_equal(outs[2], outs[0])
    sources = [key for key in binder._COMPILED if key[1] == "<naiad launch>"]
    assert len(sources) == len(set(sources))
    codes = {id(code) for key, code in binder._COMPILED.items() if key[1] == "<naiad launch>"}
    assert len(codes) == len(sources)
