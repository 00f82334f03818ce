"""Unmodified Triton programs (tests/compat/programs/) run on Naiad under `python -m naiad.run`,
in a subprocess, compiled for the CPU; their own checks pass and the values are right."""

import os
import subprocess
import sys
from pathlib import Path

import naiad

PROGRAMS = Path(__file__).parent / "programs"
NAIAD_DIR = Path(naiad.__file__).parent


def run_program(name: str, *args: str) -> str:
    env = dict(os.environ, NAIAD_BACKEND="cpu")  # compiled, not the tests' interpreter
    env.pop("NAIAD_INTERPRET", None)
    done = subprocess.run(
        [sys.executable, "-m", "naiad.run", str(PROGRAMS / name), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_vector_add_program_runs_on_naiad_on_the_cpu():
    out = run_program("vector_add.py")
    lines = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    assert Path(lines["triton from"]).parent == NAIAD_DIR / "triton"
    assert "BLOCK_SIZE" in lines["best config"]
    assert float(lines["max error"]) == 0.0


def test_a_torch_library_op_runs_on_naiad_eager_and_compiled():
    out = run_program("torch_library.py")
    assert "inductor sees triton: True" in out
    assert "eager: True" in out and "compiled: True" in out


def test_code_given_with_dash_c_runs_as_main_with_naiads_triton():
    """`python -m naiad.run -c CODE ARGS` behaves as `python -c`: the code runs as `__main__`
    (a module pickle finds), sys.argv is ['-c', *ARGS], and `import triton` gives Naiad."""
    code = (
        "import pickle, sys, triton\n"
        "def twice(x): return 2 * x\n"
        "print('argv', sys.argv)\n"
        "print('from', triton.__file__)\n"
        "print('twice', pickle.loads(pickle.dumps(twice))(21), __name__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "naiad.run", "-c", code, "a", "b"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert lines["argv"] == "['-c', 'a', 'b']"
    assert Path(lines["from"]).parent == NAIAD_DIR / "triton"
    assert lines["twice"] == "42 __main__"


def test_a_missing_script_is_a_clear_error():
    done = subprocess.run(
        [sys.executable, "-m", "naiad.run", "no_such_program.py"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 2
    assert "can't open file 'no_such_program.py'" in done.stderr
    assert "Traceback" not in done.stderr
