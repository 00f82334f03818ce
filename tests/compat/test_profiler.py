"""`triton.profiler` on Naiad (naiad/triton/profiler/): sessions record nested scopes and, with
hook="triton", every Naiad kernel launch as a node of the current scope, named by its launch
metadata, with counts, summed metrics and times; deactivated sessions record nothing;
`finalize` writes the tree as JSON that `viewer.parse` reads back and derives rates from, and
`print_tree` prints. Kernels compiled for this machine's CPU, their values checked against
NumPy; times are the host's clock here."""

import json
import subprocess
import sys
import time

import numpy as np
import pytest
from fixture_kernels import hooked

import naiad
from naiad import knobs
from naiad.triton import profiler as proton
from naiad.triton.profiler import session, viewer


def _doubled_metadata(grid, metadata, args):
    n = args["n"]
    return {"name": f"{metadata.name} [n={n}]", "bytes": 8 * n, "flops32": 2.0 * n}


doubled = naiad.jit(launch_metadata=_doubled_metadata)(hooked.doubled)


@pytest.fixture
def fresh(cpu_fresh_cache, tmp_path, monkeypatch):
    """No session, the test's folder current (profiles are written there), hooks restored."""
    monkeypatch.chdir(tmp_path)
    session.reset()
    with knobs.override():
        yield tmp_path
    session.reset()


def _launch(n: int, rng) -> None:
    x = rng.standard_normal(n).astype(np.float32)
    y = np.full(n, np.nan, dtype=np.float32)
    doubled[(naiad.cdiv(n, 128),)](x, y, n, BLOCK=128)
    np.testing.assert_allclose(y, x.astype(np.float64) * 2 + 1, rtol=1e-6)


def _by_name(literal: dict) -> dict:
    return {child["frame"]["name"]: child for child in literal["children"]}


def _record_nested(rng, n: int, scope_bytes: int, scope_flops: float) -> int:
    """outer(2 launches, inner(1 launch)), then 1 launch at the root; returns the session."""
    number = proton.start("nested", hook="triton")
    with proton.scope("outer", {"bytes": scope_bytes, "flops32": scope_flops}):
        _launch(n, rng)
        _launch(n, rng)
        proton.enter_scope("inner")
        _launch(n, rng)
        proton.exit_scope()
    _launch(n, rng)
    proton.finalize(number)
    return number


def test_nested_scopes_and_launches_make_the_tree(fresh):
    rng = np.random.default_rng(16)
    n = int(rng.integers(200, 600))
    scope_bytes, scope_flops = int(rng.integers(1000, 9000)), float(rng.uniform(1e6, 1e7))
    assert _record_nested(rng, n, scope_bytes, scope_flops) == 0
    assert not knobs.launch_hooks_set()  # no session: launches take the hot path again
    root, table = json.loads((fresh / "nested.hatchet").read_text())
    assert table == {}  # timed on the host: no GPU to describe
    kernel = f"doubled [n={n}]"
    assert root["frame"]["name"] == "ROOT" and list(_by_name(root)) == ["outer", kernel]
    outer = _by_name(root)["outer"]
    assert list(_by_name(outer)) == [kernel, "inner"]
    inner = _by_name(outer)["inner"]
    assert list(_by_name(inner)) == [kernel]
    launched = [_by_name(outer)[kernel], _by_name(inner)[kernel], _by_name(root)[kernel]]
    assert [node["metrics"]["count"] for node in launched] == [2, 1, 1]
    for node, count in zip(launched, (2, 1, 1)):
        assert node["metrics"]["bytes"] == 8 * n * count
        assert node["metrics"]["flops32"] == 2.0 * n * count
        assert node["metrics"]["time (ns)"] > 0
    assert outer["metrics"]["count"] == 1 and outer["metrics"]["bytes"] == scope_bytes
    assert outer["metrics"]["flops32"] == scope_flops
    assert outer["metrics"]["time (ns)"] >= 0 and inner["metrics"]["time (ns)"] >= 0


