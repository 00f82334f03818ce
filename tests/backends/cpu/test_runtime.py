"""The grid runner (naiad/backends/cpu/pool.py) on hand-written entry points: results, program
order, atomics across threads, failures reported at the kernel's line, scratch arenas, fork, and
NAIAD_NUM_THREADS."""

import ctypes
import os
import threading

import numpy as np
import pytest
from runtime_kernels import BLOCK, entry

from naiad import knobs
from naiad.backends.cpu import abi, lanes, pool, pool_caller_ir
from naiad.errors import InternalError, KernelAssertionError, KernelIndexError

THREADS = [1, 2, 3]


def params(n_programs, *arguments):
    """A parameter block for a 1-D grid: (n, 1, 1), then the arguments."""
    return np.array([n_programs, 1, 1, *arguments], np.int64)


def address(array: np.ndarray) -> int:
    return array.ctypes.data


def vector_add(n, threads, rng):
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    programs = -(-n // BLOCK)
    with knobs.override(NAIAD_NUM_THREADS=threads):
        pool.run(
            entry("vector_add"),
            params(programs, address(x), address(y), address(out), n),
            programs,
            0,
            [],
        )
    return x, y, out


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("n", [1, 100, 64 * 1000 + 5])
def test_vector_add(n, threads):
    x, y, out = vector_add(n, threads, np.random.default_rng(n))
    np.testing.assert_array_equal(out, x + y)


def test_thread_counts_agree():
    results = [vector_add(50_000, t, np.random.default_rng(7))[2] for t in (1, 2)]
    np.testing.assert_array_equal(results[0], results[1])


@pytest.mark.parametrize("kind", ["ctypes", "int"])
def test_parameter_block_kinds(kind):
    rng = np.random.default_rng(3)
    n = 1000
    x, y = rng.standard_normal((2, n)).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    programs = -(-n // BLOCK)
    block = (ctypes.c_int64 * 7)(programs, 1, 1, address(x), address(y), address(out), n)
    handle = block if kind == "ctypes" else ctypes.addressof(block)
    pool.run(entry("vector_add"), handle, programs, 0, [])
    np.testing.assert_array_equal(out, x + y)


def test_inline_runs_programs_in_order():
    n = 300
    tickets = np.full(n, -1, np.int64)
    counter = np.zeros(1, np.int64)
    with knobs.override(NAIAD_NUM_THREADS=1):
        pool.run(entry("program_order"), params(n, address(tickets), address(counter)), n, 0, [])
    np.testing.assert_array_equal(tickets, np.arange(n))


@pytest.mark.parametrize("threads", [2, 3])
def test_chunks_run_consecutive_programs_in_order(threads):
    n = 4000
    tickets = np.full(n, -1, np.int64)
    counter = np.zeros(1, np.int64)
    with knobs.override(NAIAD_NUM_THREADS=threads):
        pool.run(entry("program_order"), params(n, address(tickets), address(counter)), n, 0, [])
    assert sorted(tickets) == list(range(n))  # each program ran exactly once
    chunk = -(-n // (threads * pool.CHUNKS_PER_THREAD))
    for start in range(0, n, chunk):
        assert np.all(np.diff(tickets[start : start + chunk]) > 0)


@pytest.mark.parametrize("threads", [2, 3])
def test_programs_may_wait_for_lower_ids(threads):
    """A chain where each program waits for the one before it completes: it would deadlock if a
    chunk could start before a chunk of lower ids had been taken by a running thread."""
    n = 2000
    flags = np.zeros(n, np.int32)
    with knobs.override(NAIAD_NUM_THREADS=threads):
        pool.run(entry("chain"), params(n, address(flags), 1 << 34), n, 0, [("t.py", 1, "hung")])
    assert flags.all()


@pytest.mark.parametrize("threads", THREADS)
def test_atomics_under_contention_are_exact(threads):
    rng = np.random.default_rng(11)
    n, reps = 512, 200
    values = rng.integers(-(10**9), 10**9, n, dtype=np.int64)
    total = np.array([12345], np.int64)
    with knobs.override(NAIAD_NUM_THREADS=threads):
        pool.run(entry("contended_add"), params(n, address(values), address(total), reps), n, 0, [])
    assert int(total[0]) == 12345 + reps * int(values.sum())


KERNEL_SOURCE = """\
def kernel(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 4))
    tl.device_assert(x > 0, "x > 0")
    tl.store(x_ptr + 8, x)
"""


@pytest.fixture
def sites(tmp_path):
    """A site table pointing into a kernel file: site 1 asserts, site 2 checks bounds."""
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL_SOURCE)
    return [
        abi.Site(str(path), 1, "unused"),
        abi.Site(str(path), 3, "Device-side assertion `x > 0` failed"),
        abi.Site(str(path), 4, "offset {0} is out of bounds of `x_ptr` ({1} programs ran before)"),
    ]


def fail_at(n, bad, code, threads, sites, site=1):
    ran = np.zeros(1, np.int64)
    with knobs.override(NAIAD_NUM_THREADS=threads):
        pool.run(entry("fail_at"), params(n, bad, address(ran), code, site), n, 0, sites)
    return ran


@pytest.mark.parametrize("threads", THREADS)
def test_device_assert_names_the_kernel_line(threads, sites):
    with pytest.raises(KernelAssertionError) as info:
        fail_at(100, 37, abi.FAULT_ASSERT, threads, sites)
    error = info.value
    assert isinstance(error, AssertionError)
    assert error.location.filename == sites[1].file and error.location.lineno == 3
    lines = str(error).splitlines()
    assert lines[0] == (
        f"{sites[1].file}:3: error: Device-side assertion `x > 0` failed in program (37, 0, 0)"
    )
    assert lines[1].strip() == 'tl.device_assert(x > 0, "x > 0")'


def test_bounds_fault_formats_its_info(sites):
    with pytest.raises(KernelIndexError) as info:
        fail_at(10, 3, abi.FAULT_BOUNDS, 1, sites, site=2)
    assert isinstance(info.value, IndexError)
    assert str(info.value).splitlines()[0] == (
        f"{sites[2].file}:4: error: offset 21 is out of bounds of `x_ptr` (3 programs ran before) "
        "in program (3, 0, 0)"
    )


def test_failure_reports_3d_program_coordinates(sites):
    ran = np.zeros(1, np.int64)
    gx, gy, gz = 4, 3, 2
    pid = 2 + gx * (1 + gy * 1)  # program (2, 1, 1)
    block = np.array([gx, gy, gz, pid, address(ran), abi.FAULT_ASSERT, 1], np.int64)
    with pytest.raises(KernelAssertionError, match=r"in program \(2, 1, 1\)"):
        pool.run(entry("fail_at"), block, gx * gy * gz, 0, sites)


def test_failure_stops_taking_chunks(sites):
    n, threads = 100_000, 2
    ran = np.zeros(1, np.int64)
    block = params(n, 0, address(ran), abi.FAULT_ASSERT, 1)
    with knobs.override(NAIAD_NUM_THREADS=threads), pytest.raises(KernelAssertionError):
        pool.run(entry("fail_at"), block, n, 0, sites)
    # Program 0 fails first; every other thread finishes at most the chunk it holds.
    chunk = -(-n // (threads * pool.CHUNKS_PER_THREAD))
    assert 1 <= ran[0] <= 1 + (threads - 1) * chunk


def test_status_is_zeroed_between_launches(sites):
    with pytest.raises(KernelAssertionError):
        fail_at(5, 2, abi.FAULT_ASSERT, 1, sites)
    ran = fail_at(5, 99, abi.FAULT_ASSERT, 1, sites)  # no program fails now
    assert ran[0] == 5


def test_one_program_launches_after_failures_and_cancels(sites):
    """A one-program grid calls its entry point directly (lanes.run_direct): its failure is
    reported as any launch's, and a status record left set by a failed launch (of any grid) or
    a cancelled one does not stop the next one-program launch from running."""
    with pytest.raises(KernelAssertionError, match=r"in program \(0, 0, 0\)"):
        fail_at(1, 0, abi.FAULT_ASSERT, 1, sites)
    assert fail_at(1, 99, abi.FAULT_ASSERT, 1, sites)[0] == 1
    with pytest.raises(KernelAssertionError):
        fail_at(40, 3, abi.FAULT_ASSERT, 2, sites)
    assert fail_at(1, 99, abi.FAULT_ASSERT, 2, sites)[0] == 1
    lanes.local.lane.code.value = pool_caller_ir.FAULT_INTERRUPT  # as a Ctrl-C's cancel leaves it
    assert fail_at(1, 99, abi.FAULT_ASSERT, 1, sites)[0] == 1
    assert fail_at(3, 99, abi.FAULT_ASSERT, 1, sites)[0] == 3  # and a pool launch after it


def test_a_prepared_direct_launch_runs_as_the_pool_does(sites):
    """lanes.direct_launch, made once and called with a ctypes block and a program count,
    runs a small grid on the calling thread as pool.run does: every program in order, a
    failure reported at the kernel's line with its program and the later programs not run, a
    status left set by a failed or cancelled launch not stopping the next one, and the lane's
    scratch arena holding what the kernel asks for, grown where an earlier launch left it
    smaller."""
    ran = np.zeros(1, np.int64)
    launch = lanes.direct_launch(entry("fail_at"), 0, sites)

    def block(n, bad):
        return (ctypes.c_int64 * 7)(n, 1, 1, bad, address(ran), abi.FAULT_ASSERT, 1)

    with pytest.raises(KernelAssertionError, match=r"3: error: .* in program \(0, 0, 0\)"):
        launch(block(1, 0), lanes.program_count(1))
    with pytest.raises(KernelAssertionError, match=r"3: error: .* in program \(5, 0, 0\)"):
        launch(block(9, 5), lanes.program_count(9))
    assert ran[0] == 1 + 6  # programs 0..5 of the second
    launch(block(1, 99), lanes.program_count(1))
    lanes.local.lane.code.value = pool_caller_ir.FAULT_INTERRUPT  # as a Ctrl-C's cancel leaves it
    launch(block(12, 99), lanes.program_count(12))
    assert ran[0] == 7 + 1 + 12
    words = 1 << 18  # more than this file's other launches ask for
    out = np.full(2, -1, np.int64)
    assert lanes.local.lane.scratch.size < 8 * words
    lanes.direct_launch(entry("scratch_user"), 8 * words, [])(
        (ctypes.c_int64 * 5)(1, 1, 1, address(out), words), lanes.program_count(1)
    )
    lane = lanes.local.lane
    assert out[0] == 0 and out[1] == lane.scratch.address and lane.scratch.size >= 8 * words
    assert lanes.program_count(12) is lanes.program_count(12)


def test_unknown_site_or_code_is_an_internal_error(sites):
    with pytest.raises(InternalError, match="site 1"):
        fail_at(5, 2, abi.FAULT_ASSERT, 1, sites[:1])
    with pytest.raises(InternalError, match="unknown status code 9"):
        fail_at(5, 2, 9, 1, sites)


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("words", [8, 1 << 17])
def test_scratch_arenas(threads, words):
    n = 48
    out = np.full(2 * n, -1, np.int64)
    with knobs.override(NAIAD_NUM_THREADS=threads):
        pool.run(entry("scratch_user"), params(n, address(out), words), n, 8 * words, [])
    sums, arenas = out[0::2], out[1::2]
    np.testing.assert_array_equal(sums, np.arange(n) * words)  # no arena shared by two threads
    assert np.all(arenas % abi.SCRATCH_ALIGN == 0)
    assert len(set(arenas.tolist())) <= threads


def test_launches_from_several_python_threads():
    errors = []

    def launch(seed):
        try:
            for threads in (1, 2):
                x, y, out = vector_add(20_000 + seed, threads, np.random.default_rng(seed))
                np.testing.assert_array_equal(out, x + y)
        except Exception as exc:  # reported below: pytest does not see other threads' errors
            errors.append(exc)

    # Loaded before the threads start: functools.cache lets threads that miss at once each
    # load a copy, and the copy it does not keep is unmapped while another thread runs it.
    entry("vector_add")
    workers = [threading.Thread(target=launch, args=(seed,)) for seed in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert errors == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_child_of_fork_can_launch():
    """The child has none of the parent's worker threads: its first large launch starts new
    ones (Python warns about forking a process with threads; the pool is why it is safe)."""
    vector_add(10_000, 2, np.random.default_rng(1))  # the parent's pool is running
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        status = 1
        try:
            x, y, out = vector_add(10_000, 2, np.random.default_rng(2))
            status = 0 if np.array_equal(out, x + y) else 2
        finally:
            os.write(write, bytes([status]))
            os._exit(0)
    os.close(write)
    _, exit_status = os.waitpid(child, 0)
    assert os.read(read, 1) == b"\x00"
    os.close(read)
    assert exit_status == 0
    x, y, out = vector_add(10_000, 2, np.random.default_rng(3))  # the parent's pool still works
    np.testing.assert_array_equal(out, x + y)


def test_shutdown_and_restart():
    vector_add(5_000, 2, np.random.default_rng(4))
    pool.shutdown()
    x, y, out = vector_add(5_000, 2, np.random.default_rng(5))
    np.testing.assert_array_equal(out, x + y)


def test_num_threads_knob():
    with knobs.override(NAIAD_NUM_THREADS=3):
        assert pool.thread_count() == 3
    quota = pool._cgroup_cpus(pool.CGROUP_CPU_MAX)
    with knobs.override(NAIAD_NUM_THREADS=0):
        assert pool.thread_count() == min(len(os.sched_getaffinity(0)), quota or 1 << 30)
    with knobs.override(NAIAD_NUM_THREADS="two"), pytest.raises(ValueError, match="NAIAD_NUM"):
        pool.thread_count()


@pytest.mark.parametrize(
    "text, cpus",
    [("max 100000\n", None), ("400000 100000\n", 4), ("250000 100000", 2),
     ("50000 100000", 1), ("", None), ("four 100000", None)],
)  # fmt: skip
def test_default_threads_follow_the_cgroup_quota(tmp_path, text, cpus):
    """A container's CPU quota (cgroup v2 cpu.max: quota and period in µs) caps the default
    thread count, in whole CPUs; no limit, or a file that does not parse, leaves it alone."""
    path = tmp_path / "cpu.max"
    path.write_text(text)
    assert pool._cgroup_cpus(str(path)) == cpus
    assert pool._cgroup_cpus(str(tmp_path / "absent")) is None
