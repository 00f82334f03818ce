"""A pytest plugin that writes the PTX of one specialization of every kernel a test run launches.

    NAIAD_PTX_COLLECT_DIR=DIR python -m pytest tests/language -p ptx_collector -k interpreter ...

Before a launch of a kernel not seen yet, the kernel is compiled with the launch's arguments for
each target of `TARGETS` through `kernel.warmup(..., target=...)`, and its PTX is written to
`DIR/<module>.<kernel>.<arch>.ptx`. A launch the interpreter refuses (a kernel written wrong on
purpose) does not count: the next launch of that kernel is tried instead; a kernel the
interpreter runs but the compiler refuses is recorded in `DIR/report.json` with the error's
first line. A kernel the language's rules refuse on one target (a `KernelValueError`: a
descriptor's fp16 atomic_max needs Hopper's bulk tensor reduction, which sm_80 lacks, and
Triton refuses it there too) counts for the targets that take it, and `report.json` lists the
refusal apart (`refused`).

test_ptxas_every_kernel.py runs it in a subprocess and assembles the files with ptxas.
"""

from __future__ import annotations

import json
import os
import pathlib

from naiad.errors import KernelValueError
from naiad.runtime.jit import JITFunction

TARGETS = ("cuda:sm_80", "cuda:sm_90a")


class _Refusal(str):
    """The language's refusal of a kernel on one target (its error's first line)."""


def _first_line(error: Exception) -> str:
    lines = str(error).strip().splitlines() or [type(error).__name__]
    return lines[0][-200:]


class PtxCollector:
    """The plugin's state: the kernels done and the failures."""

    def __init__(self, directory: pathlib.Path):
        self.directory = directory
        self.done: set[str] = set()
        self.failures: dict[str, str] = {}
        self.refused: dict[str, str] = {}
        self._run = JITFunction.run

    def install(self) -> None:
        """Compile before every launch (JITFunction.run, restored at the end)."""
        collector = self

        def run(kernel, *args, grid, warmup=False, target=None, **kwargs):
            if warmup:
                return collector._run(
                    kernel, *args, grid=grid, warmup=True, target=target, **kwargs
                )
            name = f"{kernel.fn.__module__.split('.')[-1]}.{kernel.fn.__qualname__}"
            outcome = None
            if name not in collector.done:
                outcome = collector.compile(kernel, args, grid, kwargs)
            result = collector._run(kernel, *args, grid=grid, target=target, **kwargs)
            if outcome is not None:  # the interpreter ran it: the compile's outcome counts
                collector.record(name, outcome)
            return result

        JITFunction.run = run

    def compile(self, kernel, args, grid, kwargs) -> dict | str:
        """{arch: PTX, or the language's refusal on that target} of this launch, or the first
        line of the compiler's error."""
        texts = {}
        for target in TARGETS:
            arch = target.split(":")[1]
            try:
                compiled = kernel.warmup(*args, grid=grid, target=target, **kwargs)
            except KernelValueError as error:  # the target's rules refuse the kernel
                texts[arch] = _Refusal(_first_line(error))
                continue
            except Exception as error:  # every failure is the report's subject
                return f"{target}: {type(error).__name__}: {_first_line(error)}"
            texts[arch] = compiled.asm["ptx"]
        if all(isinstance(text, _Refusal) for text in texts.values()):
            return f"every target refuses it: {next(iter(texts.values()))}"
        return texts

    def record(self, name: str, outcome: dict | str) -> None:
        if isinstance(outcome, str):
            self.failures[name] = outcome
            return
        self.failures.pop(name, None)
        self.done.add(name)
        for arch, text in outcome.items():
            if isinstance(text, _Refusal):
                self.refused[f"{name}.{arch}"] = str(text)
            else:
                (self.directory / f"{name}.{arch}.ptx").write_text(text)

    def pytest_unconfigure(self, config):
        JITFunction.run = self._run
        report = {"kernels": sorted(self.done), "failures": self.failures, "refused": self.refused}
        (self.directory / "report.json").write_text(json.dumps(report, indent=1))


def pytest_configure(config):
    directory = os.environ.get("NAIAD_PTX_COLLECT_DIR")
    if directory:
        plugin = PtxCollector(pathlib.Path(directory))
        plugin.install()
        config.pluginmanager.register(plugin, "naiad-ptx-collector")