def test_the_viewer_derives_inclusive_values_and_rates(fresh):
    rng = np.random.default_rng(17)
    n = int(rng.integers(200, 600))
    scope_bytes, scope_flops = int(rng.integers(1000, 9000)), float(rng.uniform(1e6, 1e7))
    _record_nested(rng, n, scope_bytes, scope_flops)
    root, _ = json.loads((fresh / "nested.hatchet").read_text())
    outer = _by_name(root)["outer"]

    def subtree_ns(node):
        own = node["metrics"].get("time (ns)", 0)
        return own + sum(subtree_ns(child) for child in node["children"])

    names = ["time/ns", "count", "bytes", "tflop32/s", "gflop/s", "gbyte/s", "time/%"]
    tree, metrics = viewer.parse(names, "nested.hatchet")
    assert metrics == names
    node = tree.root.children["outer"]
    outer_ns = subtree_ns(outer)
    flops = scope_flops + 3 * 2.0 * n
    assert tree.value("time/ns", node) == pytest.approx(outer_ns)
    assert tree.value("count", node) == 1
    assert tree.value("bytes", node) == scope_bytes + 3 * 8 * n
    assert tree.value("tflop32/s", node) == pytest.approx(flops / (outer_ns * 1e-9) / 1e12)
    assert tree.value("gflop/s", node) == pytest.approx(flops / (outer_ns * 1e-9) / 1e9)
    assert tree.value("gbyte/s", node) == pytest.approx(
        (scope_bytes + 24 * n) / (outer_ns * 1e-9) / 1e9
    )
    assert tree.value("time/ns", tree.root) == pytest.approx(subtree_ns(root))
    assert tree.value("time/%", tree.root) == pytest.approx(100.0)
    assert 0 < tree.value("time/%", node) <= 100.0


def test_print_tree_lines(fresh, capsys):
    rng = np.random.default_rng(18)
    n = int(rng.integers(200, 600))
    _record_nested(rng, n, 512, 4096.0)
    tree, metrics = viewer.parse(["count", "time/ms"], "nested.hatchet")
    capsys.readouterr()
    viewer.print_tree(tree, metrics)
    lines = capsys.readouterr().out.splitlines()
    kernel = f"doubled [n={n}]"
    shapes = ["ROOT", "|- outer", f"|  |- {kernel}", "|  `- inner", f"|     `- {kernel}"]
    shapes.append(f"`- {kernel}")
    assert lines[0].split() == ["count", "time/ms", "name"]
    assert [line[26:] for line in lines[1:]] == [" " + shape for shape in shapes]
    counts = [line[:12].strip() for line in lines[1:]]
    assert counts == ["-", "1", "2", "1", "1", "1"]
    nodes = [node for node, _ in tree.root.walk()]
    for line, node in zip(lines[1:], nodes):
        assert float(line[13:25]) == pytest.approx(tree.value("time/ms", node), abs=5e-4)


def test_a_metric_that_cannot_be_derived_is_an_error_naming_it(fresh):
    _record_nested(np.random.default_rng(19), 300, 64, 128.0)
    with pytest.raises(ValueError, match=r"'tflop8/s' needs 'flops8'.*nested\.hatchet"):
        viewer.parse(["tflop8/s", "time/ms"], "nested.hatchet")
    with pytest.raises(ValueError, match=r"'watts' is not in nested\.hatchet"):
        viewer.parse(["watts"], "nested.hatchet")
    with pytest.raises(ValueError, match=r"'util' needs the GPU's peak rates"):
        viewer.parse(["util"], "nested.hatchet")


def test_deactivated_sessions_record_nothing(fresh):
    rng = np.random.default_rng(20)
    number = proton.start("toggled", hook="triton")
    proton.deactivate(number)
    assert not knobs.launch_hooks_set()
    with proton.scope("while off", {"bytes": 1}):
        _launch(300, rng)
    proton.activate(number)
    assert knobs.launch_hooks_set()
    with proton.scope("while on", {"bytes": 5}):
        _launch(300, rng)
        proton.deactivate()  # ends the open scope now; its exit is then nothing
    _launch(300, rng)
    proton.finalize()
    root, _ = json.loads((fresh / "toggled.hatchet").read_text())
    assert list(_by_name(root)) == ["while on"]
    scope = _by_name(root)["while on"]
    assert scope["metrics"]["count"] == 1 and scope["metrics"]["bytes"] == 5
    assert [child["metrics"]["count"] for child in scope["children"]] == [1]


