"""Run every tutorial example in order and print a summary: `python examples/run_all.py`.

Each example is one of Triton's tutorials (`python/tutorials/0X-*.py`) with its kernels unchanged
but for the imports, checked against a float64 NumPy reference. Exit status 0 when all pass.
Options: `-k NAME` runs only the examples whose file name contains NAME; `-q` hides the examples'
own lines; `--cpu` keeps the kernels on the CPU when a GPU is present.

Where the machine has an NVIDIA GPU (torch sees it and Naiad's CUDA driver, the `cuda` extra,
works), the kernels run compiled for that GPU: the examples make their tensors in host memory,
so each launch's host tensors and arrays travel to the GPU and back (`OnGpu`), and the same
checks run on the results. Elsewhere they run compiled for this machine's CPU
(`NAIAD_BACKEND=cpu`, the default here); `NAIAD_BACKEND=interpreter` runs them in the NumPy
interpreter instead, on any machine. The summary says which device ran them.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
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


def gpu_name() -> str | None:
    """The GPU the kernels run on ("cuda:0, NVIDIA H100 ..."), or None: no GPU that both torch
    and Naiad's CUDA driver (cuda-bindings) can use, or the interpreter is chosen."""
    from naiad import knobs

    if knobs.backend.get().strip().lower() == "interpreter" or knobs.interpret.get():
        return None
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    from naiad.backends.nvidia import driver

    if not driver.available():
        return None
    return f"cuda:0, {torch.cuda.get_device_name(0)}"


class OnGpu:
    """While examples run, every launch's host memory goes to the GPU: torch CPU tensors, NumPy
    arrays and the tensors of host descriptors become CUDA tensors over a device copy of their
    whole storage (so views of one storage, and aliased arguments, stay views of one buffer),
    the kernel runs there, and after it (synchronized) each storage is copied back. A launch
    on CUDA tensors runs compiled for their GPU, so the examples' host code and checks run
    unchanged around kernels that ran on the device. (`device="cpu"` makes the same copies in
    host memory: the tests check the round trip so on machines without a GPU.)"""

    def __init__(self, device: str = "cuda"):
        self.device = device
        self._undo = None

    def __enter__(self):
        from naiad.runtime import jit

        original = jit.JITFunction.run

        def run_on_gpu(kernel, *args, grid, warmup=False, target=None, **kwargs):
            if warmup:
                return original(kernel, *args, grid=grid, warmup=True, target=target, **kwargs)
            copies = _DeviceCopies(self.device)
            args = [copies.move(a) for a in args]
            kwargs = {name: copies.move(value) for name, value in kwargs.items()}
            try:
                return original(kernel, *args, grid=grid, target=target, **kwargs)
            finally:
                copies.copy_back()

        jit.JITFunction.run = run_on_gpu
        self._undo = (jit.JITFunction, original)
        return self

    def __exit__(self, *exc):
        owner, original = self._undo
        owner.run = original


class _DeviceCopies:
    """The device copies of one launch's host storages, by storage address."""

    def __init__(self, device: str):
        import torch

        self.torch, self.device = torch, device
        self.copies = {}  # storage address -> (host bytes, device bytes)

    def move(self, value):
        """`value` on the GPU if it is host memory a kernel reads (else `value` itself)."""
        from naiad.tools.tensor_descriptor import TensorDescriptor

        torch = self.torch
        if isinstance(value, TensorDescriptor):
            return dataclasses.replace(value, base=self.move(value.base))
        if type(value).__module__ == "numpy" and hasattr(value, "__array_interface__"):
            try:
                value = torch.from_numpy(value)
            except TypeError:  # a dtype torch lacks: left to the CPU
                return value
        if not isinstance(value, torch.Tensor) or value.device.type != "cpu":
            return value
        storage = value.untyped_storage()
        if storage.data_ptr() not in self.copies:
            host = torch.empty(0, dtype=torch.uint8).set_(storage)
            self.copies[storage.data_ptr()] = (host, host.to(self.device, copy=True))
        device = self.copies[storage.data_ptr()][1].untyped_storage()
        moved = torch.empty(0, dtype=value.dtype, device=self.device)
        return moved.set_(device, value.storage_offset(), value.size(), value.stride())

    def copy_back(self) -> None:
        if self.device == "cuda":
            self.torch.cuda.synchronize()
        for host, device in self.copies.values():
            host.copy_(device)


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

    gpu = None if args.cpu else gpu_name()
    paths = [p for p in example_paths() if args.select in p.stem]
    print(f"Naiad tutorials: {len(paths)} examples · {host_description()}")
    start = time.perf_counter()
    with OnGpu() if gpu else contextlib.nullcontext():
        rows = [run_one(p, args.quiet) for p in paths]
    total = time.perf_counter() - start
    executors = sorted({r["executor"] for r in rows if r["launches"]})
    print(summary(rows, total))
    print(f"executor: {', '.join(executors) or 'none'} "
          f"({sum(r['launches'] for r in rows)} kernel launches)")
    print(f"device: GPU ({gpu}; host tensors copied there and back around each launch)"
          if gpu else "device: CPU")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
