"""The two sides of a tutorial benchmark (bench/gpu/attention_backward.py,
persistent_matmul.py): Triton's own tutorial file run through Naiad and through Triton, each in
a process of its own, one after the other on the same GPU.

A benchmark script calls itself with `--side naiad` or `--side triton`; that process loads the
tutorial (`load_tutorial`: for Naiad, after `naiad.install_as_triton()`), measures, and prints
its results as one JSON line (a dict of rows), which `run_sides` collects. A row holds
`tflops` (None when its check failed) or `failure` (what raised).
"""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SIDES = ("naiad", "triton")


def load_tutorial(path: Path, side: str, text: str | None = None) -> types.ModuleType:
    """The tutorial at `path` (or its edited `text`, which must keep every kernel on the line
    the file has it: kernels read their source from the file) as a module, through `side`."""
    if side == "naiad":
        sys.path.insert(0, str(ROOT))
        import naiad

        naiad.install_as_triton()
    module = types.ModuleType(f"{path.stem.replace('-', '_')}_tutorial")
    module.__file__ = str(path)
    source = path.read_text() if text is None else text
    exec(compile(source, str(path), "exec"), module.__dict__)
    return module


def run_sides(script: str, arguments: list[str]) -> dict:
    """{side: rows} from `script --side SIDE arguments...` run for each side in turn."""
    results = {}
    for side in SIDES:
        command = [sys.executable, script, *arguments, "--side", side]
        done = subprocess.run(command, capture_output=True, text=True)
        sys.stderr.write(done.stderr[-4000:])
        try:
            results[side] = json.loads(done.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            print(f"{side}: no result (exit {done.returncode})\n{done.stdout[-2000:]}")
            results[side] = {}
    return results


def cell(row: dict | None) -> str:
    """A side's TFLOP/s, or what stopped it."""
    if row is None:
        return "-"
    if "failure" in row:
        return "ERROR"
    return "FAIL" if row["tflops"] is None else f"{row['tflops']:.0f}"


def ratio(ours: dict | None, theirs: dict | None) -> str:
    """Naiad / Triton, where both sides were timed."""
    if ours and theirs and ours.get("tflops") and theirs.get("tflops"):
        return f"{ours['tflops'] / theirs['tflops']:.2f}"
    return "-"


def write(out: Path | None, name: str, results: dict) -> None:
    if out:
        out.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(json.dumps(results, indent=1))