def test_scope_time_is_the_enclosed_work_and_cpu_timed_scope_adds_the_host_time(fresh):
    proton.start("slept")
    with proton.cpu_timed_scope("sleep", {"flops64": 3.0}):
        time.sleep(0.05)

    @proton.scope("decorated")
    def nap():
        time.sleep(0.02)

    nap()
    nap()
    proton.finalize()
    tree, _ = viewer.parse(["time/ms", "cpu_time/ms", "avg_time/ms"], "slept.hatchet")
    nodes = {node.name: node for node, _ in tree.root.walk()}
    assert 50 <= tree.value("time/ms", nodes["sleep"]) < 1000
    assert 50 <= tree.value("cpu_time/ms", nodes["sleep"]) < 1000
    assert 40 <= tree.value("time/ms", nodes["decorated"]) < 1000
    assert tree.value("avg_time/ms", nodes["decorated"]) == pytest.approx(
        tree.value("time/ms", nodes["decorated"]) / 2
    )
    assert tree.value("cpu_time/ms", nodes["decorated"]) is None


def test_profile_decorator_and_the_viewer_command(fresh):
    rng = np.random.default_rng(21)

    @proton.profile(name="decorated", hook="triton")
    def work():
        _launch(257, rng)

    work()
    command = [sys.executable, "-m", "naiad.triton.profiler.viewer", "-m", "count,gbyte/s"]
    done = subprocess.run(
        [*command, "decorated.hatchet"], capture_output=True, text=True, cwd=fresh, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["count", "gbyte/s", "name"]
    assert lines[2].split()[0] == "1" and lines[2].endswith("`- doubled [n=257]")
    assert float(lines[2].split()[1]) > 0


def test_unsupported_choices_are_refused_by_name(fresh):
    with pytest.raises(ValueError, match=r"data='trace' is not supported"):
        proton.start("x", data="trace")
    with pytest.raises(ValueError, match=r"no session 3"):
        proton.activate(3)
    with pytest.raises(RuntimeError, match=r"no scope was entered"):
        proton.exit_scope()


class _FakeCuda:
    """torch.cuda's events as the event clock uses them: each record is 0.25 ms after the
    last; no event reads as done until a synchronize (counted)."""

    def __init__(self):
        self.now, self.synchronized, self.made = 0.0, 0, 0
        cuda = self

        class Event:
            def __init__(self, enable_timing):
                assert enable_timing
                cuda.made += 1

            def record(self):
                cuda.now += 0.25
                self.at = cuda.now

            def query(self):
                return cuda.synchronized > 0

            def synchronize(self):
                cuda.synchronized += 1

            def elapsed_time(self, end):
                return end.at - self.at

        self.Event = Event

    @staticmethod
    def current_device():
        return 0


H200 = {"arch": "90", "num_sms": 132, "clock_rate": 1980000}
H200.update({"memory_clock_rate": 3201000, "bus_width": 6144})


def test_on_cuda_scopes_are_timed_by_events_read_once(fresh, monkeypatch):
    """Once CUDA is in use, a scope's time is the time between its events (read at deactivate
    with one synchronize, none per scope), events are reused, and the GPU's table is written,
    from which `util` is derived against the H200's peaks."""
    from naiad.triton.profiler import clock

    cuda = _FakeCuda()
    monkeypatch.setattr(clock, "_events", [clock.EventClock(type("torch", (), {"cuda": cuda}))])
    monkeypatch.setattr(session.devices, "cuda_table", lambda device: {"CUDA": {"0": H200}})
    rng = np.random.default_rng(22)
    flops, nbytes = float(rng.uniform(1e12, 2e12)), int(rng.integers(1e9, 2e9))
    number = proton.start("events")
    for _ in range(3):
        with proton.scope("step", {"flops16": flops, "bytes": nbytes}), proton.scope("half"):
            pass
    assert cuda.synchronized == 0  # nothing read yet
    proton.deactivate(number)
    assert cuda.synchronized == 1
    proton.activate(number)
    with proton.scope("step", {"flops16": flops, "bytes": nbytes}):
        pass
    proton.finalize()
    assert cuda.made == 12  # six scopes' events, reused by the seventh
    tree, _ = viewer.parse(["time/ms", "count", "util", "tflop16/s"], "events.hatchet")
    step = tree.root.children["step"]
    assert tree.value("count", step) == 4
    assert tree.value("time/ms", step) == pytest.approx(3 * 0.75 + 0.25)
    assert tree.value("time/ms", step.children["half"]) == pytest.approx(3 * 0.25)
    seconds = (3 * 0.75 + 0.25) * 1e-3
    peak_flops = 132 * 1980000e3 * 4096
    peak_bytes = 2 * 3201000e3 * 6144 / 8
    expected = max(4 * flops / peak_flops, 4 * nbytes / peak_bytes) / seconds
    assert tree.value("util", step) == pytest.approx(expected)
    assert tree.value("tflop16/s", step) == pytest.approx(4 * flops / seconds / 1e12)
