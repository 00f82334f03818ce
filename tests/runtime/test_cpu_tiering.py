"""Tiered execution on the CPU (runtime/cpu_tiering.py): a small launch of a kernel not compiled
yet runs in the interpreter, under the CPU's language rules, while the kernel compiles in the
background (it returns the kernel to come); later launches run compiled; large launches, and
every launch with tiering off, wait for the compiled kernel. Each kernel here is defined inside
its test, so that no other test has compiled it."""

import ast
import threading
import time

import numpy as np
import pytest

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.runtime import cpu_launcher, cpu_tiering, ttir_work
from naiad.runtime.compiled_kernel import CompiledKernel
from naiad.runtime.compiled_later import CompiledLater


@pytest.fixture(autouse=True)
def tiered(fresh_cache):
    with knobs.override(NAIAD_BACKEND="auto", NAIAD_CPU_TIERING="auto"):
        yield


def _scale_add():
    @naiad.jit
    def scale_add(x, y, out, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        x_values = tl.load(x + offsets, mask=mask)
        tl.store(out + offsets, x_values * 3.0 + tl.load(y + offsets, mask=mask), mask=mask)

    return scale_add


def _until_compiled(launch, seconds=60.0):
    """Launch until a launch runs compiled (returns its CompiledKernel)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ran = launch()
        if isinstance(ran, CompiledKernel):
            return ran
        time.sleep(0.05)
    raise AssertionError("the background compile did not finish")


def test_small_launch_runs_interpreted_then_compiled():
    kernel = _scale_add()
    rng = np.random.default_rng(0)
    n = 300
    x, y = rng.standard_normal(n, np.float32), rng.standard_normal(n, np.float32)
    expected = x * np.float32(3.0) + y
    outputs = []

    def launch():
        out = np.full(n, np.nan, np.float32)
        ran = kernel[(naiad.cdiv(n, 128),)](x, y, out, n, BLOCK=128)
        outputs.append(out)
        return ran

    first = launch()  # the interpreter ran it; the kernel to come reads as a CompiledKernel
    assert isinstance(first, CompiledLater)
    assert "define void @scale_add(" in first.asm["llir"]  # waits for (or finishes) the compile
    assert isinstance(launch(), CompiledKernel)
    for out in outputs:
        np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("setting", ["off", "always-compile"])
def test_tiering_off_runs_compiled_at_once(setting):
    kernel = _scale_add()
    x, y = np.random.default_rng(1).standard_normal((2, 64), np.float32)
    out = np.full(64, np.nan, np.float32)
    with knobs.override(NAIAD_CPU_TIERING=setting):
        assert isinstance(kernel[(1,)](x, y, out, 64, BLOCK=64), CompiledKernel)
    np.testing.assert_array_equal(out, x * np.float32(3.0) + y)


@pytest.mark.parametrize(
    "hook",
    [
        "NAIAD_JIT_CACHE_HOOK",
        "NAIAD_JIT_POST_COMPILE_HOOK",
        "NAIAD_COMPILATION_LISTENER",
        "NAIAD_KERNEL_LOAD_START_HOOK",
        "NAIAD_KERNEL_LOAD_END_HOOK",
    ],
)
def test_a_hook_watching_compiles_or_loads_sees_them_in_the_first_launch(hook):
    """Triton's launch compiles and loads a new kernel before it returns, and programs that set
    these hooks (its own tests among them) read what the hook saw right after that launch."""
    kernel = _scale_add()
    x, y = np.random.default_rng(3).standard_normal((2, 64), np.float32)
    out = np.full(64, np.nan, np.float32)
    calls = []

    def watch(*args, **kwargs):
        calls.append(kwargs.get("key", args[:1]))
        return False  # (the cache hook: go on compiling)

    with knobs.override(**{hook: watch}):
        assert isinstance(kernel[(1,)](x, y, out, 64, BLOCK=64), CompiledKernel)
    assert calls
    np.testing.assert_array_equal(out, x * np.float32(3.0) + y)


def test_large_launch_waits_for_the_compiled_kernel():
    kernel = _scale_add()
    n = cpu_tiering.SMALL_PROGRAMS * 2 * 256
    x, y = np.random.default_rng(2).standard_normal((2, n), np.float32)
    out = np.full(n, np.nan, np.float32)
    assert isinstance(kernel[(naiad.cdiv(n, 256),)](x, y, out, n, BLOCK=256), CompiledKernel)
    np.testing.assert_array_equal(out, x * np.float32(3.0) + y)


def test_a_long_loop_given_by_the_arguments_waits_for_the_compiled_kernel(monkeypatch):
    """Two programs of two elements look small, but `n` gives the grid-stride loop n / 4
    trips: the estimate reads them from the arguments (loop_trips.py) and the launch compiles.
    Interpreted, these 20,001 trips took 97 s here (8 million trips: hours)."""

    @naiad.jit
    def double_strided(x, y, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        for _ in range(tl.cdiv(n, 4)):
            mask = offsets < n
            tl.store(y + offsets, tl.load(x + offsets, mask=mask) * 2.0, mask=mask)
            offsets += tl.num_programs(0) * BLOCK

    def interpreted(*args):
        raise AssertionError("the launch ran in the interpreter")

    monkeypatch.setattr(cpu_launcher, "run_grid", interpreted)
    n = 80_003
    x = np.random.default_rng(3).standard_normal(n).astype(np.float32)
    y = np.full(n, np.nan, np.float32)
    assert isinstance(double_strided[(2,)](x, y, n, BLOCK=2), CompiledKernel)
    np.testing.assert_array_equal(y, x * np.float32(2.0))


def test_interpreted_launch_keeps_the_cpu_rules():
    """An fp32 dot is IEEE on the CPU: the interpreted first launch must not round its
    operands to tf32 (the interpreter's own default, CUDA's), so both launches agree with
    float64 far closer than tf32 could."""

    @naiad.jit
    def matmul(a, b, c, N: tl.constexpr):
        rows = tl.arange(0, N)[:, None] * N + tl.arange(0, N)[None, :]
        tl.store(c + rows, tl.dot(tl.load(a + rows), tl.load(b + rows)))

    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 32, 32), np.float32)
    expected = a.astype(np.float64) @ b.astype(np.float64)

    def launch():
        c = np.full((32, 32), np.nan, np.float32)
        ran = matmul[(1,)](a, b, c, N=32)
        np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)
        return ran

    assert isinstance(launch(), CompiledLater)
    _until_compiled(launch)


def test_device_print_is_the_same_interpreted_and_compiled(capfd):
    @naiad.jit
    def show(x, BLOCK: tl.constexpr):
        tl.device_print("x", tl.load(x + tl.arange(0, BLOCK)))

    x = np.random.default_rng(4).standard_normal(4).astype(np.float32)
    assert isinstance(show[(2,)](x, BLOCK=4), CompiledLater)
    interpreted = capfd.readouterr().out
    _until_compiled(lambda: show[(2,)](x, BLOCK=4))
    capfd.readouterr()
    show[(2,)](x, BLOCK=4)
    assert capfd.readouterr().out == interpreted
    assert interpreted.count("\n") == 8 and f"idx (3) x: {x[3]:f}" in interpreted


def test_threads_launching_at_once_compile_once(monkeypatch):
    """One compile per specialization, however many threads launch it first, and whether it
    ran in the background or in a thread waiting for it (a large launch)."""
    kernel = _scale_add()
    loads = []
    load = cpu_launcher.load_launchable
    monkeypatch.setattr(cpu_launcher, "load_launchable", lambda k: loads.append(k) or load(k))
    rng = np.random.default_rng(5)
    large = 64 * 256 + 3  # 65 programs; no size here divides by 16 (one specialization)
    x, y = rng.standard_normal((2, large), np.float32)
    expected = x * np.float32(3.0) + y
    outputs, errors = [], []

    def launch(n):
        try:
            out = np.full(n, np.nan, np.float32)
            kernel[(naiad.cdiv(n, 256),)](x[:n], y[:n], out, n, BLOCK=256)
            outputs.append((n, out))
        except Exception as error:  # reported below, in the test's thread
            errors.append(error)

    sizes = [200, 300, large, 500, large, 100]  # small ones tier, the large ones wait
    threads = [threading.Thread(target=launch, args=(n,)) for n in sizes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    _until_compiled(lambda: kernel[(1,)](x, y, np.empty(100, np.float32), 100, BLOCK=256))
    assert len(loads) == 1
    for n, out in outputs:
        np.testing.assert_array_equal(out, expected[:n])


def test_work_estimate_reads_blocks_and_loops():
    ttir = "%0 = tt.make_range {end = 128 : i32} : tensor<128xi32>\n%1 : tensor<64x32xf32>\n"
    assert ttir_work.estimated_work(ttir, 3) == 3 * 2048
    looped = ttir + "scf.for %i = %a to %b step %c : i32 {\n}\n"
    assert ttir_work.estimated_work(looped, 3) == 3 * 2048 * cpu_tiering.LOOP_TRIPS_GUESS
    assert not ttir_work.is_small(ttir, cpu_tiering.SMALL_PROGRAMS + 1)
    small_blocks = "%0 = tt.make_range {end = 2 : i32} : tensor<2xi32>\n"
    assert ttir_work.estimated_work(small_blocks, 3) == 3 * cpu_tiering.SMALL_BODY


def test_loops_one_after_another_add_their_trips_and_nested_ones_multiply():
    """A layer norm's three passes over a row of 4 blocks on 4 programs: 12 bodies a program
    (about 50 ms interpreted), not 4**3; a loop inside another runs its trips per outer trip."""
    header = 'tt.func public @k(%n: i32 loc("a{b":1:1)) {\n'
    passes = "".join(
        f"  scf.for %i{k} = %c0 to %n step %c64 : i32 {{\n    %x{k} = arith.addi %i{k}, %i{k}\n"
        "  } {tt.num_stages = 1 : i32}\n"
        for k in range(3)
    )
    constants = "  %c0 = arith.constant 0 : i32\n  %c64 = arith.constant 64 : i32\n"
    body = cpu_tiering.SMALL_BODY
    sequential = header + constants + passes + "}\n"
    assert ttir_work.estimated_work(sequential, 4, {"n": 256}) == 4 * body * 12
    assert ttir_work.is_small(sequential, 4, {"n": 256})
    assert not ttir_work.is_small(sequential, 4, {"n": 64 * 10_000})
    nested = (
        header
        + constants
        + (
            "  scf.for %i = %c0 to %n step %c64 : i32 {\n"
            "    scf.for %j = %c0 to %n step %c64 : i32 {\n    }\n"
            "    scf.for %k = %c0 to %n step %c64 : i32 {\n    }\n"
            "  }\n  scf.for %m = %c0 to %n step %c64 : i32 {\n  }\n}\n"
        )
    )
    assert ttir_work.estimated_work(nested, 1, {"n": 256}) == body * (4 + 16 + 16 + 4)
    called = nested + "tt.func private @f() {\n}\n"  # calls may nest loops: all multiply
    assert ttir_work.estimated_work(called, 1, {"n": 256}) == body * 4**4


def test_an_unknown_setting_is_refused():
    with knobs.override(NAIAD_CPU_TIERING="sometimes"), pytest.raises(ValueError, match="auto"):
        cpu_tiering.mode()


def test_the_worker_begins_a_compile_only_after_a_quiet_period(monkeypatch):
    """A job waits until no new job came for QUIET_S (a test suite's stream of new kernels
    launched once each begins none of their compiles); one taken by a launch meanwhile runs
    at once in that launch's thread."""
    monkeypatch.setattr(cpu_tiering, "QUIET_S", 0.5)
    worker = cpu_tiering._Worker()
    begun = {}

    def job(name):
        return cpu_tiering.BackgroundJob(
            lambda background: begun.setdefault(name, (time.monotonic(), background))
        )

    first, second, third = job("first"), job("second"), job("third")
    worker.submit(first)
    time.sleep(0.1)
    worker.submit(second)
    last_submit = time.monotonic()
    worker.submit(third)
    assert not begun  # however slow the machine, the worker cannot have begun
    assert worker.take(third)
    third._execute(background=False)
    assert begun["third"][1] is False
    assert first.wait() is not None and second.wait() is not None
    assert min(begun[n][0] for n in ("first", "second")) >= last_submit + 0.5 - 0.01
    assert begun["first"][1] is True and begun["second"][1] is True
    worker.close()


def test_a_larger_kernel_may_be_interpreted_for_longer():
    """The work limit grows with the kernel's operations (its compile's cost) past SMALL_WORK:
    the same launch is small for a kernel of many operations and not for one of few."""
    header = "tt.func public @k() {\n  %0 = tt.make_range {end = 4096 : i32} : tensor<4096xi32>\n"
    ops = "".join(f"  %a{i} = arith.addi %0, %0 : tensor<4096xi32>\n" for i in range(200))
    few, many = header + "  tt.return\n}\n", header + ops + "  tt.return\n}\n"
    assert ttir_work.operations(few) == 3 and ttir_work.operations(many) == 203
    programs = 2 * cpu_tiering.SMALL_WORK // 4096  # 32 programs, twice SMALL_WORK
    assert not ttir_work.is_small(few, programs)
    assert ttir_work.is_small(many, programs)
    assert not ttir_work.is_small(many, cpu_tiering.SMALL_PROGRAMS + 1)


def test_a_background_compile_stops_at_exit_and_stores_nothing(monkeypatch):
    """Once the worker is closed (the process exits), a background compile stops before its
    next stage, and its cache entry is not written: the next process compiles it anew."""
    from naiad.runtime import compiler
    from naiad.runtime.specialization import launch_specialization

    kernel = _scale_add()
    x, y = np.random.default_rng(6).standard_normal((2, 64), np.float32)
    bound = {"x": x, "y": y, "out": np.empty_like(x), "n": 64, "BLOCK": 64}
    spec = launch_specialization(kernel, bound)
    options = cpu_launcher.cpu_options(None, False)
    begun = compiler.begin_compile(kernel, spec, "cpu", options)
    stages = []
    closed = cpu_tiering._Worker()
    closed.close()
    monkeypatch.setattr(cpu_tiering, "_worker", closed)

    def stop():
        stages.append(len(stages))
        cpu_tiering.between_stages()

    with pytest.raises(cpu_tiering.Abandoned):
        begun.finish(background=True, between_stages=stop)
    assert stages == [0]
    again = compiler.begin_compile(kernel, spec, "cpu", options)
    assert isinstance(again, compiler.UnfinishedCompile)


def _parsing_threads(monkeypatch) -> list:
    """The threads that call `ast.parse` from now on, in order."""
    threads, parse = [], ast.parse
    monkeypatch.setattr(
        ast, "parse", lambda *a, **k: threads.append(threading.current_thread()) or parse(*a, **k)
    )
    return threads


def test_the_worker_runs_the_frontend_on_sources_parsed_at_the_launch(monkeypatch):
    """A first launch small by its AST builds no TTIR: the worker runs the frontend, on the
    sources the launch parsed (with a TTIR read from the cache too: the text without its
    module), and never parses one itself: CPython 3.11's `ast.parse` is not safe in two
    threads at once (test_core.py's failure reports met it)."""
    from naiad.runtime import compiler

    kernel = _scale_add()
    x, y = np.random.default_rng(7).standard_normal((2, 64), np.float32)
    out = np.full(64, np.nan, np.float32)
    read = compiler._build_or_read

    def as_read_from_disk(*args):
        build = read(*args)
        return compiler.TTIRBuild(build.kernel, None, build.spec, build.functions)

    built, build = [], compiler._build
    monkeypatch.setattr(compiler, "_build_or_read", as_read_from_disk)
    monkeypatch.setattr(
        compiler, "_build", lambda *a: built.append(threading.current_thread()) or build(*a)
    )
    parsing = _parsing_threads(monkeypatch)
    monkeypatch.setattr(cpu_tiering, "QUIET_S", 0.0)  # the worker compiles it, not a launch
    assert isinstance(kernel[(1,)](x, y, out, 64, BLOCK=64), CompiledLater)
    assert threading.main_thread() not in built, "the launch built no TTIR"
    cpu_tiering.settled()
    assert isinstance(kernel[(1,)](x, y, out, 64, BLOCK=64), CompiledKernel)
    assert built and threading.main_thread() not in built
    assert set(parsing) <= {threading.main_thread()}
    np.testing.assert_array_equal(out, x * np.float32(3.0) + y)


def test_a_source_the_launch_did_not_parse_fails_the_worker_not_the_kernel(monkeypatch):
    """A jit function whose source the first launch did not parse (here: its reading of the
    kernel's names stubbed out): the worker refuses to parse it, so its compile fails there,
    and the next launch compiles the kernel itself, right."""
    from naiad.runtime import cpu_first_launch

    parsing = _parsing_threads(monkeypatch)
    monkeypatch.setattr(cpu_first_launch, "_names", lambda fn: ())

    @naiad.jit
    def twice(v):
        return v * 2

    @naiad.jit
    def doubled(x, out, BLOCK: tl.constexpr):
        offsets = tl.arange(0, BLOCK)
        tl.store(out + offsets, twice(tl.load(x + offsets)))

    monkeypatch.setattr(cpu_tiering, "QUIET_S", 0.0)
    x = np.random.default_rng(8).standard_normal(32).astype(np.float32)
    out = np.full(32, np.nan, np.float32)
    assert isinstance(doubled[(1,)](x, out, BLOCK=32), CompiledLater)
    np.testing.assert_array_equal(out, x * np.float32(2.0))
    cpu_tiering.settled()
    out[:] = np.nan
    assert isinstance(doubled[(1,)](x, out, BLOCK=32), CompiledKernel)
    np.testing.assert_array_equal(out, x * np.float32(2.0))
    assert set(parsing) <= {threading.main_thread()}


def test_a_background_compile_pauses_between_stages_while_the_program_interprets(monkeypatch):
    """Between two stages the worker waits while a launch is interpreted and for QUIET_S after
    it (a compile begun in one pause does not run on through the launches that follow), and
    goes on at once when a launch waits for the job; closing the worker ends the wait."""
    monkeypatch.setattr(cpu_tiering, "QUIET_S", 0.3)
    worker = cpu_tiering._Worker()
    monkeypatch.setattr(cpu_tiering, "_worker", worker)
    stages = []
    gate = threading.Event()  # the first stage's work, until the test has begun a launch

    def run(background):
        for _ in range(3):
            cpu_tiering.between_stages()
            stages.append(time.monotonic())
            gate.wait()
        return "compiled"

    with worker.interpreted_launch():  # the program interprets: the job may not begin
        job = cpu_tiering.BackgroundJob(run)
        worker.submit(job)
        time.sleep(0.5)
        assert not stages
        ended = time.monotonic()
    deadline = time.monotonic() + 30
    while not stages and time.monotonic() < deadline:
        time.sleep(0.01)
    with worker.interpreted_launch():  # a launch during a stage holds the next one back
        gate.set()
        time.sleep(0.5)
        assert len(stages) == 1
        resumed_after = time.monotonic()
        cpu_tiering.finish_here(job)  # awaited: the stages go on, the launch still running
        assert job.result == "compiled" and job.awaited
    assert stages[0] >= ended + 0.3 - 0.01
    assert len(stages) == 3 and stages[1] >= resumed_after
    again = cpu_tiering.BackgroundJob(run)
    with worker.interpreted_launch():
        worker.submit(again)
        worker.close()  # the process exits: the waiting job is dropped
    assert again.dropped


def test_a_later_launch_after_a_pause_is_interpreted_again(monkeypatch):
    """While the program keeps interpreting (the worker finds no pause to begin the compile),
    a small launch of the same kernel that comes more than QUIET_S after its last one runs in
    the interpreter again, up to INTERPRETED_AGAIN times (one that comes at once compiles:
    test_small_launch_runs_interpreted_then_compiled)."""
    monkeypatch.setattr(cpu_tiering, "QUIET_S", 0.2)
    monkeypatch.setattr(cpu_tiering, "INTERPRETED_AGAIN", 1)
    worker = cpu_tiering._Worker()
    monkeypatch.setattr(cpu_tiering, "_worker", worker)
    kernel = _scale_add()
    x, y = np.random.default_rng(8).standard_normal((2, 64), np.float32)
    outputs = []

    def launch():
        out = np.full(64, np.nan, np.float32)
        outputs.append(out)
        return kernel[(1,)](x, y, out, 64, BLOCK=64)

    with worker.interpreted_launch():  # other kernels interpreted all along: no pause
        assert isinstance(launch(), CompiledLater)
        time.sleep(0.3)
        assert isinstance(launch(), CompiledLater)  # after a pause: again
        time.sleep(0.3)
        assert isinstance(launch(), CompiledKernel)  # past INTERPRETED_AGAIN: compiled here
    worker.close()
    for out in outputs:
        np.testing.assert_array_equal(out, x * np.float32(3.0) + y)


def _error_of(launch, tiering: str) -> BaseException:
    with knobs.override(NAIAD_CPU_TIERING=tiering), pytest.raises(Exception) as info:
        launch()
    return info.value


PLAIN_GLOBAL = 3  # not a tl.constexpr: a kernel may not read it


@pytest.mark.parametrize("case", ["shapes", "bitwise", "two_returns", "two_values", "a_global"])
def test_a_kernel_the_compiler_refuses_fails_its_first_launch_as_when_compiled(case):
    """Whether tiered before its TTIR (a straight kernel: its interpreted launch fails, and
    the frontend's error is raised) or after (a kernel whose `if` on a tensor the frontend
    alone types: the interpreter would run one path without error), a kernel the compiler
    refuses fails its first launch with the error a compiled launch raises, located alike."""

    @naiad.jit
    def shapes(out):
        a = tl.arange(0, 16)
        tl.store(out + a, a + tl.arange(0, 32))

    @naiad.jit
    def bitwise(out):
        x = tl.arange(0, 16).to(tl.float32)
        tl.store(out + tl.arange(0, 16), x & x)

    @naiad.jit
    def float_or_int(x):
        if x > 0:
            return x
        return 1

    @naiad.jit
    def two_returns(out):
        tl.store(out, float_or_int(tl.load(out)))

    @naiad.jit
    def two_values(out):
        x = tl.load(out)
        tl.store(out, x if x > 0 else 1)

    @naiad.jit
    def a_global(out):  # the interpreter would read it: the frontend refuses it
        tl.store(out + tl.arange(0, 16), tl.arange(0, 16) * PLAIN_GLOBAL)

    kernels = [shapes, bitwise, two_returns, two_values, a_global]
    kernel = {k.__name__: k for k in kernels}[case]
    out = np.ones(64, np.float32)
    tiered = _error_of(lambda: kernel[(1,)](out), "auto")
    kernel.forget_compiled()
    compiled = _error_of(lambda: kernel[(1,)](out), "off")
    assert type(tiered) is type(compiled)
    assert str(tiered) == str(compiled)
    assert np.all(out == 1.0)


def test_the_worker_thread_ends_once_its_compiles_are_done():
    """No thread of Naiad's outlives the background compiles: a process with another thread
    does not fork its autotuning compiles (autotune_cache.py)."""
    kernel = _scale_add()
    x, y = np.random.default_rng(4).standard_normal((2, 64), np.float32)
    out = np.full(64, np.nan, np.float32)
    assert isinstance(kernel[(1,)](x, y, out, 64, BLOCK=64), CompiledLater)
    assert cpu_tiering.settled()
    deadline = time.monotonic() + 10
    while any(t.name == "naiad-background-compile" for t in threading.enumerate()):
        assert time.monotonic() < deadline, "the background compile's thread is still alive"
        time.sleep(0.01)
    np.testing.assert_array_equal(out, x * np.float32(3.0) + y)
