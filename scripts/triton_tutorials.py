"""Run Triton's tutorials (python/tutorials/NN-*.py of a Triton checkout) on Naiad, unmodified.

    python scripts/triton_tutorials.py TRITON_CHECKOUT [--only 01,03] [--timeout 600]
        [--full-benchmarks] [--log-dir DIR]

Nothing is fetched: TRITON_CHECKOUT is a checkout (or export) of Triton's repository. Each
tutorial runs in its own process through Naiad's switch (`naiad.install_as_triton()`, then the
file as `__main__`), compiled for this machine's CPU unless NAIAD_BACKEND says otherwise. Its
correctness checks are the tutorial's own (asserts, `torch.allclose`, printed differences);
a benchmark that fails after them (a CUDA-only stream, say) is reported beside "passed".
On a CPU the performance sweeps would take hours, so unless --full-benchmarks is given each
`perf_report` benchmark measures only the first point of its x axis, and only the lines of the
tutorial's own kernels (providers named `triton...`, which Naiad compiles): the reference
lines are torch's, and torch's CPU fp16 matmul (tutorials 03 and 08's "cuBLAS" line) takes
minutes a call (240 s for one 128x8192x8192 product here). The harness replaces
`Benchmark.x_vals` and the line lists, and draws no plot, which would need matplotlib: the
tutorial's file is not edited. The table printed
last gives, per tutorial, passed / failed (with the first line of the error) / timed out.

A tutorial whose `__main__` does nothing without a GPU that has some feature (10 checks for
block-scaled tensor cores, then prints that it needs them) also gets a "kernels" row where this
machine has no CUDA device: the file is imported as a module, not run, and its own check
functions are called at sizes a CPU finishes (KERNEL_CHECKS: 10's NVIDIA and AMD kernels),
with every `device="cuda"` of a torch call made "cpu" and the tutorial's `torch.cuda` queries
answered as KERNEL_CHECKS says.
The values are still checked by the tutorial's own code against its own reference.

Some tutorials print a check's outcome instead of raising (09 and 11 print a red cross, U+274C,
for a failed `torch.allclose`; 03 prints one where Triton and torch differ): a run that prints
one fails, its detail naming the first such check and how many there were, though the process
exits 0. `--log-dir DIR` writes each run's stdout and stderr to DIR/<tutorial>.log (the
kernel-checks run to <tutorial>.kernels.log), a run that timed out with what it had printed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

_HARNESS = """
import runpy, sys
import naiad
naiad.install_as_triton()
from naiad.testing import report
original = report.Mark.run
def measured(self, *args, **kwargs):
    if {short!r}:
        for bench in ([self.benchmarks] if isinstance(self.benchmarks, report.Benchmark)
                      else self.benchmarks):
            bench.x_vals = list(bench.x_vals)[:1]
            kept = [i for i, v in enumerate(bench.line_vals) if "triton" in str(v).lower()]
            if kept:
                bench.line_vals = [bench.line_vals[i] for i in kept]
                bench.line_names = [bench.line_names[i] for i in kept]
                if bench.styles:
                    bench.styles = [bench.styles[i] for i in kept]
        kwargs["show_plots"] = False
    try:
        return original(self, *args, **kwargs)
    except Exception as error:  # the checks before it passed; the benchmark is reported
        first = (str(error).splitlines() or [""])[0]
        print(f"BENCHMARK-ERROR: {{type(error).__name__}}: {{first}}", file=sys.stderr)
report.Mark.run = measured
sys.argv = [{path!r}]
runpy.run_path({path!r}, run_name="__main__")
"""

# Tutorial number -> (its check functions' calls, module functions that ask torch.cuda and the
# answer each gives). Tutorial 10: the NVIDIA kernel in its four formats on a 2 x 2 grid of its
# 128 x 256 tiles, two steps along K (fp8: four); the AMD (CDNA4) kernel with either scale
# shuffle, a 2 x 2 grid of 128 x 128 tiles, two steps. `is_rubin` asks for the capability.
KERNEL_CHECKS = {
    "10": (
        [
            ("validate_block_scaled", (256, 512, 512, form))
            for form in ("mxfp4", "nvfp4", "mxfp8", "mixed")
        ]
        + [("validate_block_scaled_amd", (256, 256, 512, "mxfp4", nonk)) for nonk in (16, 32)],
        {"is_rubin": False},
    ),
}

_KERNEL_HARNESS = """
import importlib.util, time
import naiad
naiad.install_as_triton()
import torch
from torch.overrides import TorchFunctionMode

class CudaOnCpu(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {{}})
        if str(kwargs.get("device", "")).startswith("cuda"):
            kwargs["device"] = "cpu"
        return func(*args, **kwargs)

spec = importlib.util.spec_from_file_location("tutorial", {path!r})
tutorial = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tutorial)
for name, answer in {answers!r}.items():
    setattr(tutorial, name, lambda answer=answer: answer)
