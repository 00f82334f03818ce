"""Triton's knobs of NVIDIA's tools (`triton.knobs.nvidia.ptxas`, `.nvdisasm`, `.cuobjdump`,
`.ptxas_blackwell`): a tool's path and release, for programs and tests that run NVIDIA's tools
on what was compiled (ptxas on a kernel's PTX, nvdisasm on its cubin).

    tool = triton.knobs.nvidia.nvdisasm       # NvidiaTool(path=..., version="13.5")
    subprocess.run([tool.path, "-g", cubin_file])

Naiad compiles without them (its PTX is linked by the CUDA driver or nvJitLink), so nothing in
Naiad reads these knobs. A tool is `TRITON_<TOOL>_PATH` (TRITON_PTXAS_PATH, ...) where that
runs, else the one of this interpreter's `nvidia-*` wheels (nvidia-cuda-nvcc has ptxas and
nvdisasm), else the one on PATH; a tool found nowhere is a RuntimeError when read.
"""

from __future__ import annotations

import functools
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass

from .knob_kinds import env_base


@dataclass(frozen=True)
class NvidiaTool:
    """A tool and its release (`ptxas --version`'s "release 13.5")."""

    path: str
    version: str

    @staticmethod
    @functools.lru_cache
    def from_path(path: str) -> NvidiaTool | None:
        """The tool at `path`, or None where it does not run or names no release."""
        try:
            done = subprocess.run(
                [path, "--version"], capture_output=True, text=True, timeout=60, check=True
            )
        except (OSError, subprocess.SubprocessError):
            return None
        match = re.search(r"release (\d+\.\d+)", done.stdout + done.stderr)
        return None if match is None else NvidiaTool(path, match.group(1))


def installed_tool(binary: str) -> str | None:
    """`binary` from an `nvidia-*` wheel of this interpreter (the newest, by folder name),
    else from PATH."""
    for entry in sys.path:
        found = sorted(pathlib.Path(entry or ".").glob(f"nvidia/*/bin/{binary}"))
        if found:
            return str(found[-1])
    return shutil.which(binary)


class env_nvidia_tool(env_base):
    """An NVIDIA tool's knob: set (or its variable) to a path, read as an NvidiaTool; where
    the path given does not run, the installed tool is taken, as Triton falls back to its
    own. `installed` names the binary to look for when it is not `binary` (ptxas-blackwell:
    CUDA 13's ptxas compiles for Blackwell)."""

    def __init__(self, binary: str, installed: str | None = None) -> None:
        exe = sysconfig.get_config_var("EXE") or ""
        self.binary = binary + exe
        self.installed = (installed or binary) + exe
        super().__init__(f"TRITON_{binary.upper().replace('-', '_')}_PATH")

    def get(self) -> NvidiaTool:
        return self.transform(self.text())

    def transform(self, path) -> NvidiaTool:
        for candidate in (path, installed_tool(self.installed)):
            tool = NvidiaTool.from_path(str(candidate)) if candidate else None
            if tool is not None:
                return tool
        raise RuntimeError(
            f"{self.binary} not found: set {self.key}, or pip install nvidia-cuda-nvcc"
        )
