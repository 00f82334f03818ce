"""Run every tutorial example in order and print a summary: `python examples/run_all.py`.

Each example is one of Triton's tutorials (`python/tutorials/NN-*.py`): 01-06 with its kernels
unchanged but for the imports, 07 and later with kernels of Naiad's own showing the same thing;
each is checked against a float64 NumPy reference. Exit status 0 when all pass.
Options: `-k NAME` runs only the examples whose file name contains NAME; `-q` hides the examples'
own lines; `--cpu` keeps the kernels on the CPU when a GPU is present.

The examples make their tensors on the active driver's device, as Triton's tutorials do
(`DEVICE = triton.runtime.driver.active.get_active_torch_device()`): where the machine has an
NVIDIA GPU (torch sees it and Naiad's CUDA driver, the `cuda` extra, works), they are CUDA
tensors and the kernels run compiled for that GPU; `--cpu` selects the CPU driver before the
examples are imported. Elsewhere the tensors are CPU tensors and the kernels run compiled for
this machine's CPU (`NAIAD_BACKEND=cpu`, the default here); `NAIAD_BACKEND=interpreter` runs
them in the NumPy interpreter instead, on any machine. The summary says which device ran them.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import os
import platform
import sys
import time
import traceback
from pathlib import Path

EXAMPLES_DIR = Path(__file__).resolve().parent


def example_paths() -> list[Path]:
    """The example files, in tutorial order: `01_vector_add.py`, `02_fused_softmax.py`, ..."""
    return sorted(p for p in EXAMPLES_DIR.glob("[0-9][0-9]*_*.py"))


def load(path: Path):
    """Import an example file as a module (its name starts with a digit, so not by `import`)."""
    name = f"naiad_example_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class LaunchCounter:
    """Counts kernel launches, and those the NumPy interpreter ran, while examples run.

    Every `@naiad.jit` launch goes through `JITFunction.run`; an interpreted one calls the
    interpreter's `run_grid`. Counting both says which executor really ran the kernels.
    """

    def __init__(self):
        self.launches = self.interpreted = 0
        self._undo = []

    def __enter__(self):
        from naiad.runtime import jit

        def wrap(owner, attr, counter):
            original = getattr(owner, attr)

            def counted(*args, **kwargs):
                setattr(self, counter, getattr(self, counter) + 1)
                return original(*args, **kwargs)

            setattr(owner, attr, counted)
            self._undo.append((owner, attr, original))

        wrap(jit.JITFunction, "run", "launches")
        if hasattr(jit, "run_grid"):
            wrap(jit, "run_grid", "interpreted")
        return self

    def __exit__(self, *exc):
        for owner, attr, original in reversed(self._undo):
            setattr(owner, attr, original)

    def executor(self) -> str:
        compiled = self.launches - self.interpreted
        if self.launches == 0:
            return "none (no kernel launched)"
        if compiled == 0:
            return "interpreter (NumPy)"
        if self.interpreted == 0:
            return "compiled back end"
        return f"mixed: compiled back end ({compiled}) and interpreter (NumPy) ({self.interpreted})"


def select_device(cpu: bool):
    """The torch device the examples make their tensors on: the active driver's (Triton's
    `driver.active.get_active_torch_device()`, which the examples ask when they are imported).
    `cpu` selects the CPU driver first; so does a CUDA driver without a CUDA build of torch,
    whose tensors could not be made."""
    import torch

    from naiad.runtime import driver

    if cpu or (driver.active.backend == "cuda" and not torch.cuda.is_available()):
        driver.active.set(driver.CpuDriver())
    return driver.active.get_active_torch_device()


def device_description(device) -> str:
    """Where the examples' tensors live: "GPU (cuda:0, NVIDIA H100 ...)" or "CPU"."""
    if device.type == "cuda":
        import torch

        return f"GPU ({device}, {torch.cuda.get_device_name(device)})"
    return "CPU"


def host_description() -> str:
    import numpy

    import naiad

    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count()
    parts = [f"Naiad {naiad.__version__}", f"{platform.machine()} CPU, {cores} cores",
             f"Python {platform.python_version()}", f"NumPy {numpy.__version__}"]
    try:
        import torch

        parts.append(f"torch {torch.__version__}")
    except ImportError:
        pass
    return " · ".join(parts)


def run_one(path: Path, quiet: bool) -> dict:
    row = {"name": path.stem, "ok": False, "max_err": None, "rel_err": None, "detail": ""}
    start = time.perf_counter()
    with LaunchCounter() as counter:
        try:
            out = io.StringIO()
            with contextlib.redirect_stdout(out) if quiet else contextlib.nullcontext():
                result = load(path).main() or {}
            row.update(ok=True, max_err=result.get("max_err"), rel_err=result.get("rel_err"))
        except Exception as exc:
            row["detail"] = f"{type(exc).__name__}: {exc}".splitlines()[0]
            traceback.print_exc()
    row.update(seconds=time.perf_counter() - start, launches=counter.launches,
               executor=counter.executor())
    return row


def summary(rows: list[dict], total: float) -> str:
    def num(x):
        return "-" if x is None else f"{x:.1e}"

    header = ("example", "result", "max err", "rel err", "launches", "time")
    lines = [(r["name"], "ok" if r["ok"] else "FAILED", num(r["max_err"]), num(r["rel_err"]),
              str(r["launches"]), f"{r['seconds']:.2f} s") for r in rows]
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(header)]

    def fmt(cells):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in
                         enumerate(zip(cells, widths)))

    rule = "-" * len(fmt(header))
    passed = sum(r["ok"] for r in rows)
    out = [rule, fmt(header), rule, *map(fmt, lines), rule,
           f"{passed}/{len(rows)} passed in {total:.1f} s"]
    out += [f"  {r['name']}: {r['detail']}" for r in rows if not r["ok"]]
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", dest="select", default="", help="run only examples matching this")
    parser.add_argument("-q", dest="quiet", action="store_true", help="hide the examples' lines")
    parser.add_argument("--cpu", action="store_true", help="run on the CPU even with a GPU")
    args = parser.parse_args(argv)
    os.environ.setdefault("NAIAD_BACKEND", "cpu")

    from naiad.runtime import driver

    previous = driver.active.get()
    try:
        device = select_device(args.cpu)
        paths = [p for p in example_paths() if args.select in p.stem]
        print(f"Naiad tutorials: {len(paths)} examples · {host_description()}")
        start = time.perf_counter()
        rows = [run_one(p, args.quiet) for p in paths]
        total = time.perf_counter() - start
    finally:  # a caller in the same process (a test) keeps its own driver
        driver.active.set(previous)
    executors = sorted({r["executor"] for r in rows if r["launches"]})
    print(summary(rows, total))
    print(f"executor: {', '.join(executors) or 'none'} "
          f"({sum(r['launches'] for r in rows)} kernel launches)")
    print(f"device: {device_description(device)}")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