with CudaOnCpu():
    for function, args in {calls!r}:
        torch.manual_seed(42)
        start = time.perf_counter()
        getattr(tutorial, function)(*args)
        print(f"{{function}}{{args}}: {{time.perf_counter() - start:.1f}} s", flush=True)
"""


FAILED_CHECK = "\u274c"  # the red cross tutorials print for a failed check


def _outcome(command: list, cwd: Path, timeout: float, log: Path | None) -> tuple[str, str]:
    """('passed' | 'failed' | 'timed out', detail) for one process of the harness; its output
    written to `log` where one is given."""
    env = {
        **os.environ,
        "NAIAD_BACKEND": os.environ.get("NAIAD_BACKEND", "cpu"),
        "MPLBACKEND": "Agg",
    }
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            env=env,
            capture_output=True,
            encoding="utf-8",
            errors="replace",
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as expired:
        _write_log(log, expired.stdout, expired.stderr, f"timed out after {timeout:.0f} s")
        return "timed out", f"after {timeout:.0f} s"
    _write_log(log, done.stdout, done.stderr, f"exit status {done.returncode}")
    if done.returncode == 0:
        crossed = failed_checks(done.stdout)
        if crossed:
            return "failed", f"{len(crossed)} check(s) printed {FAILED_CHECK}, first: {crossed[0]}"
        benchmark = [line for line in done.stderr.splitlines() if line.startswith("BENCHMARK-")]
        return "passed", benchmark[0][:240] if benchmark else ""
    lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
    return "failed", lines[-1][:240] if lines else f"exit status {done.returncode}"


def failed_checks(stdout: str) -> list[str]:
    """The checks a tutorial printed as failed: each line with the red cross, as last drawn
    (a tutorial rewrites its line with a carriage return: `label: ...` then `label: X`)."""
    lines = (line.rsplit("\r", 1)[-1].strip() for line in stdout.splitlines())
    return [line[:200] for line in lines if FAILED_CHECK in line]


def _write_log(log: Path | None, stdout, stderr, status: str) -> None:
    if log is None:
        return
    texts = [
        t.decode(errors="replace") if isinstance(t, bytes) else t or "" for t in (stdout, stderr)
    ]
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(f"== stdout\n{texts[0]}\n== stderr\n{texts[1]}\n== {status}\n", "utf-8")


def run_one(path: Path, timeout: float, short: bool, log: Path | None = None) -> tuple[str, str]:
    """('passed' | 'failed' | 'timed out', detail) for one tutorial run as `__main__`."""
    code = _HARNESS.format(path=str(path), short=short)
    return _outcome([sys.executable, "-c", code], path.parent, timeout, log)


def run_kernel_checks(path: Path, timeout: float, log: Path | None = None) -> tuple[str, str]:
    """The tutorial's own checks of its kernels (KERNEL_CHECKS), its devices made the CPU."""
    calls, answers = KERNEL_CHECKS[path.name[:2]]
    code = _KERNEL_HARNESS.format(path=str(path), calls=calls, answers=answers)
    return _outcome([sys.executable, "-c", code], path.parent, timeout, log)


def torch_has_cuda() -> bool:
    """Whether torch sees a CUDA device here (asked in a child: the harness imports no torch)."""
    probe = "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"
    return subprocess.run([sys.executable, "-c", probe]).returncode == 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path)
    parser.add_argument("--only", default="", help="comma-separated tutorial numbers")
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--full-benchmarks", action="store_true")
    parser.add_argument("--log-dir", type=Path, help="write each run's output to DIR/NN-*.log")
    options = parser.parse_args(argv)
    logs = options.log_dir.resolve() if options.log_dir else None
    folder = options.checkout.resolve() / "python" / "tutorials"  # each runs in its folder
    wanted = {n.strip() for n in options.only.split(",") if n.strip()}
    results = []
    for path in sorted(folder.glob("[0-9][0-9]-*.py")):
        if wanted and path.name[:2] not in wanted:
            continue
        log = logs / f"{path.stem}.log" if logs else None
        outcome, detail = run_one(path, options.timeout, not options.full_benchmarks, log)
        results.append((path.name, outcome, detail))
        print(f"{path.name:40} {outcome:10} {detail}", flush=True)
        if path.name[:2] in KERNEL_CHECKS and not torch_has_cuda():
            log = logs / f"{path.stem}.kernels.log" if logs else None
            outcome, detail = run_kernel_checks(path, options.timeout, log)
            name = f"{path.name} (kernels)"
            results.append((name, outcome, detail))
            print(f"{name:40} {outcome:10} {detail}", flush=True)
    passed = sum(outcome == "passed" for _, outcome, _ in results)
    print(f"{passed} of {len(results)} passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
