"""Issue 18's second latency row: the wall time of a Triton tutorial's test at its smallest
shape, first call and an empty cache, through Naiad (its switch, default settings: small
launches tiered) against Triton's interpreter (TRITON_INTERPRET=1), one process a side,
alternated so that both meet the same load.

    .venv/bin/python bench/cpu/tutorial_wall.py TUTORIAL --triton-path SITE_PACKAGES
        [--select '64-128-2-1]'] [--rounds 5]

TUTORIAL is a tutorial file of Triton's repository (python/tutorials/06-fused-attention.py);
SITE_PACKAGES holds the installed Triton its side imports. The tutorial is copied as a test
module into a folder of its own beside a conftest.py that gives Triton's driver a CPU
(`get_active_torch_device()` answers torch's CPU device, the target is "cpu"), so that both
sides run the tutorial's tests unchanged on CPU tensors; `--select` is pytest's `-k`. Each run
prints its wall time (the process's, pytest's collection and the tutorial's imports included)
and its outcome line; each round the ratio Naiad / Triton; the end, the median ratio.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CONFTEST = '''import torch
import triton
from triton.backends.compiler import GPUTarget


class _CPU:
    """A driver whose device is the CPU (the tutorials ask the active driver for theirs)."""

    def get_active_torch_device(self):
        return torch.device("cpu")

    def get_current_target(self):
        return GPUTarget("cpu", 0, 0)


triton.runtime.driver.set_active(_CPU())
'''


def _prepare(tutorial: Path) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="naiad-tutorial-wall-"))
    shutil.copy(tutorial, folder / "test_tutorial.py")
    (folder / "conftest.py").write_text(CONFTEST)
    return folder


def _run(label: str, folder: Path, select: str, triton_path: str) -> tuple[float, str]:
    """One pytest process with an empty cache: (wall seconds, pytest's last line)."""
    caches = tempfile.mkdtemp(prefix=f"wall-{label}-")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NAIAD_", "TRITON_"))}
    env |= {"NAIAD_CACHE_DIR": caches, "TRITON_CACHE_DIR": caches}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [triton_path, env.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", select,
               str(folder / "test_tutorial.py")]  # fmt: skip
    if label == "naiad":
        command[1:3] = ["-m", "naiad.run", "-m", "pytest"]
    else:
        env["TRITON_INTERPRET"] = "1"
    start = time.monotonic()
    done = subprocess.run(command, env=env, cwd=folder, capture_output=True, text=True)
    spent = time.monotonic() - start
    shutil.rmtree(caches, ignore_errors=True)
    lines = done.stdout.strip().splitlines()
    return spent, lines[-1] if lines else done.stderr.strip()[-200:]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tutorial", type=Path)
    parser.add_argument("--triton-path", required=True)
    parser.add_argument("--select", default="64-128-2-1]")
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args(argv)
    folder = _prepare(options.tutorial.resolve())
    ratios = []
    for round_ in range(options.rounds):
        spent = {}
        for label in ("naiad", "triton") if round_ % 2 == 0 else ("triton", "naiad"):
            spent[label], outcome = _run(label, folder, options.select, options.triton_path)
            print(f"round {round_} {label}: {spent[label]:.2f} s ({outcome})", flush=True)
        ratios.append(spent["naiad"] / spent["triton"])
        print(f"round {round_} naiad / triton: {ratios[-1]:.2f}", flush=True)
    print(f"median naiad / triton over {len(ratios)} rounds: {statistics.median(ratios):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
