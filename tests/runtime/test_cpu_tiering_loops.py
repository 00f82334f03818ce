"""Loops in a first launch tiered before its TTIR (runtime/cpu_first_launch.py, loop_runs.py):
the interpreted launch gives what the compiled one gives, values or the compiler's error,
where the loop runs, where it runs in no program, and where its carried values change kind."""

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.runtime.compiled_kernel import CompiledKernel


@pytest.fixture(autouse=True)
def tiered(fresh_cache):
    with knobs.override(NAIAD_BACKEND="auto", NAIAD_CPU_TIERING="auto"):
        yield


@naiad.jit
def strided_sums(x, out, n, BLOCK: tl.constexpr):
    """Each program sums every `num_programs`-th block of x from its own."""
    offsets = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    count = 0
    for start in tl.range(tl.program_id(0) * BLOCK, n, tl.num_programs(0) * BLOCK):
        acc += tl.load(x + start + offsets, mask=start + offsets < n, other=0.0)
        count += 1
    tl.store(out + tl.program_id(0) * BLOCK + offsets, acc * count)


@naiad.jit
def kind_changes(out, n):
    acc = (tl.zeros([16], tl.float32), tl.zeros([16], tl.float32))
    for _ in range(n):
        acc = (acc[0] + 1.0, acc[1].to(tl.float16))
    tl.store(out + tl.arange(0, 16), acc[0])


@naiad.jit
def never_runs(out, n):
    a = tl.arange(0, 16)
    for _ in range(n):
        a = a + tl.arange(0, 32)
    tl.store(out + tl.arange(0, 16), a.to(tl.float32))


@naiad.jit
def keeps_its_last(out, n):
    for i in range(n):
        last = tl.arange(0, 16) * i
    tl.store(out + tl.arange(0, 16), last.to(tl.float32))


def _outcome(launch, tiering: str):
    """What a first launch gives with this tiering setting: its error, or None."""
    with knobs.override(NAIAD_CPU_TIERING=tiering):
        try:
            return launch(), None
        except Exception as error:  # (compared by the caller, whatever it is)
            return None, error


def test_a_loop_the_launch_bounds_runs_interpreted_first_with_the_compiled_values():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(1000).astype(np.float32)
    tiered, compiled = np.zeros(4 * 64, np.float32), np.zeros(4 * 64, np.float32)
    ran, _ = _outcome(lambda: strided_sums[(4,)](x, tiered, x.size, BLOCK=64), "auto")
    assert not isinstance(ran, CompiledKernel)  # the interpreter ran it
    strided_sums.forget_compiled()
    ran, _ = _outcome(lambda: strided_sums[(4,)](x, compiled, x.size, BLOCK=64), "off")
    assert isinstance(ran, CompiledKernel)
    padded = np.zeros(16 * 64, np.float32)
    padded[: x.size] = x
    blocks = padded.reshape(4, 4, 64)  # [trip, program, element]
    expected = (blocks.astype(np.float64).sum(axis=0) * 4).reshape(-1)
    np.testing.assert_allclose(tiered, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(tiered, compiled)


def test_a_loop_no_program_runs_is_interpreted_after_the_frontend_checks_it():
    """n = 0: no program runs the loop's body; the frontend types it on the launching thread
    (it would raise there), then the interpreter runs the launch, with the compiled values."""
    x = np.random.default_rng(1).standard_normal(8).astype(np.float32)
    tiered, compiled = (np.full(2 * 64, 7.0, np.float32) for _ in range(2))
    ran, _ = _outcome(lambda: strided_sums[(2,)](x, tiered, 0, BLOCK=64), "auto")
    assert not isinstance(ran, CompiledKernel)
    strided_sums.forget_compiled()
    ran, _ = _outcome(lambda: strided_sums[(2,)](x, compiled, 0, BLOCK=64), "off")
    assert isinstance(ran, CompiledKernel)
    np.testing.assert_array_equal(tiered, np.zeros(2 * 64, np.float32))
    np.testing.assert_array_equal(tiered, compiled)


@pytest.mark.parametrize(
    "kernel", [kind_changes, never_runs, keeps_its_last], ids=lambda k: k.fn.__name__
)
@pytest.mark.parametrize("trips", [0, 3])
def test_a_loop_s_first_launch_fails_or_runs_as_the_compiled_one(kernel, trips):
    """A carried tuple whose part changes type, a body the compiler refuses, a name bound only
    in the loop read after it: the first launch, tiered, gives the compiled launch's error
    (located alike) or its values, whether the loop runs or not."""
    outputs = [np.full(16, 7.0, np.float32) for _ in range(2)]
    tiered = _outcome(lambda: kernel[(1,)](outputs[0], trips), "auto")[1]
    kernel.forget_compiled()
    compiled = _outcome(lambda: kernel[(1,)](outputs[1], trips), "off")[1]
    assert type(tiered) is type(compiled)
    assert str(tiered) == str(compiled)
    np.testing.assert_array_equal(outputs[0], outputs[1])
