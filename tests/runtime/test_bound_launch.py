"""Bound launches (bound_launch.py, `JITFunction.bind_launch`): a launch with its fixed
arguments kept, which per call checks only the varying arguments' facts.

A bound call must compute what `kernel[grid](...)` computes, and take the normal path (the
launch entry; spied on through `run`, where the entry sends what it has no prepared launch for)
whenever a fact the kept launch was prepared under differs: a tensor's dtype or 16-byte
alignment, an integer's ==1 / %16 class, the launch settings, a kernel whose prepared launches
were forgotten. CPU kernels run compiled, on torch CPU tensors; each case checks the values
against NumPy.
"""

import gc
import threading
import weakref

import numpy as np
import pytest
import torch

import naiad
import naiad.language as tl
from naiad.errors import KernelIndexError


@naiad.jit
def scaled_sum(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, alpha * x + tl.load(y_ptr + offs, mask=mask), mask=mask)


N = 100
GRID = ((N + 63) // 64,)


@pytest.fixture(autouse=True)
def compiled_for_the_cpu(cpu_fresh_cache):
    scaled_sum.forget_compiled()


@pytest.fixture
def full_calls(monkeypatch):
    """The launches that reached `run` (the normal path), as a list that grows."""
    calls = []
    original = scaled_sum.run

    def spy(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(scaled_sum, "run", spy)
    return calls


def _random(n, dtype=torch.float32, seed=0, offset=0):
    """Random values in +-[0.5, 2), from element `offset` of a larger tensor (misaligned when
    offset * itemsize is not a multiple of 16)."""
    gen = torch.Generator().manual_seed(seed)
    whole = torch.rand(n + offset, generator=gen, dtype=torch.float64) * 1.5 + 0.5
    signs = torch.randint(0, 2, (n + offset,), generator=gen) * 2 - 1
    return (whole * signs).to(dtype)[offset:]


def _bind():
    x, y, out = _random(N), _random(N, seed=1), torch.empty(N)
    return scaled_sum.bind_launch(("x_ptr", "y_ptr", "out_ptr", "alpha"), GRID, x, y, out, N,
                                  1.0, BLOCK=64)  # fmt: skip


def _check(launch, seed, alpha=0.75, dtype=torch.float32, offset=0):
    x = _random(N, dtype, seed, offset)
    y = _random(N, dtype, seed + 1, offset)
    out = torch.empty(N + offset, dtype=dtype)[offset:]
    launch(x, y, out, alpha)
    expected = alpha * x.double().numpy() + y.double().numpy()
    tolerance = 1e-6 if dtype == torch.float32 else 1e-12
    np.testing.assert_allclose(out.double().numpy(), expected, rtol=tolerance, atol=tolerance)


def test_a_bound_launch_runs_the_prepared_launch_on_new_tensors(full_calls):
    launch = _bind()
    _check(launch, seed=2)  # the first call prepares, through the normal path
    assert len(full_calls) == 1
    for seed in range(3, 6):
        _check(launch, seed=seed, alpha=seed / 3)
    assert len(full_calls) == 1


@pytest.mark.parametrize(
    "change",
    [{"dtype": torch.float64}, {"offset": 1}],  # another dtype; a pointer off 16 bytes
)
def test_a_changed_fact_takes_the_normal_path_and_is_kept(full_calls, change):
    launch = _bind()
    _check(launch, seed=2)
    _check(launch, seed=3, **change)
    assert len(full_calls) == 2
    _check(launch, seed=4, **change)  # the launch prepared for the new facts is kept
    assert len(full_calls) == 2
    _check(launch, seed=5)  # back: the launch entry finds the first facts' launch itself
    assert len(full_calls) == 2


def test_views_at_two_alignments_taking_turns_keep_a_launch_each(full_calls):
    """A plan's views at two alignments that take turns (cat's slices of one result) each
    find the launch kept for their facts: only the first call of each takes the normal path."""
    launch = _bind()
    normal, full = [], launch.__globals__["__full"]
    launch.__globals__["__full"] = lambda *values: normal.append(1) or full(*values)
    for seed, offset in enumerate((0, 1, 0, 1, 0, 1)):
        _check(launch, seed=seed + 2, offset=offset)
    assert len(normal) == 2


def test_a_varying_integer_is_keyed_by_its_class(full_calls):
    @naiad.jit
    def scale(x_ptr, out_ptr, n, k, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * k, mask=offs < n)

    x, out = _random(N), torch.empty(N)
    launch = scale.bind_launch(("x_ptr", "out_ptr", "k"), (1,), x, out, N, 3, BLOCK=128)
    for k in (3, 1, 32, 5, 1):  # 1 and multiples of 16 are specializations of their own
        x = _random(N, seed=k)
        launch(x, out, k)
        np.testing.assert_allclose(out.numpy(), x.numpy() * k, rtol=1e-6)


def test_settings_and_forgotten_launches_take_the_normal_path(full_calls, monkeypatch):
    launch = _bind()
    _check(launch, seed=2)
    scaled_sum.forget_compiled()
    _check(launch, seed=3)
    assert len(full_calls) == 2
    monkeypatch.setenv("NAIAD_DEBUG", "1")  # debug launches are never prepared
    _check(launch, seed=4)
    _check(launch, seed=5)
    assert len(full_calls) == 4
    monkeypatch.delenv("NAIAD_DEBUG")
    _check(launch, seed=6)  # the launch prepared before the debug ones is found again
    _check(launch, seed=7)
    assert len(full_calls) == 4


def test_a_fixed_array_or_an_unknown_parameter_is_refused():
    x, y, out = _random(N), _random(N, seed=1), torch.empty(N)
    with pytest.raises(TypeError, match="fixed argument 'out_ptr'"):
        scaled_sum.bind_launch(("x_ptr", "y_ptr"), GRID, x, y, out, N, 1.0, BLOCK=64)
    with pytest.raises(TypeError, match="no parameter 'z'"):
        scaled_sum.bind_launch(("z",), GRID, x, y, out, N, 1.0, BLOCK=64)


def test_a_bound_launch_keeps_no_tensor_of_its_sample():
    x, y, out = _random(N), _random(N, seed=1), torch.empty(N)
    sample = weakref.ref(x)
    launch = scaled_sum.bind_launch(("x_ptr", "y_ptr", "out_ptr", "alpha"), GRID, x, y, out, N,
                                    1.0, BLOCK=64)  # fmt: skip
    del x
    gc.collect()
    assert sample() is None
    _check(launch, seed=2)


def test_typed_tensors_are_keyed_by_their_alignment_alone(full_calls):
    """`typed`: the caller fixes the tensors' dtype and device, so only their alignment is
    keyed: a pointer off 16 bytes still takes the normal path, and is kept."""
    x, y, out = _random(N), _random(N, seed=1), torch.empty(N)
    launch = scaled_sum.bind_launch(("x_ptr", "y_ptr", "out_ptr", "alpha"), GRID, x, y, out, N,
                                    1.0, BLOCK=64, typed=("x_ptr", "y_ptr", "out_ptr"))  # fmt: skip
    _check(launch, seed=2)
    for seed in range(3, 6):
        _check(launch, seed=seed, alpha=-seed / 4)
    assert len(full_calls) == 1
    _check(launch, seed=6, offset=1)
    _check(launch, seed=7, offset=1)
    assert len(full_calls) == 2
    with pytest.raises(TypeError, match="typed parameter must be a varying one"):
        scaled_sum.bind_launch(("x_ptr", "y_ptr", "out_ptr"), GRID, x, y, out, N, 1.0, BLOCK=64,
                               typed=("alpha",))  # fmt: skip


def test_typed_parameters_are_keyed_as_tensors(full_calls):
    """A typed tensor passed as a subclass (nn.Parameter: a module's weight) is keyed by its
    alignment as a plain tensor is: Parameters and tensors taking turns, and float factors,
    run the kept launch; a Parameter off 16 bytes takes the normal path once, and is kept."""
    x, y, out = _random(N), _random(N, seed=1), torch.empty(N)
    launch = scaled_sum.bind_launch(("x_ptr", "y_ptr", "out_ptr", "alpha"), GRID, x, y, out, N,
                                    1.0, BLOCK=64, typed=("x_ptr", "y_ptr", "out_ptr"))  # fmt: skip
    normal, full = [], launch.__globals__["__full"]
    launch.__globals__["__full"] = lambda *values: normal.append(1) or full(*values)
    for seed, offset in ((2, 0), (3, 0), (4, 0), (5, 1), (6, 1), (7, 0)):
        x = _random(N, seed=seed, offset=offset)
        if seed % 2 == 0:
            x = torch.nn.Parameter(x, requires_grad=False)
        y = _random(N, seed=seed + 1, offset=offset)
        out = torch.empty(N + offset)[offset:]
        launch(x, y, out, seed / 4)
        expected = seed / 4 * x.double().numpy() + y.double().numpy()
        np.testing.assert_allclose(out.double().numpy(), expected, rtol=1e-6, atol=1e-6)
    assert len(normal) == 2  # the first call, and the first one off 16 bytes


def test_fixed_arguments_between_varying_ones_keep_their_places(full_calls):
    """Runs of fixed arguments reach the prepared launch as kept tuples between the varying
    values: a varying pointer after fixed sizes gets its own place."""

    @naiad.jit
    def affine(x_ptr, n, scale, out_ptr, shift, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * scale + shift, mask=mask)

    x, out = _random(N), torch.empty(N)
    launch = affine.bind_launch(("x_ptr", "out_ptr"), GRID, x, N, 1.5, out, -0.25, BLOCK=64)
    for seed in range(2, 5):
        x, out = _random(N, seed=seed), torch.empty(N)
        launch(x, out)
        expected = x.double().numpy() * 1.5 - 0.25
        np.testing.assert_allclose(out.double().numpy(), expected, rtol=1e-6, atol=1e-6)


def test_a_cpu_launch_keeps_its_fixed_slots_and_checks_each_calls_extents(full_calls):
    """The prepared CPU launch is bound to the fixed values (cpu_bound_params.py): a call
    packs only its varying ones, and the bounds checks still read each call's arrays: a
    tensor shorter than the fixed size is an out-of-bounds load, then the launch runs on."""
    launch = _bind()
    _check(launch, seed=2)
    assert launch.__globals__["__state"][4] is not None  # the bound CPU launch
    _check(launch, seed=3, alpha=-1.25)
    short = _random(N // 2, seed=4)
    with pytest.raises(KernelIndexError, match="out-of-bounds load through argument `x_ptr`"):
        launch(short, _random(N, seed=5), torch.empty(N), 0.5)
    _check(launch, seed=6)
    assert len(full_calls) == 1


def test_threads_sharing_a_bound_cpu_launch_pack_their_own_blocks():
    """Each thread packs its own slots and block: calls from four threads at once compute
    their own values."""
    launch = _bind()
    _check(launch, seed=2)
    failures = []

    def work(seed):
        try:
            for round in range(50):
                _check(launch, seed=seed + round, alpha=seed / 7)
        except AssertionError as error:
            failures.append(error)

    threads = [threading.Thread(target=work, args=(10 * k,)) for k in range(1, 5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures
