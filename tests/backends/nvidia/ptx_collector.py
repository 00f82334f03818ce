"""A pytest plugin that writes the PTX of one specialization of every kernel a test run launches.

    NAIAD_PTX_COLLECT_DIR=DIR python -m pytest tests/language -p ptx_collector -k interpreter ...

Before a launch of a kernel not seen yet, the kernel is compiled with the launch's arguments for
each target of `TARGETS` through `kernel.warmup(..., target=...)`, and its PTX is written to
`DIR/<module>.<kernel>.<arch>.ptx`. A launch the interpreter refuses (a kernel written wrong on
purpose) does not count: the next launch of that kernel is tried instead; a kernel the
interpreter runs but the compiler refuses is recorded in `DIR/report.json` with the error's
first line.

test_ptxas_every_kernel.py runs it in a subprocess and assembles the files with ptxas.
"""

from __future__ import annotations

import json
import os
import pathlib

from naiad.runtime.jit import JITFunction

TARGETS = ("cuda:sm_80", "cuda:sm_90a")


class PtxCollector:
    """The plugin's state: the kernels done and the failures."""

    def __init__(self, directory: pathlib.Path):
        self.directory = directory
        self.done: set[str] = set()
        self.failures: dict[str, str] = {}
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
        """{arch: PTX} of this launch, or the first line of the compiler's error."""
        texts = {}
        for target in TARGETS:
            try:
                compiled = kernel.warmup(*args, grid=grid, target=target, **kwargs)
            except Exception as error:  # every failure is the report's subject
                lines = str(error).strip().splitlines() or [type(error).__name__]
                return f"{target}: {type(error).__name__}: {lines[0][-200:]}"
            texts[target.split(":")[1]] = compiled.asm["ptx"]
        return texts

    def record(self, name: str, outcome: dict | str) -> None:
        if isinstance(outcome, str):
            self.failures[name] = outcome
            return
        self.failures.pop(name, None)
        self.done.add(name)
        for arch, text in outcome.items():
            (self.directory / f"{name}.{arch}.ptx").write_text(text)

    def pytest_unconfigure(self, config):
        JITFunction.run = self._run
        report = {"kernels": sorted(self.done), "failures": self.failures}
        (self.directory / "report.json").write_text(json.dumps(report, indent=1))


def pytest_configure(config):
    directory = os.environ.get("NAIAD_PTX_COLLECT_DIR")
    if directory:
        plugin = PtxCollector(pathlib.Path(directory))
        plugin.install()
        config.pluginmanager.register(plugin, "naiad-ptx-collector")
