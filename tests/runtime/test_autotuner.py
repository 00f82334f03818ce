"""Autotuner, Config and Heuristics over a fake jit function that does real work on arrays."""

import inspect

import numpy as np
import pytest
import torch

from naiad import knobs
from naiad.errors import CompileTimeAssertionFailure, OutOfResources
from naiad.runtime.autotuner import Autotuner, Config, autotune
from naiad.runtime.heuristics import Heuristics, heuristics
from naiad.runtime.kernel_interface import KernelInterface

RNG = np.random.default_rng(7)
OPTIONS = {"num_warps", "num_stages", "num_ctas", "maxnreg"}


def add_kernel(x, out, n, BLOCK, pid):
    """out[i] += x[i]: it accumulates, so a timed run that is not undone shows in the result."""
    start = pid * BLOCK
    stop = min(start + BLOCK, n)
    out[start:stop] += x[start:stop]


def add_kernel_even(x, out, n, BLOCK, EVEN, pid):
    assert (n % BLOCK == 0) == EVEN
    add_kernel(x, out, n, BLOCK, pid)


class FakeJit(KernelInterface):
    """Runs a Python kernel body once per program id and records every call.

    `fail` maps a BLOCK value to the exception its compilation raises, as a jit function would.
    """

    def __init__(self, body, fail=None):
        self.fn = body
        self.arg_names = list(inspect.signature(body).parameters)[:-1]  # all but `pid`
        self.fail = fail or {}
        self.calls = []

    def run(self, *args, grid, warmup=False, **kwargs):
        named = {**dict(zip(self.arg_names, args)), **kwargs}
        unknown = set(kwargs) - set(self.arg_names) - OPTIONS
        if unknown:
            raise KeyError(f"Keyword argument {unknown} was specified but unrecognised")
        out = named["out"]
        self.calls.append(
            {
                **named,
                "warmup": warmup,
                "out_at_start": out.clone() if torch.is_tensor(out) else out.copy(),
            }
        )
        if named["BLOCK"] in self.fail:
            raise self.fail[named["BLOCK"]]
        if warmup:
            return f"compiled BLOCK={named['BLOCK']}"
        grid = grid(named) if callable(grid) else grid
        params = {k: v for k, v in named.items() if k in self.arg_names}
        for pid in range(grid[0]):
            self.fn(**params, pid=pid)
        return "launched"


def costed_bench(kernel, costs):
    """A benchmarker whose timings depend only on BLOCK, so the winner is known in advance."""

    def bench(fn, quantiles):
        fn()
        return [costs[kernel.calls[-1]["BLOCK"]]] * len(quantiles)

    return bench


def grid(meta):
    return (-(-meta["n"] // meta["BLOCK"]),)


def _data(n, dtype=np.float32):
    x = (RNG.uniform(0.5, 2.0, n) * RNG.choice([-1.0, 1.0], n)).astype(dtype)
    out = RNG.uniform(1.0, 3.0, n).astype(dtype)
    return x, out


BLOCKS = [32, 64, 128]
COSTS = {16: 4.0, 32: 3.0, 64: 1.0, 128: 2.0, 256: 0.5}


def _tuned(kernel=None, blocks=BLOCKS, **options):
    kernel = kernel or FakeJit(add_kernel)
    options.setdefault("do_bench", costed_bench(kernel, COSTS))
    options.setdefault("restore_value", ["out"])
    tuner = autotune([Config({"BLOCK": b}) for b in blocks], key=["n"], **options)(kernel)
    return tuner, kernel


def _real_runs(kernel):
    return [c for c in kernel.calls if not c["warmup"]]


# --- Config -----------------------------------------------------------------------------------


def test_config_kwargs_and_text():
    config = Config({"BLOCK": 128, "GROUP": 8}, num_warps=8, num_stages=2)
    assert config.all_kwargs() == {
        "BLOCK": 128,
        "GROUP": 8,
        "num_warps": 8,
        "num_ctas": 1,
        "num_stages": 2,
    }
    assert Config({"BLOCK": 1}, maxnreg=128).all_kwargs()["maxnreg"] == 128
    assert str(config) == (
        "BLOCK: 128, GROUP: 8, num_warps: 8, num_ctas: 1, num_stages: 2, maxnreg: None"
    )
    assert config == Config({"GROUP": 8, "BLOCK": 128}, num_warps=8, num_stages=2)
    assert len({config, Config({"GROUP": 8, "BLOCK": 128}, num_warps=8, num_stages=2)}) == 1
    assert config != Config({"BLOCK": 128, "GROUP": 8}, num_warps=4, num_stages=2)


def test_kernel_interface_binds_the_grid():
    kernel = FakeJit(add_kernel)
    x, out = _data(100)
    expected = out + x
    assert kernel[grid](x, out, 100, 32) == "launched"
    np.testing.assert_array_equal(out, expected)
    with pytest.raises(TypeError):
        KernelInterface()


# --- tuning and the cache ---------------------------------------------------------------------


def test_tunes_once_per_key_and_runs_the_best_config():
    tuner, kernel = _tuned()
    x, out = _data(256)
    tuner[grid](x, out, 256)
    assert tuner.best_config == Config({"BLOCK": 64})
    assert tuner.configs_timings[Config({"BLOCK": 32})] == (3.0, 3.0, 3.0)
    assert list(tuner.cache) == [(256, "float32", "float32")]
    assert len(_real_runs(kernel)) == len(BLOCKS) + 1
    assert _real_runs(kernel)[-1]["BLOCK"] == 64
    assert _real_runs(kernel)[-1]["num_warps"] == 4  # config options reach the kernel's run

    tuner[grid](x, out, 256)  # same key: no tuning
    assert len(_real_runs(kernel)) == len(BLOCKS) + 2
    tuner[grid](*_data(512), 512)  # another key value
    assert len(tuner.cache) == 2
    tuner[grid](*_data(256, np.float64), 256)  # another dtype
    assert len(tuner.cache) == 3
    assert (256, "float64", "float64") in tuner.cache
    assert len(_real_runs(kernel)) == 3 * (len(BLOCKS) + 1) + 1


def test_key_arguments_may_come_by_keyword():
    tuner, _ = _tuned()
    x, out = _data(64)
    tuner[grid](x, out, n=64)
    assert list(tuner.cache) == [(64, "float32", "float32")]


def test_single_config_is_not_benchmarked():
    def never(fn, quantiles):
        raise AssertionError("a single config needs no timing")

    tuner, _ = _tuned(blocks=[32], do_bench=never)
    x, out = _data(100)
    expected = out + x
    tuner[grid](x, out, 100)
    assert tuner.best_config == Config({"BLOCK": 32})
    np.testing.assert_array_equal(out, expected)


def test_print_autotuning(capsys):
    tuner, _ = _tuned()
    with knobs.override(NAIAD_PRINT_AUTOTUNING="1"):
        tuner[grid](*_data(64), 64)
        tuner[grid](*_data(64), 64)  # cached: prints nothing
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 + len(BLOCKS)  # every config's timings, then the choice
    for line, block in zip(lines, BLOCKS):
        assert line.startswith(f"Naiad autotuning add_kernel: BLOCK: {block}, num_warps: 4")
        assert line.endswith(f"{COSTS[block]:.4f}, {COSTS[block]:.4f}, {COSTS[block]:.4f} ms")
    assert lines[-1].startswith("Naiad autotuning for function add_kernel finished after ")
    assert "best config selected: BLOCK: 64, num_warps: 4" in lines[-1]


def test_warmup_compiles_every_config_without_timing():
    def never(fn, quantiles):
        raise AssertionError("warmup does not time")

    tuner, kernel = _tuned(do_bench=never)
    x, out = _data(64)
    before = out.copy()
    assert tuner.run(x, out, 64, grid=grid, warmup=True) == [
        "compiled BLOCK=32",
        "compiled BLOCK=64",
        "compiled BLOCK=128",
    ]
    assert all(c["warmup"] for c in kernel.calls)
    np.testing.assert_array_equal(out, before)
    assert tuner.cache == {}


# --- pruning ----------------------------------------------------------------------------------


def test_early_config_prune():
    seen = {}

    def prune(configs, named_args, **kwargs):
        seen.update(named_args=named_args, kwargs=kwargs)
        return [c for c in configs if c.kwargs["BLOCK"] <= named_args["n"] // 2]

    tuner, kernel = _tuned(prune_configs_by={"early_config_prune": prune})
    x, out = _data(128)
    tuner[grid](x, out, 128)
    assert {c["BLOCK"] for c in _real_runs(kernel)} == {32, 64}
    assert seen["named_args"]["n"] == 128 and seen["kwargs"] == {}

    tuner, _ = _tuned(prune_configs_by={"early_config_prune": lambda configs, nargs: []})
    with pytest.raises(ValueError, match="removed every config"):
        tuner[grid](*_data(64), 64)


@pytest.mark.parametrize(
    "top_k, timed", [(1, set()), (2, {128, 64}), (0.5, {128, 64}), (0.25, set())]
)
def test_perf_model_keeps_the_top_k(top_k, timed):
    def model(x, out, n, BLOCK, **options):
        assert options["num_warps"] == 4
        return 1.0 / BLOCK  # predicts the largest block fastest

    tuner, kernel = _tuned(
        blocks=[32, 64, 128, 16], prune_configs_by={"perf_model": model, "top_k": top_k}
    )
    tuner[grid](*_data(128), 128)
    assert {c["BLOCK"] for c in _real_runs(kernel)[:-1]} == timed  # one left: none timed
    assert _real_runs(kernel)[-1]["BLOCK"] == min(timed or {128}, key=COSTS.get)


def test_a_fractional_top_k_is_a_share_of_the_configs_left_by_the_early_prune():
    """Six blocks, the early prune keeps four, `top_k=0.5` times two (of the four, as in
    Triton's main; a share of all six would time three)."""

    def prune(configs, named_args, **kwargs):
        return [c for c in configs if c.kwargs["BLOCK"] <= 64]

    tuner, kernel = _tuned(
        blocks=[256, 128, 64, 32, 16, 8],
        prune_configs_by={
            "early_config_prune": prune,
            "perf_model": lambda x, out, n, BLOCK, **options: 1.0 / BLOCK,
            "top_k": 0.5,
        },
    )
    x, out = _data(256)
    expected = out.astype(np.float64) + x
    tuner[grid](x, out, 256)
    assert {c["BLOCK"] for c in _real_runs(kernel)[:-1]} == {64, 32}
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_run_without_a_grid_for_a_kernel_that_takes_none():
    """Triton's Autotuner.run takes `grid` as one of the launch's keywords: a wrapped object
    whose `run` needs none is tuned and run without it."""
    ran = []
    costs = {16: 2.0, 32: 1.0}

    class Launch:
        def __init__(self):
            self.fn = lambda: None

        def run(self, *args, warmup=False, **kwargs):
            ran.append((kwargs["BLOCK"], kwargs["grid"], warmup))

    def bench(call, quantiles):
        call()
        return [costs[ran[-1][0]]] * 3

    configs = [Config({"BLOCK": b}) for b in costs]
    tuner = Autotuner(Launch(), [], configs, [], None, None, do_bench=bench)
    tuner.run()
    assert tuner.best_config.kwargs == {"BLOCK": 32} and ran[-1] == (32, None, False)


def test_top_k_must_be_a_count_or_a_fraction():
    with pytest.raises(TypeError, match="top_k"):
        _tuned(prune_configs_by={"perf_model": lambda **kw: 1.0, "top_k": 2.5})


# --- the user's arguments survive tuning ------------------------------------------------------


def test_restore_value_leaves_the_result_of_one_real_run():
    kernel = FakeJit(add_kernel)
    tuner, _ = _tuned(kernel, do_bench=None, warmup=0.5, rep=1.0)  # the real do_bench
    x, out = _data(300)
    original = out.copy()
    tuner[grid](x, out, 300)
    assert len(_real_runs(kernel)) > len(BLOCKS) * 3  # do_bench ran each config many times
    for call in _real_runs(kernel):
        np.testing.assert_array_equal(call["out_at_start"], original)
    np.testing.assert_array_equal(out, original + x)


def test_restore_value_with_torch_tensors():
    kernel = FakeJit(add_kernel)
    tuner, _ = _tuned(kernel)
    x, out = (torch.from_numpy(a) for a in _data(200))
    original = out.clone()
    tuner[grid](x, out, 200)
    assert all(torch.equal(c["out_at_start"], original) for c in kernel.calls)
    torch.testing.assert_close(out, original + x, rtol=0, atol=0)


def test_reset_to_zero():
    tuner, kernel = _tuned(restore_value=None, reset_to_zero=["out"])
    x, out = _data(100)
    tuner[grid](x, out, 100)
    for call in _real_runs(kernel):
        assert not call["out_at_start"].any()
    np.testing.assert_array_equal(out, x)


def test_arguments_are_restored_when_a_config_crashes():
    kernel = FakeJit(add_kernel, fail={128: ZeroDivisionError("bug in the kernel")})
    tuner, _ = _tuned(kernel)
    x, out = _data(256)
    original = out.copy()
    with pytest.raises(ZeroDivisionError):
        tuner[grid](x, out, 256)
    np.testing.assert_array_equal(out, original)


# --- hooks, conflicts, failing configs --------------------------------------------------------


def test_hooks():
    events = []

    def config_hook(nargs):
        events.append(("config", nargs["BLOCK"], nargs["n"]))

    def pre(nargs):
        events.append(("pre", nargs["BLOCK"], nargs["num_warps"]))

    def post(nargs, exception):
        events.append(("post", nargs["BLOCK"], exception))

    kernel = FakeJit(add_kernel)
    configs = [Config({"BLOCK": 32}, pre_hook=config_hook), Config({"BLOCK": 64})]
    tuner = autotune(
        configs, key=["n"], pre_hook=pre, post_hook=post, do_bench=costed_bench(kernel, COSTS)
    )(kernel)
    tuner[grid](*_data(64), 64)
    assert events == [
        ("config", 32, 64),
        ("pre", 32, 4),
        ("post", 32, None),
        ("pre", 64, 4),
        ("post", 64, None),
    ]
    tuner.cache[(64, "float32", "float32")] = configs[0]
    tuner[grid](*_data(64), 64)  # the real run calls only the config's own hook
    assert events[-1] == ("config", 32, 64)


def test_post_hook_sees_the_exception():
    seen = []
    kernel = FakeJit(add_kernel, fail={128: OutOfResources(300_000, 232_448, "shared memory")})
    tuner, _ = _tuned(kernel, post_hook=lambda nargs, exception: seen.append(exception))
    tuner[grid](*_data(64), 64)
    assert [type(e).__name__ for e in seen] == ["NoneType", "NoneType", "OutOfResources"]


def test_conflicting_meta_parameters():
    tuner, _ = _tuned()
    with pytest.raises(ValueError, match="Conflicting meta-parameters: BLOCK"):
        tuner[grid](*_data(64), 64, BLOCK=32)


@pytest.mark.parametrize(
    "error",
    [
        OutOfResources(300_000, 232_448, "shared memory"),
        CompileTimeAssertionFailure("BLOCK must be at most 128"),
    ],
)
def test_configs_that_cannot_compile_score_infinity(error):
    kernel = FakeJit(add_kernel, fail={256: error})
    tuner, _ = _tuned(kernel, blocks=[32, 64, 256])  # 256 would be the fastest
    x, out = _data(512)
    original = out.copy()
    tuner[grid](x, out, 512)
    assert tuner.best_config == Config({"BLOCK": 64})
    assert tuner.configs_timings[Config({"BLOCK": 256})] == (float("inf"),) * 3
    np.testing.assert_array_equal(out, original + x)


def test_names_must_be_arguments():
    with pytest.raises(ValueError, match="unknown arguments: m"):
        autotune([Config({"BLOCK": 32})], key=["m"])(FakeJit(add_kernel))


def test_unsupported_flags_warn():
    with pytest.warns(UserWarning, match="use_cuda_graph"):
        autotune([Config({"BLOCK": 32})], key=["n"], use_cuda_graph=True)(FakeJit(add_kernel))


# --- heuristics -------------------------------------------------------------------------------


def test_heuristics_compute_meta_parameters():
    kernel = FakeJit(add_kernel)
    with_block = heuristics({"BLOCK": lambda args: 16 if args["n"] < 100 else 64})(kernel)
    assert isinstance(with_block, Heuristics) and with_block.arg_names == kernel.arg_names
    x, out = _data(50)
    expected = out + x
    with_block[grid](x, out, 50)
    assert kernel.calls[-1]["BLOCK"] == 16
    np.testing.assert_array_equal(out, expected)


def test_autotune_over_heuristics_sees_the_config():
    kernel = FakeJit(add_kernel_even)
    inner = heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})(kernel)
    tuner = autotune(
        [Config({"BLOCK": b}) for b in (32, 48)],
        key=["n"],
        do_bench=costed_bench(kernel, {32: 2.0, 48: 1.0}),
        restore_value=["out"],
    )(inner)
    assert isinstance(tuner, Autotuner) and tuner.arg_names == kernel.arg_names
    x, out = _data(96)
    tuner[grid](x, out, 96)
    assert [(c["BLOCK"], c["EVEN"]) for c in _real_runs(kernel)] == [
        (32, True),
        (48, True),
        (48, True),
    ]
    x, out = _data(64)
    expected = out + x
    tuner[grid](x, out, 64)
    assert [(c["BLOCK"], c["EVEN"]) for c in _real_runs(kernel)][3:] == [
        (32, True),
        (48, False),
        (48, False),
    ]
    np.testing.assert_array_equal(out, expected)


def test_heuristics_over_autotune_sees_only_the_caller():
    kernel = FakeJit(add_kernel_even)
    seen = []

    def even(args):
        seen.append(set(args))
        return args["n"] % 64 == 0

    tuner = autotune(
        [Config({"BLOCK": 64}), Config({"BLOCK": 32})],
        key=["n"],
        do_bench=costed_bench(kernel, COSTS),
        restore_value=["out"],
    )(kernel)
    outer = heuristics({"EVEN": even})(tuner)
    x, out = _data(128)
    expected = out + x
    outer[grid](x, out, 128)
    assert seen == [{"x", "out", "n"}]
    assert tuner.best_config == Config({"BLOCK": 64})
    assert all(c["EVEN"] for c in kernel.calls)
    np.testing.assert_array_equal(out, expected)
