"""naiad.testing: do_bench budgets and modes, assert_close, ulp distance, the tolerance table,
reports."""

import csv
import struct
import sys
import time

import ml_dtypes
import numpy as np
import pytest
import torch

from naiad.runtime import bench as bench_module
from naiad.testing import (
    TOLERANCES,
    Benchmark,
    Tolerance,
    assert_close,
    check,
    do_bench,
    perf_report,
    to_numpy,
    ulp_distance,
)
from naiad.testing import tolerance as tolerance_module

RNG = np.random.default_rng(20240611)


def _nonzero(shape, dtype=np.float32):
    """Random values away from zero, so relative bounds mean something."""
    values = RNG.uniform(0.5, 2.0, shape) * RNG.choice([-1.0, 1.0], shape)
    return values.astype(dtype)


# --- do_bench ---------------------------------------------------------------------------------


class FakeClock:
    """Stands in for perf_counter: time moves only when the benchmarked function runs."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


@pytest.fixture
def clock(monkeypatch):
    """The fake time of the host clock, which do_bench then uses even where an earlier test of
    this process initialized CUDA (its default would be CUDA events there)."""
    fake = FakeClock()
    monkeypatch.setattr(bench_module, "perf_counter", fake)
    monkeypatch.setattr(bench_module, "_pick_clock", lambda device: bench_module._HostClock())
    return fake


def _timed_fn(clock, durations_ms):
    """A function whose successive calls take the given times (then the last one, forever)."""
    calls = []

    def fn():
        ms = durations_ms[min(len(calls), len(durations_ms) - 1)]
        calls.append(ms)
        clock.now += ms / 1e3

    return fn, calls


def test_do_bench_budgets_set_the_run_counts(clock):
    fn, calls = _timed_fn(clock, [2.0])
    # Budgets are not multiples of the call time, so float rounding of the clock cannot change
    # the run counts.
    times = do_bench(fn, warmup=11, rep=21, return_mode="all")
    # 1 first call + 5 to estimate (2 ms each) + 10 ms / 2 ms warmup + 20 ms / 2 ms timed
    assert len(calls) == 1 + 5 + 5 + 10
    assert times == pytest.approx([2.0] * 10)


def test_do_bench_runs_at_least_once_each(clock):
    fn, calls = _timed_fn(clock, [50.0])
    times = do_bench(fn, warmup=10, rep=20, return_mode="all")
    assert len(calls) == 1 + 5 + 1 + 1
    assert times == pytest.approx([50.0])


# First call and 5 estimate runs take 1 ms; warmup=2.5 gives 2 runs, rep=4.5 gives 4 timed runs.
_MODE_DURATIONS = [1.0] * 6 + [1.0, 1.0] + [4.0, 1.0, 3.0, 2.0]


@pytest.mark.parametrize(
    "mode, expected",
    [("min", 1.0), ("max", 4.0), ("mean", 2.5), ("median", 2.5), ("all", [4.0, 1.0, 3.0, 2.0])],
)
def test_do_bench_return_modes(clock, mode, expected):
    fn, _ = _timed_fn(clock, _MODE_DURATIONS)
    assert do_bench(fn, warmup=2.5, rep=4.5, return_mode=mode) == pytest.approx(expected)


def test_do_bench_default_mode_is_median(clock):
    fn, _ = _timed_fn(clock, _MODE_DURATIONS[:-1] + [9.0])
    assert do_bench(fn, warmup=2.5, rep=4.5) == pytest.approx(3.5)  # median of 4, 1, 3, 9


def test_do_bench_quantiles_interpolate_linearly(clock):
    fn, _ = _timed_fn(clock, _MODE_DURATIONS)
    assert do_bench(fn, warmup=2.5, rep=4.5, quantiles=[0.5, 0.2, 0.8]) == pytest.approx(
        [2.5, 1.6, 3.4]
    )
    fn, _ = _timed_fn(clock, _MODE_DURATIONS)
    single = do_bench(fn, warmup=2.5, rep=4.5, quantiles=[0.5])
    assert isinstance(single, float) and single == pytest.approx(2.5)


def test_do_bench_clears_grads_before_each_timed_run(clock):
    class Param:
        grad = "stale"

    param = Param()
    seen = []

    def fn():
        seen.append(param.grad)
        param.grad = "accumulated"
        clock.now += 2e-3

    do_bench(fn, warmup=11, rep=21, grad_to_none=[param])
    assert seen[-10:] == [None] * 10
    assert seen[:11] == ["stale"] + ["accumulated"] * 10


def test_do_bench_rejects_bad_arguments():
    with pytest.raises(ValueError, match="return_mode"):
        do_bench(lambda: None, return_mode="average")
    with pytest.raises(ValueError, match="device"):
        do_bench(lambda: None, device="tpu")


def test_do_bench_measures_real_time_on_the_host():
    def busy():
        end = time.perf_counter() + 2e-4
        while time.perf_counter() < end:
            pass

    assert do_bench(busy, warmup=1, rep=5, device="cpu") >= 0.2


# --- assert_close -----------------------------------------------------------------------------


def test_assert_close_accepts_close_values_of_any_origin():
    x = _nonzero(64)
    assert_close(x, x + 1e-3)
    assert_close(torch.from_numpy(x), x)
    assert_close(torch.from_numpy(x).to(torch.bfloat16), x.astype(ml_dtypes.bfloat16))
    assert_close(x.astype(ml_dtypes.float8_e4m3fn), x, atol=0.2)
    assert_close(1.0, np.float32(1.005))


def test_assert_close_reports_the_mismatch():
    x = _nonzero(16)
    y = x.copy()
    y[3] += 0.5
    with pytest.raises(AssertionError) as info:
        assert_close(y, x, err_msg="softmax row")
    message = str(info.value)
    assert "softmax row" in message
    assert "1 of 16 elements differ" in message
    assert "max abs error: 0.5" in message
    assert f"max rel error: {0.5 / abs(float(x[3])):g}" in message
    assert "first mismatch at index (3,)" in message


def test_assert_close_nan_and_inf():
    x = _nonzero(8).astype(np.float64)
    x[[1, 5]] = np.nan
    x[2] = np.inf
    assert_close(x, x.copy())
    y = x.copy()
    y[1] = 0.0
    with pytest.raises(AssertionError, match=r"index \(1,\)"):
        assert_close(x, y)
    y = x.copy()
    y[2] = -np.inf
    with pytest.raises(AssertionError, match=r"index \(2,\)"):
        assert_close(x, y)


def test_assert_close_tolerances():
    x = _nonzero(32).astype(np.float64)
    y = x * (1 + 1e-3)
    with pytest.raises(AssertionError):
        assert_close(y, x, atol=0)
    assert_close(y, x, atol=0, rtol=2e-3)
    assert_close(y, x, atol=0, rtol=lambda dtype: 2e-3 if dtype == np.float64 else 0.0)
    with pytest.raises(AssertionError, match="shapes differ"):
        assert_close(x, x[:4])


def test_to_numpy_keeps_the_bits_of_torch_bf16():
    t = torch.from_numpy(_nonzero(10)).to(torch.bfloat16)
    array = to_numpy(t)
    assert array.dtype == ml_dtypes.bfloat16
    assert np.array_equal(array.astype(np.float32), t.float().numpy())


# --- ulp distance -----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_ulp_distance_counts_steps(dtype):
    x = _nonzero(200, dtype)
    steps = RNG.integers(0, 6, 200)
    y = x.copy()
    for i in range(steps.max()):
        y = np.where(steps > i, np.nextafter(y, dtype(np.inf)), y)
    assert np.array_equal(ulp_distance(x, y), steps.astype(np.uint64))


def test_ulp_distance_bf16_by_bits():
    x = np.abs(_nonzero(100)).astype(ml_dtypes.bfloat16)
    y = (x.view(np.uint16) + np.uint16(3)).view(ml_dtypes.bfloat16)
    assert np.array_equal(ulp_distance(x, y), np.full(100, 3, np.uint64))
    assert np.array_equal(ulp_distance(y, x), np.full(100, 3, np.uint64))


def test_ulp_distance_matches_a_python_reference():
    def ordered(value):
        (bits,) = struct.unpack("<i", struct.pack("<f", value))
        return bits if bits >= 0 else -(bits & 0x7FFFFFFF)

    a = _nonzero(300) * RNG.uniform(1e-3, 1e3, 300).astype(np.float32)
    b = _nonzero(300) * RNG.uniform(1e-3, 1e3, 300).astype(np.float32)
    expected = [abs(ordered(float(p)) - ordered(float(q))) for p, q in zip(a, b)]
    assert ulp_distance(a, b).tolist() == expected


def test_ulp_distance_special_values():
    tiny = np.float32(1e-45)  # the smallest subnormal
    assert ulp_distance(np.float32(-0.0), np.float32(0.0)) == 0
    assert ulp_distance(-tiny, tiny) == 2
    nan = np.float32(np.nan)
    assert ulp_distance(nan, -nan) == 0
    assert ulp_distance(nan, np.float32(1.0)) == np.iinfo(np.uint64).max
    big = np.finfo(np.float64).max
    assert int(ulp_distance(-big, big)) == 2 * 0x7FEFFFFFFFFFFFFF
    with pytest.raises(TypeError):
        ulp_distance(np.float32(1), np.float64(1))


# --- the tolerance table ----------------------------------------------------------------------


def test_table_covers_the_documented_operations():
    for op in (
        "add",
        "cmp",
        "select",
        "cast",
        "fp_convert",
        "load",
        "store",
        "minimum",
        "maximum",
        "div_rn",
        "sqrt_rn",
        "philox",
        "sort",
        "argmax",
        "exp",
        "exp2",
        "log",
        "log2",
        "sin",
        "cos",
        "sqrt",
        "rsqrt",
        "erf",
        "fdiv",
        "truediv_fp32",
        "fma",
        "sum",
        "dot",
        "dot_tf32",
        "cumsum",
    ):
        assert set(TOLERANCES[op]) == {"interpreter", "cpu", "gpu"}
    for op in TOLERANCES:
        assert op in tolerance_module.__doc__, f"{op} is missing from the module docstring"
    assert TOLERANCES["truediv_fp32"]["cpu"].kind == "exact"
    assert TOLERANCES["truediv_fp32"]["gpu"] == Tolerance("ulp", ulp=2)
    assert TOLERANCES["dot_tf32"]["gpu"].c == TOLERANCES["dot"]["gpu"].c * 2**13
    with pytest.raises(ValueError):
        Tolerance("loose")


def test_check_exact_compares_bits():
    x = _nonzero(64)
    check("add", x, x.copy(), "gpu", np.float32)
    with pytest.raises(AssertionError, match="not bit-identical"):
        check("add", np.float32([0.0, 1.0]), np.float32([-0.0, 1.0]), "cpu", "fp32")
    quiet, payload = np.float32(np.nan), np.uint32(0x7FC00001).view(np.float32)
    check(
        "load",
        np.array([quiet, 1.0], np.float32),
        np.array([payload, 1.0], np.float32),
        "cpu",
        "fp32",
    )
    ints = RNG.integers(-1000, 1000, 50, dtype=np.int32)
    check("floordiv", ints, ints.copy(), "interpreter", "int32")
    other = ints.copy()
    other[7] += 1
    with pytest.raises(AssertionError, match=r"1 of 50 .* index \(7,\)"):
        check("floordiv", ints, other, "interpreter", "int32")


def _steps(x, n):
    for _ in range(n):
        x = np.nextafter(x, np.float32(np.inf))
    return x


def test_check_ulp_bounds_per_backend():
    x = _nonzero(128)
    check("exp", _steps(x, 4), x, "cpu", np.float32)
    with pytest.raises(AssertionError, match="more than 4 ulp apart"):
        check("exp", _steps(x, 5), x, "cpu", np.float32)
    check("exp", _steps(x, 16), x, "gpu", np.float32)
    check("truediv_fp32", _steps(x, 2), x, "gpu", np.float32)
    with pytest.raises(AssertionError, match="not bit-identical"):
        check("truediv_fp32", _steps(x, 1), x, "cpu", np.float32)


def test_check_ulp_in_the_result_dtype():
    ref = _nonzero(64).astype(np.float64)  # a float64 reference is rounded to the result dtype
    actual = torch.from_numpy(ref).to(torch.bfloat16)
    check("sin", actual, ref, "gpu", torch.bfloat16)
    nudged = to_numpy(actual).view(np.uint16) + np.uint16(5)
    with pytest.raises(AssertionError, match="worst 5"):
        check("sin", nudged.view(ml_dtypes.bfloat16), ref, "gpu", "bf16")


def test_check_norm_scales_with_k():
    k = 1024
    expected = _nonzero((16, 16)).astype(np.float64)
    bound = 16 * np.finfo(np.float32).eps * np.sqrt(k)
    direction = _nonzero((16, 16)).astype(np.float64)
    direction *= np.linalg.norm(expected) / np.linalg.norm(direction)
    check("sum", expected + 0.5 * bound * direction, expected, "cpu", np.float32, k=k)
    with pytest.raises(AssertionError, match="exceeds"):
        check("sum", expected + 2 * bound * direction, expected, "cpu", np.float32, k=k)
    with pytest.raises(AssertionError, match="exceeds"):
        check("sum", expected + 0.5 * bound * direction, expected, "cpu", np.float32, k=k // 16)
    check("dot_tf32", expected * (1 + 2e-3), expected, "gpu", np.float32, k=64)
    with pytest.raises(ValueError, match="reduction length"):
        check("sum", expected, expected, "cpu", np.float32)


def test_check_norm_requires_matching_non_finite():
    expected = _nonzero(32).astype(np.float64)
    expected[4] = np.inf
    check("sum", expected.copy(), expected, "gpu", np.float32, k=8)
    actual = expected.copy()
    actual[4] = np.nan
    with pytest.raises(AssertionError, match="non-finite"):
        check("sum", actual, expected, "gpu", np.float32, k=8)


def test_check_rejects_unknown_names():
    x = _nonzero(4)
    with pytest.raises(KeyError, match="no tolerance"):
        check("frobnicate", x, x, "cpu", np.float32)
    with pytest.raises(KeyError, match="unknown backend"):
        check("add", x, x, "tpu", np.float32)


# --- Benchmark / perf_report ------------------------------------------------------------------


def _bench(**overrides):
    fields = {
        "x_names": ["N"],
        "x_vals": [128, 256],
        "line_arg": "provider",
        "line_vals": ["naiad", "torch"],
        "line_names": ["Naiad", "Torch"],
        "plot_name": "vector-add",
        "args": {"scale": 2},
    }
    return Benchmark(**{**fields, **overrides})


def test_perf_report_calls_every_point_and_writes_csv(tmp_path, capsys):
    calls = []

    @perf_report(_bench())
    def measure(N, provider, scale, extra):
        calls.append((N, provider, scale, extra))
        return N * scale + (1 if provider == "torch" else 0)

    assert measure.run(print_data=True, save_path=str(tmp_path), extra="x") is None
    assert calls == [
        (128, "naiad", 2, "x"),
        (128, "torch", 2, "x"),
        (256, "naiad", 2, "x"),
        (256, "torch", 2, "x"),
    ]
    printed = capsys.readouterr().out
    assert printed.splitlines()[0] == "vector-add:"
    assert printed.splitlines()[1].split() == ["N", "Naiad", "Torch"]
    assert printed.splitlines()[3].split() == ["256", "512", "513"]
    with open(tmp_path / "vector-add.csv") as f:
        rows = list(csv.reader(f))
    assert rows == [["N", "Naiad", "Torch"], ["128", "256", "257"], ["256", "512", "513"]]


def test_perf_report_tuples_and_several_x_names(tmp_path):
    bench = _bench(x_names=["M", "N"], x_vals=[(2, 3), 4], args={}, plot_name="mm")

    @perf_report([bench])
    def measure(M, N, provider):
        return (M * N, M * N - 1, M * N + 1)

    measure.run(save_path=str(tmp_path))
    with open(tmp_path / "mm.csv") as f:
        rows = list(csv.reader(f))
    assert rows == [["M", "N", "Naiad", "Torch"], ["2", "3", "6", "6"], ["4", "4", "16", "16"]]


def test_perf_report_dataframe_needs_pandas(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # makes `import pandas` fail

    @perf_report(_bench())
    def measure(N, provider, scale):
        raise AssertionError("must not measure before finding pandas missing")

    with pytest.raises(ImportError, match="return_df=True needs pandas"):
        measure.run(return_df=True)


def test_perf_report_rejects_mismatched_x_values():
    @perf_report(_bench(x_names=["M", "N"], x_vals=[(1, 2, 3)]))
    def measure(M, N, provider, scale):
        return 1.0

    with pytest.raises(ValueError, match="one value per name"):
        measure.run()


def test_exp_gpu_bound_covers_the_scaled_exponent():
    """The GPU's exp rounds x * log2(e) (with log2(e) in fp32) before an exact-enough 2**p: that
    step alone, emulated exactly here, must stay within the bound less ex2.approx's own share."""
    x = np.random.default_rng(7).uniform(-87.0, 88.0, 4096).astype(np.float32)
    p = (x * np.float32(np.log2(np.e))).astype(np.float64)  # the fp32 product
    actual = np.exp2(p).astype(np.float32)  # float64 exp2 then one rounding: within 1 ulp
    worst = int(
        tolerance_module.ulp_distance(actual, np.exp(x.astype(np.float64)).astype(np.float32)).max()
    )
    bound = tolerance_module._EXP_GPU_ULP
    assert 32 < worst <= bound - 4


def test_exp_gpu_bound_is_fp32s_alone():
    """fp64 exp on the GPU is libdevice's, held to the cpu bound: 5 ulps fail it, as they pass
    the fp32 bound of ex2.approx."""
    expected = np.exp(np.random.default_rng(8).uniform(-20.0, 20.0, 64))
    for dtype, passes in ((np.float32, True), (np.float64, False)):
        e = expected.astype(dtype)
        off = (e.view(_UNSIGNED_OF[dtype]) + 5).view(dtype)
        if passes:
            tolerance_module.check("exp", off, e, "gpu", dtype)
        else:
            with pytest.raises(AssertionError, match="ulp"):
                tolerance_module.check("exp", off, e, "gpu", dtype)


_UNSIGNED_OF = {np.float32: np.uint32, np.float64: np.uint64}
