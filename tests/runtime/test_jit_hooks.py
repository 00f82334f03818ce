"""Triton's JIT hooks on Naiad (runtime/jit_hooks.py): the cache hook is called before a JIT
function compiles a specialization it has not loaded, at a launch and at a warmup, never for
a kernel found in memory; a true result skips the compile and the launch; the post-compile
hook follows each compile. The `specialization_data` the hooks get compiles the same kernel
again through `preload`, and `device_caches[...][0].clear()` drops the loaded kernels.
Kernels are compiled for this machine's CPU on NumPy arrays, their values checked against
NumPy."""

import json
from typing import NamedTuple

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.runtime import specialization_data
from naiad.triton import knobs as triton_knobs


class Pair(NamedTuple):
    scale: float
    shift: object


@naiad.jit
def scale_shift(x, y, n, pair, BLOCK: tl.constexpr, KIND: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    value = tl.load(x + offsets, mask=mask).to(KIND) * pair.scale + pair.shift
    tl.store(y + offsets, value, mask=mask)


def _arguments(rng, n=100):
    x = rng.standard_normal(128).astype(np.float32)
    y = rng.standard_normal(128).astype(np.float32)
    return x, y, n, Pair(float(rng.uniform(1, 2)), tl.constexpr(0.5))


def _expected(x, n, pair):
    return x[:n].astype(np.float64) * pair.scale + 0.5


@pytest.fixture
def calls(cpu_fresh_cache):
    """The hooks' calls, in order: ("cache" | "post", their keyword arguments)."""
    seen = []
    with knobs.override(
        NAIAD_JIT_CACHE_HOOK=lambda **kw: seen.append(("cache", kw)) and False,
        NAIAD_JIT_POST_COMPILE_HOOK=lambda **kw: seen.append(("post", kw)),
    ):
        scale_shift.forget_compiled()
        yield seen
    scale_shift.forget_compiled()


def test_hooks_follow_compiles_not_launches(calls):
    rng = np.random.default_rng(0)
    x, y, n, pair = _arguments(rng)
    scale_shift[(1,)](x, y, n, pair, BLOCK=128, KIND=tl.float32)
    np.testing.assert_allclose(y[:n], _expected(x, n, pair), rtol=1e-6, atol=1e-6)
    scale_shift[(1,)](x, y, n, pair, BLOCK=128, KIND=tl.float32)  # loaded: no hook
    assert [kind for kind, _ in calls] == ["cache", "post"]
    arguments = calls[0][1]
    assert arguments == calls[1][1]
    assert arguments["fn"].jit_function is scale_shift and arguments["fn"].name == "scale_shift"
    assert arguments["repr"].startswith("scale_shift[num_warps=4,")
    compiled = arguments["compile"]
    assert compiled["device"] == "cpu" and compiled["is_warmup"] is False
    assert compiled["constants"]["BLOCK"] == 128 and compiled["signature"]["x"] == "*fp32"
    scale_shift[(1,)](x, y, n, pair, BLOCK=128, KIND=tl.float32, num_warps=1)
    assert len(calls) == 4 and calls[2][1]["compile"]["num_warps"] == 1


def test_a_true_cache_hook_skips_the_compile_and_the_launch(cpu_fresh_cache):
    rng = np.random.default_rng(1)
    x, y, n, pair = _arguments(rng)
    before = y.copy()
    scale_shift.forget_compiled()
    with knobs.override(NAIAD_JIT_CACHE_HOOK=lambda **kw: True):
        assert scale_shift[(1,)](x, y, n, pair, BLOCK=128, KIND=tl.float32) is None
        assert scale_shift.warmup(x, y, n, pair, BLOCK=128, KIND=tl.float32, grid=(1,)) is None
    np.testing.assert_array_equal(y, before)
    assert len(scale_shift.device_caches["cpu"][0]) == 0
    scale_shift[(1,)](x, y, n, pair, BLOCK=128, KIND=tl.float32)
    np.testing.assert_allclose(y[:n], _expected(x, n, pair), rtol=1e-6, atol=1e-6)


def test_preload_compiles_what_the_hook_recorded(calls):
    rng = np.random.default_rng(2)
    x, y, n, pair = _arguments(rng, n=77)
    warm = scale_shift.warmup(x, y, n, pair, BLOCK=128, KIND=tl.float64, grid=(1,))
    (_, arguments), _ = calls
    assert arguments["is_manual_warmup"] is True
    data = arguments["compile"]["specialization_data"]
    assert json.loads(data)["constexprs"]["KIND"] == {"dtype": "fp64"}
    scale_shift.device_caches["cpu"][0].clear()
    preloaded = scale_shift.preload(data)
    assert preloaded.hash == warm.hash and len(calls) == 2  # preload calls no hook
    scale_shift[(1,)](x, y, n, pair, BLOCK=128, KIND=tl.float64)
    np.testing.assert_allclose(y[:n], _expected(x, n, pair), rtol=1e-6, atol=1e-6)


def test_specialization_data_round_trip_and_refusals(cpu_fresh_cache):
    rng = np.random.default_rng(3)
    x, y, n, pair = _arguments(rng)
    bound = scale_shift._bind((x, y, n, pair), {"BLOCK": 128, "KIND": tl.float16})
    spec = naiad.runtime.specialization.Specialization.of(scale_shift, bound)
    options = naiad.runtime.compiler.compile_options(None)
    text = specialization_data.dumps(scale_shift, spec, "cpu", options)
    again, target, options_again = specialization_data.loads(scale_shift, text)
    assert again.key == spec.key and target == "cpu" and options_again == options
    with pytest.raises(ValueError, match="not `"):
        specialization_data.loads(_other, text)
    odd = json.loads(text)
    odd["constexprs"]["BLOCK"] = {"repr": "<object>"}
    with pytest.raises(ValueError, match="cannot be rebuilt"):
        specialization_data.loads(scale_shift, json.dumps(odd))


@naiad.jit
def _other(x):
    pass


def test_triton_knobs_set_naiads_hooks():
    def hook(**kwargs):
        return False

    with knobs.override():
        triton_knobs.runtime.jit_cache_hook = hook
        assert knobs.jit_cache_hook.get() is hook and triton_knobs.runtime.jit_cache_hook is hook
        triton_knobs.runtime.jit_post_compile_hook = hook
        assert knobs.jit_post_compile_hook.get() is hook
    assert knobs.jit_cache_hook.get() is None
