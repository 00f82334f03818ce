"""Triton's launch hooks on Naiad (runtime/launch_hooks.py): the enter and exit hooks are
called around every launch, as one function or a HookChain (`.add`, `.remove`, exit hooks in
reverse), with the launch's metadata made on request (the kernel's name, the grid, the JIT
function's `launch_metadata`); the hot path, which calls none, is not taken while one is set.
A JIT function's pre-run hooks get each launch's arguments before it runs. Kernels compiled
for this machine's CPU, values checked against NumPy."""

import numpy as np
import pytest
from fixture_kernels import hooked

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.runtime.launch_hooks import HookChain
from naiad.triton import knobs as triton_knobs


def _doubled_metadata(grid, metadata, args):
    return {"n": args["n"], "compiled": metadata is not None}


doubled = naiad.jit(launch_metadata=_doubled_metadata)(hooked.doubled)


@pytest.fixture
def arrays(cpu_fresh_cache):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(300).astype(np.float32)
    return x, rng.standard_normal(300).astype(np.float32)


def test_enter_and_exit_hooks_around_every_launch(arrays):
    x, y = arrays
    events = []
    with knobs.override():
        chain = triton_knobs.runtime.launch_enter_hook
        assert isinstance(chain, HookChain) and not chain
        chain.add(lambda m: events.append(("enter", m.get())))
        triton_knobs.runtime.launch_exit_hook.add(lambda m: events.append(("exit", m.get())))
        for n in (300, 257, 300):
            doubled[(3,)](x, y, n, BLOCK=128)
            np.testing.assert_allclose(y[:n], x[:n].astype(np.float64) * 2 + 1, rtol=1e-6)
    assert [kind for kind, _ in events] == ["enter", "exit"] * 3
    assert events[0][1] == {"name": "doubled", "grid": (3, 1, 1), "n": 300, "compiled": False}
    assert events[1][1] is events[0][1]  # one launch's metadata, made once
    assert events[4][1]["n"] == 300  # the third launch (prepared before) took the hooks too
    doubled[(3,)](x, y, 300, BLOCK=128)  # the hooks are gone with the override
    assert len(events) == 6
    with knobs.override(NAIAD_LAUNCH_EXIT_HOOK=lambda m: events.append(m.get())):
        doubled[(3,)](x, y, 300, BLOCK=128)
    assert events[6]["compiled"] is True  # asked after the launch: the kernel's metadata


def test_one_function_and_chain_order():
    order = []
    with knobs.override():
        exit_chain = triton_knobs.runtime.launch_exit_hook
        for name in "ab":
            exit_chain.add(lambda m, name=name: order.append(name))
        exit_chain(None)
        assert order == ["b", "a"]
        exit_chain.remove(exit_chain.calls[0])
        assert len(exit_chain.calls) == 1
        triton_knobs.runtime.launch_enter_hook = print
        assert knobs.launch_enter_hook.get() is print
    assert knobs.launch_enter_hook.get() is None


def test_pre_run_hooks_see_each_launch(arrays):
    x, y = arrays
    seen = []

    @naiad.jit
    def shifted(x, y, n, BLOCK: tl.constexpr):
        offsets = tl.arange(0, BLOCK)
        mask = offsets < n
        tl.store(y + offsets, tl.load(x + offsets, mask=mask) - 3.0, mask=mask)

    def hook(*args, **kwargs):
        seen.append(kwargs["BLOCK"])
        args[0][:] = np.abs(args[0])  # the launch reads what the hook wrote

    shifted.add_pre_run_hook(hook)
    for _ in range(2):
        shifted[(1,)](x, y, 300, BLOCK=512)
        np.testing.assert_allclose(y, np.abs(x).astype(np.float64) - 3, rtol=1e-6)
    shifted.run(x, y, 300, BLOCK=512, grid=(1,))
    shifted.warmup(x, y, 300, BLOCK=512, grid=(1,))  # a warmup runs nothing: no hook
    assert seen == [512, 512, 512]


def test_kernel_load_hooks_around_each_load(arrays):
    """The kernel load hooks (Triton's `(module, function, name, metadata_group, hash)`): once
    a kernel is linked into the process, not at later launches; a new specialization loads
    again."""
    x, y = arrays
    seen = []
    with knobs.override():
        runtime = triton_knobs.runtime
        runtime.kernel_load_start_hook.add(lambda *a: seen.append(("start", *a)))
        runtime.kernel_load_end_hook.add(lambda *a: seen.append(("end", *a)))
        doubled.forget_compiled()
        doubled[(3,)](x, y, 300, BLOCK=128)
        doubled[(3,)](x, y, 300, BLOCK=128)
        doubled[(5,)](x, y, 300, BLOCK=64)
    np.testing.assert_allclose(y, x.astype(np.float64) * 2 + 1, rtol=1e-6)
    assert [event[0] for event in seen] == ["start", "end"] * 2
    start, end = seen[:2]
    assert start[1:3] == (None, None) and end[1] is not None and end[2] != 0
    assert start[3] == end[3] == "doubled" and start[5] == end[5] != seen[3][5]


def test_a_hooked_launch_runs_the_launch_prepared_for_it(arrays, monkeypatch):
    """With hooks set, `kernel[grid]` goes through `run`, which still runs the launch prepared
    for the call's key (a profiler's hooks must not make every launch take the slow path):
    only the first launch of a key is slow, and each launch calls each hook once, its
    metadata bound from the arguments as given (launch options left out)."""
    x, y = arrays
    slow, events = [], []
    original = doubled._run_slow
    monkeypatch.setattr(doubled, "_run_slow", lambda *args: slow.append(1) or original(*args))
    doubled.forget_compiled()
    with knobs.override():
        triton_knobs.runtime.launch_enter_hook.add(lambda m: events.append("enter"))
        triton_knobs.runtime.launch_exit_hook.add(lambda m: events.append(m.get()))
        for n in (300, 257, 299):
            y[:] = np.nan
            doubled[(3,)](x, y, n, BLOCK=128, num_warps=2)
            np.testing.assert_allclose(y[:n], x[:n].astype(np.float64) * 2 + 1, rtol=1e-6)
    assert len(slow) == 1
    assert events[0::2] == ["enter"] * 3
    assert [(m["n"], m["compiled"], m["grid"]) for m in events[1::2]] == [
        (300, True, (3, 1, 1)),
        (257, True, (3, 1, 1)),
        (299, True, (3, 1, 1)),
    ]
