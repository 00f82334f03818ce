"""Fork and Ctrl-C against CPU kernels (issue 13, item 7), each in a process of its own.

- `os.fork()` while another thread compiles: every child compiled and launched, where before
  each of 6 children waited forever on llvmlite's lock (or the compile lock), held in the child
  by a thread it does not have (fork_during_compile.py; fork_safety.py is the fix).
- Ctrl-C during a launch of about a minute: KeyboardInterrupt well under a second after the
  signal, on the worker pool and inline, where before it came when the launch ended; the next
  launches compute right (interrupt_launch.py; pool_caller_ir.py is the fix).
- A second Ctrl-C while a program never ends (it waits for one the first cancelled): the
  launch is abandoned to its threads, and the next launches run on new workers.
- Ctrl-C at every moment of a kernel's first launch (compile, load, run): the next launches
  compute right.
"""

import os
import pathlib
import re
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).parent


def run_script(name: str, *args: str, **env: str) -> str:
    """Run a script of this folder with the CPU back end; its output, if it exited 0."""
    environment = {**os.environ, "NAIAD_BACKEND": "cpu", **env}
    done = subprocess.run(
        [sys.executable, str(HERE / name), *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=600,
    )
    output = f"exit status {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert done.returncode == 0, output
    return done.stdout


def test_children_forked_while_a_thread_compiles_compile_and_launch():
    output = run_script("fork_during_compile.py", "6", NAIAD_ALWAYS_COMPILE="1")
    assert output.count(": ok (") == 6, output


@pytest.mark.parametrize("mode", ["long", "inline"])
def test_ctrl_c_stops_a_long_launch_at_once(mode):
    output = run_script("interrupt_launch.py", mode)
    latency_ms = float(re.search(r"latency_ms=([\d.]+)", output)[1])
    assert latency_ms < 1000, output  # about 20 ms on an idle machine
    assert output.split()[-1] == "ok", output


def test_a_second_ctrl_c_abandons_programs_that_do_not_end():
    """The first signal (0.5 s) ends the launch unless a worker's program waits for one the
    caller will not run now (most runs): the second (1.5 s) abandons it."""
    output = run_script("interrupt_launch.py", "stuck")
    seconds = float(re.search(r"KeyboardInterrupt ([\d.]+) s", output)[1])
    abandoned = int(re.search(r"abandoned=(\d)", output)[1])
    assert (1.4 < seconds < 2.5) if abandoned else (0.4 < seconds < 1.4), output
    assert output.split()[-1] == "ok", output


def test_ctrl_c_during_first_launches_leaves_nothing_half_made():
    output = run_script("interrupt_launch.py", "first", NAIAD_ALWAYS_COMPILE="1")
    assert output.split()[-1] == "ok", output
