"""The README demo (examples/run_all.py) choosing its device: the CPU here (no GPU), said in its
summary; and its round trip of each launch's host memory (`OnGpu`), which on a GPU machine takes
the examples' host tensors to the device, checked here with the copies made in host memory:
views and aliases keep their meaning, results come back, and the examples still pass. The same
demo on a GPU is tests/gpu/test_examples_gpu.py's."""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import naiad
import naiad.language as tl
from naiad import knobs
from naiad.tools.tensor_descriptor import TensorDescriptor

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _load(stem: str):
    """A fresh copy of an example: its kernels have never launched (an earlier launch on host
    tensors would have prepared the hot path for them, which the round trip does not see; the
    demo installs it before any launch)."""
    name = f"run_all_devices_{stem}"
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{stem}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


run_all = _load("run_all")


@pytest.fixture(autouse=True)
def compiled():
    with knobs.override(NAIAD_BACKEND="cpu"):
        yield


@naiad.jit
def shift_add(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask) + 1.0, mask=mask)


@naiad.jit
def double_tiles(desc, BM: tl.constexpr, BN: tl.constexpr):
    pm = tl.program_id(0)
    desc.store([pm * BM, 0], desc.load([pm * BM, 0]) * 2)


def test_without_a_gpu_the_demo_runs_on_the_cpu_and_says_so(capsys):
    assert run_all.gpu_name() is None
    assert run_all.main(["-q", "-k", "04"]) == 0
    out = capsys.readouterr().out
    assert "1/1 passed" in out and "device: CPU" in out


def test_views_and_aliases_make_one_round_trip():
    """Two views of one storage (overlapping, as a kernel may read what it writes) share one
    copy, and only the kernel's writes change the host memory."""
    rng = np.random.default_rng(4)
    storage = torch.from_numpy(rng.standard_normal(40).astype(np.float32))
    before = storage.clone()
    with run_all.OnGpu(device="cpu"):
        shift_add[(1,)](storage[3:20], storage[5:22], 17, BLOCK=32)
    expected = before.clone()
    expected[5:22] = before[3:20] + 1  # the loads happen before the stores in one program
    assert torch.equal(storage, expected)


def test_numpy_arrays_and_descriptors_come_back():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((48, 16)).astype(np.float16)
    tiles = a.copy()
    with run_all.OnGpu(device="cpu"):
        double_tiles[(3,)](TensorDescriptor.from_tensor(tiles, [16, 16]), BM=16, BN=16)
        out = np.full(30, np.nan, np.float32)
        x = rng.standard_normal(30).astype(np.float32)
        shift_add[(1,)](x, out, 30, BLOCK=32)
    np.testing.assert_array_equal(tiles, a * np.float16(2))
    np.testing.assert_array_equal(out, x + np.float32(1))


@pytest.mark.parametrize("stem", ["01_vector_add", "04_low_memory_dropout", "05_layer_norm"])
def test_the_examples_pass_around_copied_memory(stem, monkeypatch):
    """Host tensors and arrays, autograd's saved tensors, views of a reshaped input: each
    example's own checks pass with every launch's memory copied there and back."""
    copies = []
    original = run_all._DeviceCopies.copy_back
    monkeypatch.setattr(
        run_all._DeviceCopies, "copy_back", lambda self: copies.append(len(self.copies))
        or original(self)
    )  # fmt: skip
    with run_all.OnGpu(device="cpu"):
        assert _load(stem).main()
    assert copies and all(count >= 1 for count in copies)
