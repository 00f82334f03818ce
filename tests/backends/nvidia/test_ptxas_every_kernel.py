"""One specialization of every kernel the language tests launch assembles with ptxas, for sm_80
and for sm_90a, on a machine without a GPU (what CI checks for the NVIDIA back end).

The language tests run once more, in the interpreter, in a subprocess with the ptx_collector.py
plugin: before the first launch of each kernel that the interpreter accepts, the kernel is
compiled with that launch's arguments for both targets (TTIR -> TTGIR -> LLVM IR -> PTX, and the
cubin where nvJitLink is present), and each PTX is then given to NVIDIA's assembler.

Cost, measured on the 2-core CI machine: the whole check takes about 45 s (133 kernels: 40 s of
interpreter runs and compiles, 5 s of ptxas), which the default tier affords (the suite takes
~7 min of its 20), so every kernel is checked by default rather than a slice.
"""

import json
import os
import pathlib
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from test_toolchain import PTXAS, needs_libdevice, needs_ptxas

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]
ARCHES = ("sm_80", "sm_90a")

pytestmark = [needs_ptxas, needs_libdevice]


@pytest.fixture(scope="module")
def collected(tmp_path_factory) -> pathlib.Path:
    """The directory of PTX files and report.json written by the collector's run."""
    directory = tmp_path_factory.mktemp("ptx")
    python_path = os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "NAIAD_PTX_COLLECT_DIR": str(directory), "PYTHONPATH": python_path}
    command = [
        sys.executable,
        "-m",
        "pytest",
        "tests/language",
        "-q",
        "-p",
        "no:cacheprovider",
        "-n",  # one process: the collector writes one report
        "0",
        "-p",
        "ptx_collector",
        # the two statistics tests run one program of 2**17 elements: ptxas takes minutes
        "-k",
        "interpreter and not rand_is_uniform and not randn_is_normal",
    ]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return directory


def test_every_kernel_compiles(collected):
    report = json.loads((collected / "report.json").read_text())
    assert report["failures"] == {}
    assert len(report["kernels"]) > 100  # the language tests launch ~130 kernels
    # the language's refusals on one target: a Hopper-only descriptor reduction on sm_80
    assert set(report["refused"]) <= {"half_extremes.race_into_block.sm_80"}


def _assemble(source: pathlib.Path, arch: str) -> str | None:
    """ptxas's complaint about `source` for `arch`, None when it assembles."""
    command = [PTXAS, f"--gpu-name={arch}", str(source), "-o", os.devnull]
    done = subprocess.run(command, capture_output=True, text=True)
    return None if done.returncode == 0 else f"{source.name}: {done.stderr.strip()[:500]}"


@pytest.mark.parametrize("arch", ARCHES)
def test_ptxas_assembles_every_kernel(collected, arch):
    report = json.loads((collected / "report.json").read_text())
    names = [name for name in report["kernels"] if f"{name}.{arch}" not in report["refused"]]
    sources = [collected / f"{name}.{arch}.ptx" for name in names]
    assert sources and all(source.is_file() for source in sources)
    with ThreadPoolExecutor(max_workers=2) as pool:
        errors = [e for e in pool.map(lambda s: _assemble(s, arch), sources) if e]
    assert not errors, "\n".join(errors)
