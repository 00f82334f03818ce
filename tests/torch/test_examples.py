"""examples/pytorch/ run as a user runs them (each in its own process) and print `ok`."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "pytorch"


@pytest.mark.full
@pytest.mark.parametrize("name", ["custom_op", "wrap_triton", "inductor_cpu", "llama_ops"])
def test_example_runs(name):
    env = dict(os.environ)
    env.pop("NAIAD_INTERPRET", None)
    env.pop("NAIAD_BACKEND", None)  # the tests' interpreter default: run as users do
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    assert f"{name}: ok" in done.stdout
