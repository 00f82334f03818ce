"""The background compiles' worker (runtime/cpu_tiering.py) against the rest of the program: it
begins a compile only while no other thread runs Python, and a process that exits waits for a
running compile only once that compile has begun its stages (which run LLVM)."""

import threading
import time

import numpy as np

from naiad.runtime import cpu_tiering


class _Spinner:
    """A thread running Python without a pause, from `start()` to `stop()`."""

    def __init__(self):
        self.running = threading.Event()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._spin, daemon=True)

    def _spin(self):
        self.running.set()
        total = 0
        while not self.stopping.is_set():
            for i in range(1000):
                total += i

    def start(self):
        self.thread.start()
        self.running.wait()
        return self

    def stop(self):
        self.stopping.set()
        self.thread.join()


def test_a_thread_running_python_is_seen_and_one_waiting_or_in_native_code_is_not():
    """The probe gives the GIL up for a moment: a thread running Python keeps it for the
    switch interval; a sleeping thread, or one in a NumPy product (which lets the GIL go),
    hands it back at once. The spinner's probes are spread over 0.2 s, as the worker's polls
    are: on a loaded machine the OS takes the spinner's core from it for whole time slices,
    in which 40 probes in a row saw it 0 times and 40 apart (5 ms) at least 18 times."""
    spinner = _Spinner().start()
    try:
        seen = []
        for _ in range(40):
            seen.append(cpu_tiering._python_runs_elsewhere())
            time.sleep(0.005)
    finally:
        spinner.stop()
    assert sum(seen) >= 8
    assert not all(cpu_tiering._python_runs_elsewhere() for _ in range(40))

    a = np.random.default_rng(0).standard_normal((400, 400))
    done = threading.Event()

    def products():
        while not done.is_set():
            a @ a

    worker = threading.Thread(target=products, daemon=True)
    worker.start()
    try:
        assert not all(cpu_tiering._python_runs_elsewhere() for _ in range(40))
    finally:
        done.set()
        worker.join()


def test_the_worker_begins_no_compile_while_another_thread_runs_python(monkeypatch):
    """A program busy in Python between its launches (a test computing its reference, pytest
    ending a session) is not quiet: the job begins QUIET_S after that work ends, counted from
    the worker's last sight of it (on a loaded machine the OS can hold the busy thread off its
    core for 0.1 s, which its polls then miss: 0.15 s are allowed for that)."""
    monkeypatch.setattr(cpu_tiering, "QUIET_S", 0.4)
    worker = cpu_tiering._Worker()
    begun = []
    job = cpu_tiering.BackgroundJob(lambda background: begun.append(time.monotonic()) or "done")
    spinner = _Spinner().start()
    try:
        worker.submit(job)
        time.sleep(0.8)
        assert not begun
    finally:
        spinner.stop()
    ended = time.monotonic()
    assert job.wait() == "done"
    assert begun[0] >= ended + 0.4 - 0.15
    worker.close()


def test_the_exit_does_not_wait_for_a_compile_before_its_stages(monkeypatch):
    """A compile still in its Python (the compiler's imports, the frontend) does not hold the
    exit; it stops at its first stage. One in its stages is waited for until it stops before
    the next."""
    monkeypatch.setattr(cpu_tiering, "QUIET_S", 0.0)
    importing, imported, in_stage, stage_done = (threading.Event() for _ in range(4))
    stages = []

    def run(background):
        importing.set()
        imported.wait()  # the compiler's imports
        for name in ("optimize", "emit"):
            cpu_tiering.between_stages()
            stages.append(name)
            in_stage.set()
            stage_done.wait()
        return "compiled"

    worker = cpu_tiering._Worker()
    monkeypatch.setattr(cpu_tiering, "_worker", worker)
    job = cpu_tiering.BackgroundJob(run)
    worker.submit(job)
    assert importing.wait(30)
    started = time.monotonic()
    worker.close()
    assert time.monotonic() - started < 1.0 and not job.done()
    imported.set()
    assert job.wait() is None and stages == []  # stopped at its first stage

    worker = cpu_tiering._Worker()
    monkeypatch.setattr(cpu_tiering, "_worker", worker)
    job = cpu_tiering.BackgroundJob(run)
    worker.submit(job)
    assert in_stage.wait(30)  # in its first stage, until stage_done
    closing = threading.Thread(target=worker.close)
    closing.start()
    closing.join(0.5)
    assert closing.is_alive()  # the exit waits for the stage
    stage_done.set()
    closing.join(30)
    assert not closing.is_alive()
    assert job.wait() is None and stages == ["optimize"]
