"""Kernels pickle by reference (runtime/pickling.py): unpickled as the object their module
defines, in this process or in another that never imported the module (loaded from its file),
even after a library stripped the kernel's function and globals for pickling, as torch's
Inductor does before sending a kernel back from a compile worker."""

import copy
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pickled_kernels
import pytest

import naiad
import naiad.language as tl


def test_a_kernel_and_its_decorators_unpickle_as_themselves():
    for kernel in (pickled_kernels.scale, pickled_kernels.tuned_scale):
        assert pickle.loads(pickle.dumps(kernel)) is kernel
    heuristics = pickled_kernels.tuned_scale.fn
    assert pickle.loads(pickle.dumps(heuristics)) is heuristics


def test_another_process_loads_the_module_from_its_file_and_launches_the_kernel():
    kernel = pickled_kernels.scale
    saved = (kernel.fn, kernel.__globals__, kernel.used_global_vals)
    kernel.fn = kernel.__globals__ = kernel.used_global_vals = None  # as Inductor strips it
    try:
        payload = pickle.dumps(kernel)
    finally:
        kernel.fn, kernel.__globals__, kernel.used_global_vals = saved
    receiver = textwrap.dedent(
        """
        import pickle, sys
        import numpy as np
        kernel = pickle.loads(sys.stdin.buffer.read())
        assert "pickled_kernels" in sys.modules and kernel.__name__ == "scale"
        x = np.random.default_rng(3).standard_normal(100).astype(np.float32)
        out = np.full(100, np.nan, np.float32)
        kernel[(2,)](x, out, 100, 2.5, BLOCK=64)
        print(np.array_equal(out, x * np.float32(2.5)))
        """
    )
    # The receiver's path does not hold the tests' folder: only the module's file leads to it.
    done = subprocess.run(
        [sys.executable, "-c", receiver],
        input=payload,
        capture_output=True,
        timeout=300,
        cwd=Path(pickled_kernels.__file__).parents[2],
        env={"NAIAD_BACKEND": "interpreter", "PATH": ""},
    )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    assert done.stdout.decode().strip() == "True"


def test_a_kernel_defined_in_a_function_cannot_be_unpickled():
    @naiad.jit
    def local_kernel(out_ptr):
        tl.store(out_ptr, 1.0)

    with pytest.raises(TypeError, match="defined inside a function"):
        pickle.loads(pickle.dumps(local_kernel))


def test_a_pickled_kernel_whose_definition_moved_is_refused(monkeypatch):
    payload = pickle.dumps(pickled_kernels.scale)
    moved = naiad.jit(pickled_kernels.tuned_scale.fn.fn.fn)  # another kernel under that name
    monkeypatch.setattr(pickled_kernels, "scale", moved)
    with pytest.raises(TypeError, match="no longer defines it"):
        pickle.loads(payload)


def test_a_library_launcher_over_a_kernel_copies_its_own_state():
    live = pickled_kernels.launched_scale
    live.compiled = ["config 1", "config 2"]
    saved = copy.deepcopy(live)
    payload = pickle.dumps(live)
    live.compiled = []  # the library releases them after autotuning; the copies keep theirs
    for kept in (saved, pickle.loads(payload)):
        assert kept is not live and kept.compiled == ["config 1", "config 2"]
        assert kept.fn is pickled_kernels.scale
