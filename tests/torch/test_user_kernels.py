"""Naiad kernels inside torch.compile: under the switch (`python -m naiad.run`, in a
subprocess) torch's own wrap_triton/triton_op take them and the compiled function matches
eager with no graph break; without it, naiad.torch's triton_op does the same in this process."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

PROGRAMS = Path(__file__).parent / "programs"

# The programs read torch's own mutation analysis, `identify_accessed_tensors` (the README's torch
# 2.13 has it; 2.11 had only `identify_mutated_tensors`).
from torch._higher_order_ops import triton_kernel_wrap  # noqa: E402

needs_access_analysis = pytest.mark.skipif(
    not hasattr(triton_kernel_wrap, "identify_accessed_tensors"),
    reason="this torch has no identify_accessed_tensors (the README installs torch 2.13)",
)


def run_program(name: str, *args: str, **environment: str) -> dict:
    """Run programs/`name` under the switch on the CPU back end (`environment` overrides the
    variables it is given); what it printed, `key: value` lines as a dict."""
    # Inductor compiles in the program's process: a pool of compile workers (each importing
    # torch and Naiad) would only add load to a small test machine; parallel_compile.py runs one.
    env = dict(
        os.environ,
        NAIAD_BACKEND="cpu",
        PYTHONPATH=str(PROGRAMS),
        TORCHINDUCTOR_COMPILE_THREADS=os.environ.get("TORCHINDUCTOR_COMPILE_THREADS", "1"),
    )
    env.update(environment)
    env.pop("NAIAD_INTERPRET", None)
    done = subprocess.run(
        [sys.executable, "-m", "naiad.run", str(PROGRAMS / name), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    return dict(line.split(": ", 1) for line in done.stdout.splitlines() if ": " in line)


# What programs/user_kernels.py prints when every check holds.
USER_KERNELS = {
    "forward": "True",
    "backward": "True",
    "graph breaks": "0",
    "eager": "True",
    "scale_kernel writes": (
        "out_ptr"
        if hasattr(triton_kernel_wrap, "identify_accessed_tensors")
        else "not analysed by this torch"
    ),
}


@pytest.mark.parametrize("backend", ["aot_eager", pytest.param("inductor", marks=pytest.mark.full)])
def test_kernels_launched_in_torch_compile_match_eager(backend):
    assert run_program("user_kernels.py", backend) == USER_KERNELS


@pytest.mark.full
@needs_access_analysis
def test_torch_finds_the_tensors_a_kernel_writes():
    """torch's mutation analysis reads Naiad's TTIR (`triton._C.libtriton.ir`): stores, atomics
    in a noinline callee, stores under a branch in a loop; torch.compile clones only those
    tensors (before, it warned and cloned every tensor argument)."""
    seen = run_program("mutations.py")
    assert seen == {
        "axpy analysis": "out_ptr | x_ptr,y_ptr",
        "scatter_sum analysis": "sums_ptr,table_ptr | index_ptr,src_ptr,table_ptr",
        "axpy matches eager": "True",
        "scatter_sum matches eager": "True",
        "cloned": "out_ptr ; sums_ptr,table_ptr",
        "assumed all mutated": "0",
    }
